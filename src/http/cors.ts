import cors, { type FastifyCorsOptions } from '@fastify/cors'
import type { FastifyInstance, FastifyRequest } from 'fastify'

// Which browser pages may read Burrow's answers. Keys are bearer tokens sent in a header or the
// body, never cookies, so no answer allows credentials. The public endpoints that SDKs call from
// web pages (capture, flag evaluation, remote config, surveys) allow the configured origins, by
// default any; the management and query API allows none unless origins are configured, so a
// page on another site cannot read it even with a key it somehow holds.

/** Where the browser SDK sends requests (posthog-js), whatever the site it runs on. */
const PUBLIC_PREFIXES = [
  '/e',
  '/i/v0/e',
  '/batch',
  '/capture',
  '/track',
  '/engage',
  '/s',
  '/decide',
  '/flags',
  '/array/',
  '/api/surveys',
  '/api/early_access_features',
]
/** Under `/flags`, only evaluation is public; local-evaluation definitions need a personal key. */
const NOT_PUBLIC = ['/flags/definitions']

/** True for the endpoints posthog-js calls from any site. */
export function isPublicPath(url: string): boolean {
  const path = url.split('?')[0] ?? ''
  if (NOT_PUBLIC.some((p) => path === p || path.startsWith(`${p}/`))) return false
  return PUBLIC_PREFIXES.some((p) =>
    p.endsWith('/') ? path.startsWith(p) : path === p || path.startsWith(`${p}/`),
  )
}

export interface CorsPolicy {
  /** origins allowed on the public endpoints; `*` allows any */
  publicOrigins: string[]
  /** origins allowed on everything else; empty allows none */
  apiOrigins: string[]
}

// `*` reflects the caller's origin, as PostHog's capture does; without credentials that grants
// exactly what a literal `*` would.
function originOption(origins: string[]): FastifyCorsOptions['origin'] {
  if (origins.includes('*')) return true
  return origins.length ? origins : false
}

/** Registers CORS on the root app, deciding per request by its path. */
export function registerCors(app: FastifyInstance, policy: CorsPolicy): void {
  const base = { credentials: false, maxAge: 86400 }
  const publicOptions = { ...base, origin: originOption(policy.publicOrigins) }
  const apiOptions = { ...base, origin: originOption(policy.apiOrigins) }
  app.register(cors, {
    delegator: (req: FastifyRequest, cb: (err: Error | null, options: FastifyCorsOptions) => void) =>
      cb(null, isPublicPath(req.url) ? publicOptions : apiOptions),
  })
}

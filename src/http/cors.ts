import type { FastifyInstance } from 'fastify'

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

/** Whether a page of `origin` may read an answer: any origin, some listed ones, or none. */
type OriginRule = 'any' | ReadonlySet<string> | 'none'

function originRule(origins: string[]): OriginRule {
  if (origins.includes('*')) return 'any'
  return origins.length ? new Set(origins) : 'none'
}

const KEY_IN_URL = /[?&]personal_api_key=/

/** The methods a preflight names as allowed (every endpoint's are among them). */
const PREFLIGHT_METHODS = 'GET,HEAD,POST,PUT,PATCH,DELETE'
/** How long a browser may cache a preflight's answer. */
const PREFLIGHT_MAX_AGE = '86400'

/**
 * Registers CORS on the root app, deciding per request by its path:
 * - every answer carries `Vary: Origin`;
 * - an allowed origin is echoed in `Access-Control-Allow-Origin` (`*` in a rule reflects the
 *   caller's origin, as PostHog's capture does: without credentials that grants exactly what a
 *   literal `*` would); no answer allows credentials;
 * - a preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) where the path's rule
 *   is not `none` is answered 204 with the allowed methods, the requested headers and a max age,
 *   before any route runs; an OPTIONS without those two headers there is a 400; elsewhere (a
 *   rule of `none`) an OPTIONS is a 404, as for a route that does not exist.
 *
 * Why not @fastify/cors: its per-request path (the options copied, the `Vary` header parsed,
 * callbacks) was ~10% of a single-event capture request's CPU, with options decided per request
 * and with static ones alike (docs/performance.md, stop 36).
 */
export function registerCors(app: FastifyInstance, policy: CorsPolicy): void {
  const publicRule = originRule(policy.publicOrigins)
  const apiRule = originRule(policy.apiOrigins)
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('vary', 'Origin')
    // a request carrying a personal key in its URL is never answered to another origin (auth.ts)
    const rule = KEY_IN_URL.test(req.url) ? 'none' : isPublicPath(req.url) ? publicRule : apiRule
    if (rule === 'none') return done()
    const origin = req.headers.origin
    if (origin !== undefined && (rule === 'any' || rule.has(origin))) {
      reply.header('access-control-allow-origin', origin)
    }
    if (req.method !== 'OPTIONS') return done()
    const method = req.headers['access-control-request-method']
    if (origin === undefined || method === undefined) {
      reply.code(400).type('text/plain').send('Invalid Preflight Request')
      return
    }
    reply.header('access-control-allow-methods', PREFLIGHT_METHODS)
    reply.header('vary', 'Origin, Access-Control-Request-Headers')
    const headers = req.headers['access-control-request-headers']
    if (headers !== undefined) reply.header('access-control-allow-headers', headers)
    reply.header('access-control-max-age', PREFLIGHT_MAX_AGE)
    // (Safari waits for a body on a 204 without a length)
    reply.code(204).header('content-length', '0').send()
  })
  // OPTIONS requests must be routed for the hook to see them; one the hook did not answer has no
  // route of its own.
  app.options('*', { schema: { hide: true } }, (_req, reply) => reply.callNotFound())
}

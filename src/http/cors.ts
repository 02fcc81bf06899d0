import type { FastifyInstance, FastifyReply } from 'fastify'

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

/** Whether `path` is `prefix` or below it (`prefix` ending in `/`: anything that starts with it). */
function under(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false
  return prefix.endsWith('/') || path.length === prefix.length || path.charCodeAt(prefix.length) === SLASH
}
const SLASH = 0x2f

/** True for the endpoints posthog-js calls from any site. */
export function isPublicPath(url: string): boolean {
  // (runs for every request: no split, no strings made but the path)
  const q = url.indexOf('?')
  const path = q < 0 ? url : url.slice(0, q)
  for (const p of NOT_PUBLIC) if (under(path, p)) return false
  for (const p of PUBLIC_PREFIXES) if (under(path, p)) return true
  return false
}

export interface CorsPolicy {
  /** origins allowed on the public endpoints; `*` allows any */
  publicOrigins: string[]
  /** origins allowed on everything else; empty allows none */
  apiOrigins: string[]
}

/** Who may read a side's answers: any origin (reflected), none, or those listed. */
type Allowed = true | false | readonly string[]

// `*` reflects the caller's origin, as PostHog's capture does; without credentials that grants
// exactly what a literal `*` would.
function allowedOf(origins: string[]): Allowed {
  if (origins.includes('*')) return true
  return origins.length ? origins : false
}

/** Adds `field` to the response's Vary header unless it is there already; a `*` in it stays alone. */
function addVary(reply: FastifyReply, field: string): void {
  const current = reply.getHeader('Vary')
  if (current === undefined || current === '') {
    reply.header('Vary', field)
    return
  }
  const text = Array.isArray(current) ? current.join(', ') : String(current)
  const fields = text.split(',').map((f) => f.trim().toLowerCase())
  if (fields.includes('*')) reply.header('Vary', '*')
  else if (!fields.includes(field.toLowerCase())) reply.header('Vary', `${text}, ${field}`)
}

// What preflight answers allow, as @fastify/cors (which this replaces) did with our options.
const PREFLIGHT_METHODS = 'GET,HEAD,POST'
const PREFLIGHT_MAX_AGE = '86400'

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the CORS hook on a preflight it answered for an allowed side */
    corsPreflightEnabled: boolean
  }
}

/**
 * Registers CORS on the root app, deciding per request by its path: the headers @fastify/cors
 * wrote with a per-request options delegator (Vary: Origin always, the allowed origin reflected,
 * preflights answered 204, or 400 without Origin and Access-Control-Request-Method, or 404 on a
 * side that allows none), written directly: the plugin rebuilt its options on every request,
 * ~4% of a flags request's CPU.
 */
export function registerCors(app: FastifyInstance, policy: CorsPolicy): void {
  const publicSide = allowedOf(policy.publicOrigins)
  const apiSide = allowedOf(policy.apiOrigins)
  app.decorateRequest('corsPreflightEnabled', false)
  app.addHook('onRequest', (req, reply, done) => {
    const allowed = isPublicPath(req.url) ? publicSide : apiSide
    addVary(reply, 'Origin')
    if (allowed === false) return done()
    const origin = req.headers.origin
    if (origin && (allowed === true || allowed.includes(origin))) {
      reply.header('Access-Control-Allow-Origin', origin)
    }
    if (req.raw.method !== 'OPTIONS') return done()
    if (!origin || !req.headers['access-control-request-method']) {
      void reply.status(400).type('text/plain').send('Invalid Preflight Request')
      return
    }
    req.corsPreflightEnabled = true
    reply.header('Access-Control-Allow-Methods', PREFLIGHT_METHODS)
    addVary(reply, 'Access-Control-Request-Headers')
    const requested = req.headers['access-control-request-headers']
    if (requested !== undefined) reply.header('Access-Control-Allow-Headers', requested)
    reply.header('Access-Control-Max-Age', PREFLIGHT_MAX_AGE)
    void reply.code(204).header('Content-Length', '0').send()
  })
  // Lets fastify route preflights; those the hook did not answer find no route.
  app.options('*', { schema: { hide: true } }, (req, reply) => {
    if (!req.corsPreflightEnabled) {
      reply.callNotFound()
      return
    }
    void reply.send()
  })
}

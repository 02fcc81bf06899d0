import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AuthenticationError, NotFound, ValidationError } from '../http/errors.ts'
import { type RemoteConfigCache, variantFor } from './cache.ts'

// The documents posthog-js loads with the project token (PostHog's hypercache-server,
// rust/hypercache-server/src/api/remote_config.rs and surveys.rs):
//   GET /array/<token>/config      the remote config as JSON
//   GET /array/<token>/config.js   the same, as a script that registers it for the SDK
//   GET /api/surveys/?token=       the project's surveys
// Any origin may read them (posthog-js loads config.js with crossorigin="anonymous"); no
// credentials are involved. Browsers and proxies may keep the config for 5 minutes, as PostHog's.

const TOKEN = /^[A-Za-z0-9_-]{1,200}$/
export const CONFIG_CACHE_CONTROL = 'public, max-age=300'

/** Any origin, no credentials: what a script tag with crossorigin="anonymous" needs. */
export function publicCors(reply: FastifyReply): void {
  reply.header('access-control-allow-origin', '*')
  reply.removeHeader('access-control-allow-credentials')
}

function checkToken(token: string): void {
  if (!token) throw new AuthenticationError('API key not provided.', 'missing_api_key')
  if (!TOKEN.test(token)) throw new ValidationError('Invalid token.', 'token')
}

export function registerRemoteConfigRoutes(app: FastifyInstance, cache: RemoteConfigCache): void {
  const serve = (kind: 'json' | 'js') => async (req: FastifyRequest, reply: FastifyReply) => {
    publicCors(reply)
    const { token } = req.params as { token: string }
    checkToken(token)
    const entry = await cache.forToken(token)
    if (!entry) throw new NotFound('Project not found.')
    const variant = variantFor(entry, req.headers)
    reply
      .header('cache-control', CONFIG_CACHE_CONTROL)
      // The recording domain check reads these, so caches must keep one copy per origin.
      .header('vary', 'Origin, Referer')
      .type(kind === 'js' ? 'application/javascript; charset=utf-8' : 'application/json; charset=utf-8')
    return reply.send(kind === 'js' ? variant.js : variant.json)
  }
  // HEAD comes with every GET route (fastify exposeHeadRoutes): same headers, no body.
  app.get('/array/:token/config', serve('json'))
  app.get('/array/:token/config.js', serve('js'))

  app.get('/api/surveys', publicSurveys(cache))
  app.get('/api/surveys/', publicSurveys(cache))
}

function publicSurveys(cache: RemoteConfigCache) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    publicCors(reply)
    const q = req.query as Record<string, unknown>
    const token = typeof q.token === 'string' ? q.token : typeof q.api_key === 'string' ? q.api_key : ''
    if (!token) throw new AuthenticationError('Token not provided.', 'missing_api_key')
    const id = TOKEN.test(token) ? await cache.projectIdOf(token) : undefined
    const entry = id === undefined ? undefined : await cache.forProject(id)
    // An unknown project has no surveys (PostHog answers the same).
    if (!entry) return { surveys: [], survey_config: null }
    return cache.surveysFor(entry.project)
  }
}

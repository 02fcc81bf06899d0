import type { FastifyInstance, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { flagCacheFor } from '../flags/cache.ts'
import { payloadText } from '../flags/evaluate.ts'
import { authenticate, canSee, type Principal, projectFor, requireScope } from '../http/auth.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import type { ApiContext } from '../http/routes.ts'

// posthog-node's getRemoteConfigPayload(key):
//   GET /api/projects/@current/feature_flags/<key or id>/remote_config?token=<project token>
// with `Authorization: Bearer <personal API key>` (feature_flag:read). The answer is the flag's
// "true" payload as PostHog stores it — JSON text — encoded as JSON once more, or null; the SDK
// decodes both layers. Burrow does not keep PostHog's "remote config flag" marker or encrypted
// payloads, so any flag of the project answers with its payload.

const Params = z.object({ project_id: z.string(), key: z.string().min(1).max(400) })
const Query = z.object({ token: z.string().optional() }).passthrough()

export function registerRemoteConfigPayloadRoute(app: FastifyInstance, ctx: ApiContext): void {
  const store = ctx.rt.accounts

  async function projectOf(principal: Principal, id: string, token?: string): Promise<Project> {
    if (token) {
      const p = await store.projectByToken(token)
      if (!p || !canSee(principal, p)) throw new NotFound('Project not found.')
      return p
    }
    if (id !== '@current') return projectFor(principal, id, store)
    // "current" is the key's one project; a key for several projects must name one by token.
    const only = principal.key.projects?.length === 1 ? principal.key.projects[0] : undefined
    if (only === undefined)
      throw new ValidationError('Pass the project token as ?token= with @current.', 'token')
    return projectFor(principal, String(only), store)
  }

  const handler = async (req: FastifyRequest) => {
    const { project_id, key } = Params.parse(req.params)
    const { token } = Query.parse(req.query ?? {})
    const principal = await authenticate(req, store)
    ctx.limiter.check(principal.key.id)
    requireScope(principal, 'feature_flag:read')
    const project = await projectOf(principal, project_id, token)
    const cache = await flagCacheFor(ctx.rt.nc, ctx.rt.log)
    const flag = cache
      .flags(project.id)
      .find((f) => !f.deleted && (f.key === key || (/^\d+$/.test(key) && f.id === Number(key))))
    if (!flag) throw new NotFound()
    return JSON.stringify(payloadText(flag.filters.payloads.true))
  }

  for (const prefix of ['/api/projects/:project_id', '/api/environments/:project_id']) {
    app.get(
      `${prefix}/feature_flags/:key/remote_config`,
      { schema: { tags: ['feature_flags'], summary: "A flag's remote config payload", params: Params } },
      async (req, reply) => reply.type('application/json').send(await handler(req)),
    )
  }
}

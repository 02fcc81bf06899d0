import type { FastifyInstance, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { Project } from '../accounts/documents.ts'
import type { Runtime } from '../runtime/types.ts'
import { authenticate, type Principal, projectFor, type RateLimiter, requireScope } from './auth.ts'

// Every project-scoped route exists under both prefixes PostHog serves.
export const PROJECT_PREFIXES = ['/api/environments/:project_id', '/api/projects/:project_id'] as const

export interface ApiContext {
  rt: Runtime
  limiter: RateLimiter
}

export interface Authed {
  principal: Principal
  project: Project
}

/**
 * Authenticates the request, applies the key's rate limit, checks `scope` and resolves
 * `:project_id` to a project the key may reach. Every project-scoped handler starts here.
 */
export async function authorize(ctx: ApiContext, req: FastifyRequest, scope: string): Promise<Authed> {
  const principal = await authenticate(req, ctx.rt.accounts)
  ctx.limiter.check(principal.key.id)
  requireScope(principal, scope)
  const project = await projectFor(
    principal,
    (req.params as { project_id: string }).project_id,
    ctx.rt.accounts,
  )
  req.log = req.log.child({ project_id: project.id })
  return { principal, project }
}

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete'

/** Registers `path` (relative to the project prefix) under both prefixes. */
export function projectRoute(
  app: FastifyInstance,
  method: Method,
  path: string,
  opts: RouteShorthandOptions,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- handlers are typed by their zod schemas
  handler: (req: any, reply: any) => Promise<unknown>,
): void {
  for (const prefix of PROJECT_PREFIXES) app[method](`${prefix}${path}`, opts, handler)
}

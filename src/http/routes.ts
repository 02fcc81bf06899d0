import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify'
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import type { Runtime } from '../runtime/types.ts'
import {
  authenticate,
  canSee,
  type Principal,
  projectFor,
  readProjectEarly,
  type RateLimiter,
  requireOrganizationWide,
  requireScope,
} from './auth.ts'
import { AuthenticationError } from './errors.ts'

// The one way a management or query route is registered: authenticate the personal API key,
// apply its rate limit, check the scope, resolve what the key may reach (a project, or the
// organization), and hand the handler typed params/query/body inferred from the zod schemas
// that also validate the request and describe it in the OpenAPI document.

// Every project-scoped route exists under both prefixes PostHog serves.
export const PROJECT_PREFIXES = ['/api/environments/:project_id', '/api/projects/:project_id'] as const

/** What every route module receives: the runtime and the per-key rate limiter. */
export interface ApiContext {
  rt: Runtime
  limiter: RateLimiter
}

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'
type ZodObj = z.ZodObject<z.ZodRawShape>
type Out<S> = S extends z.ZodTypeAny ? z.output<S> : undefined

/** A request whose params, query and body have the types of the schemas that validated them. */
export type TypedRequest<P, Q, B> = FastifyRequest<{ Params: P; Querystring: Q; Body: B }>

interface Spec<
  P extends ZodObj | undefined,
  Q extends z.ZodTypeAny | undefined,
  B extends z.ZodTypeAny | undefined,
> {
  method: Method
  /** one path or several that share the handler (e.g. with and without a trailing slash) */
  path: string | readonly string[]
  /** `<resource>:read|write`; `*` keys have every scope */
  scope: string
  params?: P
  query?: Q
  body?: B
  response?: Record<number, z.ZodTypeAny>
  tags?: string[]
  summary?: string
  description?: string
  /** left out of the OpenAPI document */
  hide?: boolean
  /** a smaller body limit than the server's (which is capture's) */
  bodyLimit?: number
}

/** Who is calling, and the project the request is about. */
export interface ProjectAccess {
  principal: Principal
  project: Project
}

/** Who is calling; the request acts on the caller's organization. */
export interface OrganizationAccess {
  principal: Principal
  organizationId: string
}

const paths = (p: string | readonly string[]) => (typeof p === 'string' ? [p] : [...p])

function schemaOf(
  spec: Spec<ZodObj | undefined, z.ZodTypeAny | undefined, z.ZodTypeAny | undefined>,
  params?: ZodObj,
) {
  const schema: FastifySchema & Record<string, unknown> = {}
  if (params) schema.params = params
  if (spec.query) schema.querystring = spec.query
  if (spec.body) schema.body = spec.body
  if (spec.response) schema.response = spec.response
  if (spec.tags) schema.tags = spec.tags
  if (spec.summary) schema.summary = spec.summary
  if (spec.description) schema.description = spec.description
  if (spec.hide) schema.hide = true
  return schema
}

async function caller(ctx: ApiContext, req: FastifyRequest, scope: string): Promise<Principal> {
  const principal = await authenticate(req, ctx.rt.accounts)
  ctx.limiter.check(principal.key.id)
  requireScope(principal, scope)
  return principal
}

/**
 * Registers `handler` at each url. Access is settled in `onRequest`, before the body is read or
 * validated: a caller without a valid key, scope or project gets 401/403/404, never a 400 about
 * its body (as PostHog, whose authentication runs before its serializers).
 */
function register<A>(
  app: FastifyInstance,
  method: Method,
  urls: string[],
  schema: FastifySchema,
  bodyLimit: number | undefined,
  resolve: (req: FastifyRequest) => Promise<A>,
  handler: (req: FastifyRequest, reply: FastifyReply, access: A) => Promise<unknown>,
): void {
  const granted = new WeakMap<FastifyRequest, A>()
  for (const url of urls) {
    app.route({
      method,
      url,
      schema,
      ...(bodyLimit ? { bodyLimit } : {}),
      onRequest: async (req) => {
        granted.set(req, await resolve(req))
      },
      handler: async (req, reply) => {
        const access = granted.get(req)
        if (access === undefined) throw new Error(`no access resolved for ${method} ${url}`)
        return handler(req, reply, access)
      },
    })
  }
}

const ProjectIdParam = z.object({ project_id: z.string() })
const TokenQuery = z.object({ token: z.string().optional() }).passthrough()

type ProjectHandler<P, Q, B> = (
  req: TypedRequest<Out<P> & { project_id: string }, Out<Q>, Out<B>>,
  reply: FastifyReply,
  access: ProjectAccess,
) => Promise<unknown>

/**
 * A route under both project prefixes (`path` relative to them). The handler runs only for a key
 * with `scope` that may reach `:project_id`; any other project is a 404.
 */
export function projectRoute<
  P extends ZodObj | undefined = undefined,
  Q extends z.ZodTypeAny | undefined = undefined,
  B extends z.ZodTypeAny | undefined = undefined,
>(app: FastifyInstance, ctx: ApiContext, spec: Spec<P, Q, B> & { handler: ProjectHandler<P, Q, B> }): void {
  const params = spec.params ? spec.params.extend(ProjectIdParam.shape) : ProjectIdParam
  const urls = paths(spec.path).flatMap((path) => PROJECT_PREFIXES.map((prefix) => `${prefix}${path}`))
  register(
    app,
    spec.method,
    urls,
    schemaOf(spec, params),
    spec.bodyLimit,
    async (req): Promise<ProjectAccess> => {
      const rawId = (req.params as { project_id: string }).project_id
      const early = readProjectEarly(rawId, ctx.rt.accounts)
      const principal = await caller(ctx, req, spec.scope)
      const project = await projectFor(principal, rawId, ctx.rt.accounts, early)
      req.log = req.log.child({ project_id: project.id })
      return { principal, project }
    },
    // Validated by the schemas above before the handler runs: the one place the types meet.
    (req, reply, access) => spec.handler(req as Parameters<ProjectHandler<P, Q, B>>[0], reply, access),
  )
}

/**
 * A route about a project named by its project API key (`?token=`), the way SDKs ask for local
 * evaluation. A token that is unknown and one of a project the key may not reach get the same
 * answer, so the route cannot be used to tell valid tokens from invalid ones.
 */
export function tokenProjectRoute(
  app: FastifyInstance,
  ctx: ApiContext,
  spec: Spec<undefined, undefined, undefined> & {
    handler: (req: FastifyRequest, reply: FastifyReply, access: ProjectAccess) => Promise<unknown>
  },
): void {
  register(
    app,
    spec.method,
    paths(spec.path),
    schemaOf({ ...spec, query: TokenQuery }),
    spec.bodyLimit,
    async (req): Promise<ProjectAccess> => {
      const principal = await caller(ctx, req, spec.scope)
      const token = TokenQuery.parse(req.query ?? {}).token
      if (!token)
        throw new AuthenticationError('The project API key (?token=) is missing.', 'missing_api_key')
      const project = await ctx.rt.accounts.projectByToken(token)
      if (!project || !canSee(principal, project)) {
        throw new AuthenticationError('Project API key invalid.', 'invalid_api_key')
      }
      req.log = req.log.child({ project_id: project.id })
      return { principal, project }
    },
    spec.handler,
  )
}

type OrganizationHandler<P, Q, B> = (
  req: TypedRequest<Out<P>, Out<Q>, Out<B>>,
  reply: FastifyReply,
  access: OrganizationAccess,
) => Promise<unknown>

/**
 * A route that acts on the caller's organization rather than one project (listing or creating
 * projects, managing keys). As in PostHog, a key limited to some projects is refused here: it
 * may only use project-based endpoints.
 */
export function organizationRoute<
  P extends ZodObj | undefined = undefined,
  Q extends z.ZodTypeAny | undefined = undefined,
  B extends z.ZodTypeAny | undefined = undefined,
>(
  app: FastifyInstance,
  ctx: ApiContext,
  spec: Spec<P, Q, B> & { handler: OrganizationHandler<P, Q, B> },
): void {
  register(
    app,
    spec.method,
    paths(spec.path),
    schemaOf(spec, spec.params),
    spec.bodyLimit,
    async (req): Promise<OrganizationAccess> => {
      const principal = await caller(ctx, req, spec.scope)
      requireOrganizationWide(principal)
      return { principal, organizationId: principal.user.organization_id }
    },
    (req, reply, access) => spec.handler(req as Parameters<OrganizationHandler<P, Q, B>>[0], reply, access),
  )
}

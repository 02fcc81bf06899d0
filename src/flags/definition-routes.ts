import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { type ApiContext, projectRoute, tokenProjectRoute } from '../http/routes.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { userBasic } from '../accounts/user-body.ts'
import type { Project, User } from '../accounts/documents.ts'
import { ValidationError } from '../http/errors.ts'
import { checkFilterPatterns, flagCreateSchema, flagPatchSchema } from './definition.ts'
import { groupTypeMapping } from './properties.ts'
import { localEvaluationBody } from './responses.ts'
import { FlagStore } from './definition-store.ts'
import type { StoredFlag } from './stored-definition.ts'
import { flagUsage } from './usage.ts'
import { cohortDocsFor } from '../cohorts/cache.ts'
import { flagCohortIds, localCohorts } from '../cohorts/flag-match.ts'
import type { FlagFilters } from './definition.ts'

// Management API of feature flags, under both project prefixes:
//   GET/POST  …/feature_flags/            list (paged, newest first) / create (201)
//   GET/PATCH/PUT …/feature_flags/:id/    retrieve / update (soft delete: PATCH {"deleted": true})
//   DELETE    …/feature_flags/:id/        405, as PostHog: flags are only soft deleted
//   GET       …/feature_flags/:id/usage/  call counts from ClickHouse
//   GET       …/feature_flags/local_evaluation/, /api/feature_flag/local_evaluation?token=,
//             /flags/definitions?token=   definitions for SDK local evaluation (personal key)

const READ = 'feature_flag:read'
const WRITE = 'feature_flag:write'

const FlagParams = z.object({ id: z.string() })
const ListQuery = PageQuery.extend({
  search: z.string().optional(),
  active: z.enum(['true', 'false', 'STALE']).optional(),
})
const UsageQuery = z.object({ days: z.coerce.number().int().min(1).max(365).default(30) })

function flagId(raw: string): number {
  if (!/^\d{1,12}$/.test(raw)) throw new ValidationError('id must be an integer.', 'id')
  return Number(raw)
}

// PostHog's definition (posthog/api/feature_flag.py): one condition, no property filters, not a
// group flag.
function isSimple(f: StoredFlag): boolean {
  const groups = f.filters.groups
  return (
    groups.length === 1 &&
    groups.every((g) => g.properties.length === 0) &&
    f.filters.aggregation_group_type_index == null
  )
}

export function flagBody(f: StoredFlag, createdBy: User | undefined) {
  const simple = isSimple(f)
  return {
    id: f.id,
    name: f.name,
    key: f.key,
    filters: f.filters,
    deleted: f.deleted,
    active: f.active,
    created_by: createdBy ? userBasic(createdBy) : null,
    created_at: f.created_at,
    updated_at: f.updated_at,
    version: f.version,
    is_simple_flag: simple,
    rollout_percentage: simple ? (f.filters.groups[0]?.rollout_percentage ?? null) : null,
    ensure_experience_continuity: f.ensure_experience_continuity,
    tags: [] as string[],
  }
}

// PostHog ignores a PATCH's `filters` that has no `groups` (its serializer keeps the stored ones).
function withoutGrouplessFilters(body: unknown): unknown {
  const raw = body && typeof body === 'object' ? { ...(body as Record<string, unknown>) } : {}
  const filters = raw.filters
  if (filters && typeof filters === 'object' && !('groups' in filters)) delete raw.filters
  return raw
}
const PatchBody = z.preprocess(withoutGrouplessFilters, flagPatchSchema)
const CreateBody = z.preprocess((b) => b ?? {}, flagCreateSchema)

const etagOf = (text: string) => `"${createHash('sha1').update(text).digest('hex')}"`

export function registerFlagRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const storePromise = FlagStore.open(ctx.rt.nc)
  const cohortsPromise = cohortDocsFor(ctx.rt.nc, ctx.rt.log)
  cohortsPromise.catch(() => undefined)
  // A cohort condition must name a live cohort of the project (PostHog refuses others too).
  const checkCohorts = async (teamId: number, filters: Pick<FlagFilters, 'groups'> | undefined) => {
    if (!filters) return
    const cohorts = await cohortsPromise
    filters.groups.forEach((g, i) =>
      g.properties.forEach((p, j) => {
        if (p.type !== 'cohort') return
        const c = cohorts.get(teamId, Number(p.value))
        if (!c || c.deleted) {
          throw new ValidationError(
            `Cohort ${String(p.value)} does not exist in this project.`,
            `filters.groups.${i}.properties.${j}.value`,
          )
        }
      }),
    )
  }
  const users = new Map<number, Promise<User | undefined>>()
  const user = (id: number | null) => {
    if (id === null) return Promise.resolve(undefined)
    let u = users.get(id)
    if (!u) {
      u = ctx.rt.accounts.getUser(id)
      users.set(id, u)
      u.catch(() => users.delete(id))
    }
    return u
  }
  const body = async (f: StoredFlag) => flagBody(f, await user(f.created_by))
  const store = () => storePromise
  const paths = (p: string) => [p, `${p}/`]

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/feature_flags'),
    scope: READ,
    query: ListQuery,
    handler: async (req, _reply, { project }) => {
      const q = req.query
      const search = q.search?.toLowerCase()
      const flags = (await (await store()).list(project.id))
        .filter((f) => !f.deleted)
        .filter((f) => q.active === undefined || q.active === 'STALE' || f.active === (q.active === 'true'))
        .filter(
          (f) => !search || f.key.toLowerCase().includes(search) || f.name.toLowerCase().includes(search),
        )
        .reverse()
      const page = paginate(req, q, flags)
      return { ...page, results: await Promise.all(page.results.map(body)) }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: paths('/feature_flags'),
    scope: WRITE,
    body: CreateBody,
    handler: async (req, reply, { project, principal }) => {
      await checkFilterPatterns(req.body.filters, project.id)
      await checkCohorts(project.id, req.body.filters)
      const flag = await (await store()).create(project.id, req.body, principal.user.id)
      return reply.code(201).send(await body(flag))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/feature_flags/local_evaluation'),
    scope: READ,
    handler: async (req, reply, { project }) => localEvaluation(req, reply, project),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/feature_flags/:id'),
    scope: READ,
    params: FlagParams,
    handler: async (req, _reply, { project }) =>
      body(await (await store()).get(project.id, flagId(req.params.id))),
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: paths('/feature_flags/:id'),
    scope: WRITE,
    params: FlagParams,
    body: PatchBody,
    handler: async (req, _reply, { project }) => {
      await checkFilterPatterns(req.body.filters, project.id)
      await checkCohorts(project.id, req.body.filters)
      return body(await (await store()).update(project.id, flagId(req.params.id), req.body))
    },
  })

  projectRoute(app, ctx, {
    method: 'PUT',
    path: paths('/feature_flags/:id'),
    scope: WRITE,
    params: FlagParams,
    body: CreateBody,
    handler: async (req, _reply, { project }) => {
      await checkFilterPatterns(req.body.filters, project.id)
      await checkCohorts(project.id, req.body.filters)
      return body(await (await store()).update(project.id, flagId(req.params.id), req.body))
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: paths('/feature_flags/:id'),
    scope: WRITE,
    params: FlagParams,
    handler: async (_req, reply) => reply.code(405).send(),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/feature_flags/:id/usage'),
    scope: READ,
    params: FlagParams,
    query: UsageQuery,
    handler: async (req, _reply, { project }) => {
      const flag = await (await store()).get(project.id, flagId(req.params.id))
      return { flag_id: flag.id, ...(await flagUsage(ctx.rt.ch, project.id, flag.key, req.query.days)) }
    },
  })

  // The definitions SDKs evaluate locally. Inactive flags are included (SDKs then answer false
  // without asking); an ETag lets posthog-node's poll come back 304 when nothing changed.
  const localEvaluation = async (req: FastifyRequest, reply: FastifyReply, project: Project) => {
    const flags = await (await storePromise).list(project.id)
    const mapping = await groupTypeMapping(ctx.rt.ch, project.id).catch((err) => {
      req.log.warn({ err }, 'group type mapping unavailable; group flags will be evaluated remotely')
      return {}
    })
    // the cohorts the flags name that SDKs can evaluate from person properties (PostHog sends
    // them with ?send_cohorts, which posthog-node always asks for; without it, too)
    const cohorts = await cohortsPromise
    const ids = [...new Set(flags.filter((f) => !f.deleted).flatMap((f) => flagCohortIds(f.filters)))]
    const local = localCohorts(ids, (id) => cohorts.get(project.id, id))
    const text = JSON.stringify(localEvaluationBody(flags, mapping, local))
    const etag = etagOf(text)
    reply.header('etag', etag)
    if (req.headers['if-none-match'] === etag) return reply.code(304).send()
    return reply.type('application/json').send(text)
  }

  // By project API key (?token=), the way posthog-node asks: the personal key must reach that project.
  tokenProjectRoute(app, ctx, {
    method: 'GET',
    path: [
      '/flags/definitions',
      '/flags/definitions/',
      '/api/feature_flag/local_evaluation',
      '/api/feature_flag/local_evaluation/',
    ],
    scope: READ,
    handler: async (req, reply, { project }) => localEvaluation(req, reply, project),
  })
}

import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { type UserBasic, userResolver } from '../accounts/user-body.ts'
import { FlagStore } from '../flags/definition-store.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'
import { requireScope } from '../http/auth.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { minimalFlag } from '../surveys/serialize.ts'
import { isActive, STAGES, type StoredFeature } from './document.ts'
import { createFeatureFlag, setFlagFilters, withEnrollment } from './flag.ts'
import { EarlyAccessStore } from './store.ts'

// Management API of early access features under both project prefixes (PostHog's
// EarlyAccessFeatureViewSet; the path is singular, as PostHog's is):
//   GET/POST          …/early_access_feature/       list (paged, newest first) / create (201)
//   GET/PATCH/DELETE  …/early_access_feature/:id/   retrieve / update / delete (204)
// Changing the linked flag (creating it, marking it for enrollment) also needs feature_flag:write.

const READ = 'early_access_feature:read'
const WRITE = 'early_access_feature:write'
const FLAG_WRITE = 'feature_flag:write'
const TAGS = ['early_access_features']

const ProjectParams = z.object({ project_id: z.string() })
const FeatureParams = ProjectParams.extend({ id: z.string() })

const Assignee = z
  .object({ type: z.enum(['user', 'role']), id: z.union([z.number(), z.string()]) })
  .nullable()
const url = z.union([z.literal(''), z.string().max(800).url('Enter a valid URL.')])

const CreateBody = z.object({
  name: z.string().min(1).max(200),
  description: z.string().optional(),
  stage: z.enum(STAGES),
  documentation_url: url.optional(),
  payload: z.record(z.string(), z.unknown()).nullable().optional(),
  feature_flag_id: z.number().int().optional(),
  assignee: Assignee.optional(),
})
const PatchBody = CreateBody.omit({ feature_flag_id: true })
  .partial()
  .extend({ rollout_to_all: z.boolean().optional() })

export function featureBody(f: StoredFeature, flag: StoredFlag | undefined, createdBy: UserBasic | null) {
  return {
    id: f.id,
    feature_flag: minimalFlag(flag),
    name: f.name,
    description: f.description,
    stage: f.stage,
    documentation_url: f.documentation_url,
    payload: f.payload,
    created_at: f.created_at,
    created_by: createdBy,
    assignee: f.assigned_user_id !== null ? { type: 'user', id: f.assigned_user_id } : null,
    user_access_level: 'editor',
  }
}

export async function registerEarlyAccessRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const store = await EarlyAccessStore.open(ctx.rt.nc)
  const flags = await FlagStore.open(ctx.rt.nc)
  const flagOf = (f: StoredFeature) =>
    f.feature_flag_id === null
      ? Promise.resolve(undefined)
      : flags.get(f.team_id, f.feature_flag_id).catch(() => undefined)

  async function assigneeUser(orgId: string, assignee: z.infer<typeof Assignee>): Promise<number | null> {
    if (assignee === null) return null
    // Burrow has no roles; a role assignee can never belong to the organization.
    if (assignee.type === 'role')
      throw new ValidationError('Assignee role does not belong to this organization.', 'assignee')
    const user = typeof assignee.id === 'number' ? await ctx.rt.accounts.getUser(assignee.id) : undefined
    if (!user || user.organization_id !== orgId) {
      throw new ValidationError('Assignee user does not belong to this organization.', 'assignee')
    }
    return user.id
  }

  async function body(f: StoredFeature, flag?: StoredFlag) {
    return featureBody(f, flag ?? (await flagOf(f)), await userResolver(ctx.rt.accounts)(f.created_by))
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/early_access_feature/',
    scope: READ,
    tags: TAGS,
    summary: 'List early access features',
    query: PageQuery,
    handler: async (req, _reply, { project }) => {
      const page = paginate(req, req.query, await store.list(project.id))
      return { ...page, results: await Promise.all(page.results.map((f) => body(f))) }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/early_access_feature/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Create an early access feature (and its flag unless feature_flag_id is given)',
    body: CreateBody,
    handler: async (req, reply, { principal, project }) => {
      const input = req.body
      const active = isActive(input.stage)
      const assigned =
        input.assignee !== undefined
          ? await assigneeUser(project.organization_id, input.assignee)
          : principal.user.id
      let flag: StoredFlag
      if (input.feature_flag_id !== undefined) {
        const existing = await flags.get(project.id, input.feature_flag_id).catch(() => undefined)
        if (!existing || existing.deleted)
          throw new ValidationError('Feature Flag with this ID does not exist')
        if (await store.featureOfFlag(project.id, existing.id)) {
          throw new ValidationError(
            `Linked feature flag ${existing.key} already has a feature attached to it.`,
          )
        }
        if (existing.filters.aggregation_group_type_index != null) {
          throw new ValidationError('Group-based feature flags are not supported for Early Access Features.')
        }
        if ((existing.filters.multivariate?.variants ?? []).length > 0) {
          throw new ValidationError('Multivariate feature flags are not supported for Early Access Features.')
        }
        flag = existing
        if (active) {
          requireScope(principal, FLAG_WRITE)
          flag = await setFlagFilters(flags, existing, withEnrollment(existing.filters, true))
        }
      } else {
        requireScope(principal, FLAG_WRITE)
        flag = await createFeatureFlag(flags, project.id, input.name, active, principal.user.id)
      }
      const feature: StoredFeature = {
        id: randomUUID(),
        team_id: project.id,
        name: input.name,
        description: input.description ?? '',
        stage: input.stage,
        documentation_url: input.documentation_url ?? '',
        payload: input.payload ?? {},
        feature_flag_id: flag.id,
        assigned_user_id: assigned,
        created_at: new Date().toISOString(),
        created_by: principal.user.id,
      }
      if (!(await store.create(feature))) {
        throw new ValidationError(`Linked feature flag ${flag.key} already has a feature attached to it.`)
      }
      return reply.code(201).send(await body(feature, flag))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/early_access_feature/:id/',
    scope: READ,
    tags: TAGS,
    summary: 'Retrieve an early access feature',
    params: FeatureParams,
    handler: async (req, _reply, { project }) => {
      const f = await store.get(project.id, req.params.id)
      if (!f) throw new NotFound()
      return body(f)
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/early_access_feature/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Update an early access feature; a stage change updates its flag',
    params: FeatureParams,
    body: PatchBody,
    handler: async (req, _reply, { principal, project }) => {
      const id = req.params.id
      const input = req.body
      const current = await store.get(project.id, id)
      if (!current) throw new NotFound()
      const assigned =
        input.assignee !== undefined ? await assigneeUser(project.organization_id, input.assignee) : undefined
      let flag = await flagOf(current)
      const stage = input.stage
      if (flag && !flag.deleted && stage !== undefined) {
        let filters: unknown
        if (stage !== current.stage && stage === 'general-availability' && input.rollout_to_all) {
          filters = withEnrollment(flag.filters, null, {
            groups: [{ properties: [], rollout_percentage: 100 }],
          })
        } else if (!isActive(current.stage) && isActive(stage)) {
          filters = withEnrollment(flag.filters, true)
        } else if (!isActive(stage)) {
          filters = withEnrollment(flag.filters, null)
        }
        if (filters !== undefined) {
          requireScope(principal, FLAG_WRITE)
          flag = await setFlagFilters(flags, flag, filters)
        }
      }
      const next = await store.update(project.id, id, (cur) => ({
        ...cur,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(stage !== undefined ? { stage } : {}),
        ...(input.documentation_url !== undefined ? { documentation_url: input.documentation_url } : {}),
        ...(input.payload !== undefined ? { payload: input.payload ?? {} } : {}),
        ...(assigned !== undefined ? { assigned_user_id: assigned } : {}),
      }))
      if (!next) throw new NotFound()
      return body(next, flag)
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/early_access_feature/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Delete an early access feature; its flag stays',
    params: FeatureParams,
    handler: async (req, reply, { principal, project }) => {
      const current = await store.get(project.id, req.params.id)
      if (!current) throw new NotFound()
      const flag = await flagOf(current)
      if (flag && !flag.deleted) {
        requireScope(principal, FLAG_WRITE)
        await setFlagFilters(flags, flag, withEnrollment(flag.filters, null))
      }
      await store.delete(project.id, current.id)
      return reply.code(204).send()
    },
  })
}

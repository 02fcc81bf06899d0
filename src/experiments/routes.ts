import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { type UserBasic, userResolver } from '../accounts/user-body.ts'
import { FlagStore } from '../flags/definition-store.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'
import { requireScope } from '../http/auth.ts'
import { AppError, NotFound, ValidationError } from '../http/errors.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { minimalFlag } from '../surveys/serialize.ts'
import { Parameters, StatsConfig, statusOf, type StoredExperiment } from './document.ts'
import {
  checkEligible,
  createExperimentFlag,
  sameVariantKeys,
  setFlagVariants,
  validateVariants,
} from './flag.ts'
import { ExperimentMetric, ExposureCriteria } from './metrics.ts'
import { ExperimentStore } from './store.ts'

// Management API of experiments under both project prefixes (PostHog's EnterpriseExperimentsViewSet):
//   GET/POST     …/experiments/               list (paged, newest first; archived ones only with
//                                              ?archived=true) / create (201), with its flag
//   GET/PATCH    …/experiments/:id/           retrieve / update (`deleted: true` deletes, and
//                                              soft-deletes the flag, as PostHog does)
//   DELETE       …/experiments/:id/           405, as in PostHog: delete with a PATCH
//   POST         …/experiments/:id/launch/    sets start_date and activates the flag
//   POST         …/experiments/:id/end/       sets end_date
// Creating or changing the experiment's flag also needs feature_flag:write.

const READ = 'experiment:read'
const WRITE = 'experiment:write'
const FLAG_WRITE = 'feature_flag:write'
const TAGS = ['experiments']

const IdParams = z.object({ id: z.coerce.number().int().positive() })

const isoDate = z
  .string()
  .refine((s) => Number.isFinite(Date.parse(s)), 'Enter a valid date/time.')
  .transform((s) => new Date(Date.parse(s)).toISOString())

const fields = {
  name: z.string().min(1).max(400),
  description: z.string().max(3000).nullable().optional(),
  start_date: isoDate.nullable().optional(),
  end_date: isoDate.nullable().optional(),
  parameters: Parameters.nullable().optional(),
  filters: z.record(z.string(), z.unknown()).nullable().optional(),
  secondary_metrics: z.array(z.unknown()).nullable().optional(),
  exposure_criteria: ExposureCriteria.nullable().optional(),
  metrics: z.array(ExperimentMetric).nullable().optional(),
  metrics_secondary: z.array(ExperimentMetric).nullable().optional(),
  stats_config: StatsConfig.nullable().optional(),
  archived: z.boolean().optional(),
  type: z.enum(['product', 'web']).nullable().optional(),
  conclusion: z.string().nullable().optional(),
  conclusion_comment: z.string().nullable().optional(),
  // Burrow has no holdouts or saved metrics: only their empty values are accepted
  holdout_id: z.null().optional(),
  saved_metrics_ids: z.array(z.unknown()).max(0, 'Saved metric does not exist').nullable().optional(),
}

const CreateBody = z.object({ ...fields, feature_flag_key: z.string().min(1).max(400) })
const PatchBody = z.object({
  ...fields,
  name: fields.name.optional(),
  deleted: z.boolean().optional(),
  feature_flag_key: z.string().optional(),
})

const ListQuery = PageQuery.extend({
  status: z.string().optional(),
  archived: z.enum(['true', 'false']).optional(),
  search: z.string().optional(),
  created_by_id: z.coerce.number().int().optional(),
})

/** PostHog's ExperimentSerializer. */
export function experimentBody(
  e: StoredExperiment,
  flag: StoredFlag | undefined,
  createdBy: UserBasic | null,
) {
  return {
    id: e.id,
    name: e.name,
    description: e.description,
    start_date: e.start_date,
    end_date: e.end_date,
    feature_flag_key: flag?.key ?? null,
    feature_flag: minimalFlag(flag),
    holdout: null,
    holdout_id: null,
    exposure_cohort: null,
    parameters: e.parameters,
    secondary_metrics: [],
    saved_metrics: [],
    saved_metrics_ids: [],
    filters: {},
    archived: e.archived,
    deleted: e.deleted,
    created_by: createdBy,
    created_at: e.created_at,
    updated_at: e.updated_at,
    type: e.type,
    exposure_criteria: e.exposure_criteria,
    metrics: e.metrics,
    metrics_secondary: e.metrics_secondary,
    stats_config: e.stats_config,
    conclusion: e.conclusion,
    conclusion_comment: e.conclusion_comment,
    status: statusOf(e),
    user_access_level: 'editor',
  }
}

function checkDates(start: string | null | undefined, end: string | null | undefined): void {
  if (start && end && Date.parse(start) >= Date.parse(end)) {
    throw new ValidationError('End date must be after start date', 'end_date')
  }
}

const matchesStatus = (e: StoredExperiment, status: string | undefined) => {
  const s = status?.toLowerCase()
  return !s || s === 'all' || !['draft', 'running', 'complete'].includes(s) || statusOf(e) === s
}

export async function registerExperimentRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const store = await ExperimentStore.open(ctx.rt.nc)
  const flags = await FlagStore.open(ctx.rt.nc)
  const flagOf = (e: StoredExperiment) => flags.get(e.team_id, e.feature_flag_id).catch(() => undefined)

  async function body(e: StoredExperiment, flag?: StoredFlag) {
    return experimentBody(e, flag ?? (await flagOf(e)), await userResolver(ctx.rt.accounts)(e.created_by))
  }

  async function live(teamId: number, id: number): Promise<StoredExperiment> {
    const e = await store.get(teamId, id)
    if (!e || e.deleted) throw new NotFound()
    return e
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/experiments/',
    scope: READ,
    tags: TAGS,
    summary: 'List experiments (not archived unless ?archived=true; ?status=draft|running|complete)',
    query: ListQuery,
    handler: async (req, _reply, { project }) => {
      const q = req.query
      const archived = q.archived === 'true'
      const search = q.search?.toLowerCase()
      const all = (await store.list(project.id)).filter(
        (e) =>
          e.archived === archived &&
          matchesStatus(e, q.status) &&
          (!search || e.name.toLowerCase().includes(search)) &&
          (q.created_by_id === undefined || e.created_by === q.created_by_id),
      )
      const page = paginate(req, q, all)
      return { ...page, results: await Promise.all(page.results.map((e) => body(e))) }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/experiments/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Create an experiment, with a multivariate flag unless feature_flag_key names one',
    body: CreateBody,
    handler: async (req, reply, { principal, project }) => {
      const input = req.body
      const parameters = input.parameters ?? {}
      validateVariants(parameters.feature_flag_variants)
      checkDates(input.start_date, input.end_date)
      const launched = !!input.start_date
      const existing = (await flags.list(project.id)).find(
        (f) => !f.deleted && f.key === input.feature_flag_key,
      )
      let flag: StoredFlag
      if (existing) {
        checkEligible(existing)
        flag = existing
        if (launched && !flag.active) {
          requireScope(principal, FLAG_WRITE)
          flag = await flags.update(project.id, flag.id, { active: true })
        }
      } else {
        requireScope(principal, FLAG_WRITE)
        flag = await createExperimentFlag(
          flags,
          project.id,
          input.feature_flag_key,
          input.name,
          parameters,
          launched,
          principal.user.id,
        )
      }
      const now = new Date().toISOString()
      const e = await store.create({
        team_id: project.id,
        name: input.name,
        description: input.description ?? '',
        feature_flag_id: flag.id,
        start_date: input.start_date ?? null,
        end_date: input.end_date ?? null,
        parameters,
        exposure_criteria: input.exposure_criteria ?? null,
        metrics: input.metrics ?? [],
        metrics_secondary: input.metrics_secondary ?? [],
        stats_config: input.stats_config ?? { method: 'bayesian' },
        archived: input.archived ?? false,
        deleted: false,
        type: input.type ?? 'product',
        conclusion: input.conclusion ?? null,
        conclusion_comment: input.conclusion_comment ?? null,
        created_at: now,
        updated_at: now,
        created_by: principal.user.id,
      })
      return reply.code(201).send(await body(e, flag))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/experiments/:id/',
    scope: READ,
    tags: TAGS,
    summary: 'Retrieve an experiment',
    params: IdParams,
    handler: async (req, _reply, { project }) => body(await live(project.id, req.params.id)),
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/experiments/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: "Update an experiment; a draft's variants go to its flag, a running one's are fixed",
    params: IdParams,
    body: PatchBody,
    handler: async (req, _reply, { principal, project }) => {
      const input = req.body
      const current = await live(project.id, req.params.id)
      let flag = await flagOf(current)
      if (input.feature_flag_key !== undefined && input.feature_flag_key !== flag?.key) {
        throw new ValidationError("Can't update keys: get_feature_flag_key on Experiment")
      }
      const variants = input.parameters?.feature_flag_variants
      validateVariants(variants)
      const start = input.start_date !== undefined ? input.start_date : current.start_date
      const end = input.end_date !== undefined ? input.end_date : current.end_date
      checkDates(start, end)
      const draft = !current.start_date
      if (!draft && variants && flag && !sameVariantKeys(flag, variants)) {
        throw new ValidationError("Can't update feature_flag_variants on Experiment", 'parameters')
      }
      if (flag && !flag.deleted) {
        if (draft && input.parameters) {
          requireScope(principal, FLAG_WRITE)
          flag = await setFlagVariants(flags, flag, input.parameters)
        }
        if (draft && input.start_date && !flag.active) {
          requireScope(principal, FLAG_WRITE)
          flag = await flags.update(project.id, flag.id, { active: true })
        }
        if (input.deleted === true) {
          requireScope(principal, FLAG_WRITE)
          flag = await flags.update(project.id, flag.id, { deleted: true })
        }
      }
      const next = await store.update(project.id, current.id, (cur) => ({
        ...cur,
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description ?? '' } : {}),
        ...(input.start_date !== undefined ? { start_date: input.start_date } : {}),
        ...(input.end_date !== undefined ? { end_date: input.end_date } : {}),
        ...(input.parameters !== undefined ? { parameters: input.parameters ?? {} } : {}),
        ...(input.exposure_criteria !== undefined ? { exposure_criteria: input.exposure_criteria } : {}),
        ...(input.metrics !== undefined ? { metrics: input.metrics ?? [] } : {}),
        ...(input.metrics_secondary !== undefined
          ? { metrics_secondary: input.metrics_secondary ?? [] }
          : {}),
        ...(input.stats_config ? { stats_config: input.stats_config } : {}),
        ...(input.archived !== undefined ? { archived: input.archived } : {}),
        ...(input.deleted !== undefined ? { deleted: input.deleted } : {}),
        ...(input.type ? { type: input.type } : {}),
        ...(input.conclusion !== undefined ? { conclusion: input.conclusion } : {}),
        ...(input.conclusion_comment !== undefined ? { conclusion_comment: input.conclusion_comment } : {}),
      }))
      if (!next) throw new NotFound()
      return body(next, flag)
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/experiments/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Refused, as in PostHog: PATCH `deleted: true` instead',
    params: IdParams,
    handler: async () => {
      throw new AppError(
        405,
        'invalid_request',
        'method_not_allowed',
        'Hard delete of this model is not allowed. Use a patch API call to set "deleted" to true',
      )
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/experiments/:id/launch/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Launch a draft: start_date is now, and its flag is active',
    params: IdParams,
    handler: async (req, _reply, { principal, project }) => {
      const current = await live(project.id, req.params.id)
      if (current.start_date) throw new ValidationError('Experiment has already been launched.')
      let flag = await flagOf(current)
      if (!flag || flag.deleted) throw new ValidationError("The experiment's feature flag has been deleted")
      if (!flag.active) {
        requireScope(principal, FLAG_WRITE)
        flag = await flags.update(project.id, flag.id, { active: true })
      }
      const now = new Date().toISOString()
      const next = await store.update(project.id, current.id, (cur) => {
        if (cur.start_date) throw new ValidationError('Experiment has already been launched.')
        return { ...cur, start_date: now }
      })
      if (!next) throw new NotFound()
      return body(next, flag)
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/experiments/:id/end/',
    scope: WRITE,
    tags: TAGS,
    summary: 'End a running experiment: end_date is now (its flag is left as it is)',
    params: IdParams,
    handler: async (req, _reply, { project }) => {
      const current = await live(project.id, req.params.id)
      const refuse = (e: StoredExperiment) => {
        if (!e.start_date) throw new ValidationError('Experiment has not been launched yet.')
        if (e.end_date) throw new ValidationError('Experiment has already ended.')
      }
      refuse(current)
      const now = new Date().toISOString()
      const next = await store.update(project.id, current.id, (cur) => {
        refuse(cur)
        return { ...cur, end_date: now }
      })
      if (!next) throw new NotFound()
      return body(next)
    },
  })
}

import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { userResolver } from '../accounts/user-body.ts'
import { flagCacheFor } from '../flags/cache.ts'
import { checkFilterPatterns } from '../flags/definition.ts'
import { FlagStore } from '../flags/definition-store.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'
import { requireScope } from '../http/auth.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import type { StoredSurvey } from './document.ts'
import {
  createSurveyFlag,
  internalTargetingFilters,
  mergedFilters,
  syncSurveyFlags,
  updateSurveyFlag,
} from './flags.ts'
import { surveyBody } from './serialize.ts'
import { SurveyStore } from './store.ts'
import {
  checkSurvey,
  cleanAppearance,
  cleanBaseLanguage,
  cleanConditions,
  cleanQuestions,
  cleanTranslations,
  SurveyInput,
} from './validate.ts'

// Management API of surveys under both project prefixes (PostHog's SurveyViewSet):
//   GET/POST            …/surveys/        list (paged, newest first) / create (201)
//   GET/PATCH/DELETE    …/surveys/:id/    retrieve / update / delete (204)
// Responses are ordinary events (`survey sent`, …) and are queried like any other event.

const READ = 'survey:read'
const WRITE = 'survey:write'
const FLAG_WRITE = 'feature_flag:write'
const TAGS = ['surveys']

const ProjectParams = z.object({ project_id: z.string() })
const SurveyParams = ProjectParams.extend({ id: z.string() })
const ListQuery = PageQuery.extend({
  archived: z.enum(['true', 'false']).optional(),
  type: z.string().optional(),
  search: z.string().max(1000).optional().describe('case-insensitive substring of name or description'),
  ids: z.string().optional().describe('comma-separated survey ids'),
})

/** The survey with the fields of `input` applied (validation of each field included). */
function applyInput(base: StoredSurvey, input: SurveyInput): StoredSurvey {
  const next: StoredSurvey = { ...base }
  const simple = [
    'name',
    'description',
    'type',
    'schedule',
    'linked_flag_id',
    'linked_insight_id',
    'start_date',
    'end_date',
    'archived',
    'responses_limit',
    'iteration_count',
    'iteration_frequency_days',
    'enable_partial_responses',
    'enable_iframe_embedding',
  ] as const
  for (const k of simple) if (input[k] !== undefined) (next as Record<string, unknown>)[k] = input[k]
  if (input.questions !== undefined) next.questions = cleanQuestions(input.questions)
  if (input.conditions !== undefined) next.conditions = cleanConditions(input.conditions)
  if (input.appearance !== undefined) next.appearance = cleanAppearance(input.appearance)
  if (input.base_language !== undefined) next.base_language = cleanBaseLanguage(input.base_language)
  if (input.translations !== undefined) next.translations = cleanTranslations(input.translations)
  return next
}

export async function registerSurveyRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const store = await SurveyStore.open(ctx.rt.nc)
  const flags = await FlagStore.open(ctx.rt.nc)
  const cache = await flagCacheFor(ctx.rt.nc, ctx.rt.log)

  // Flags just written may not have reached the watched cache yet; they win over it.
  const lookup = (team: number, written: StoredFlag[] = []) => {
    const byId = new Map(cache.flags(team).map((f) => [f.id, f]))
    for (const f of written) byId.set(f.id, f)
    return (id: number | null) => (id === null ? undefined : byId.get(id))
  }

  async function existingFlag(team: number, id: number, message: string): Promise<StoredFlag> {
    const f = await flags.get(team, id).catch(() => undefined)
    if (!f || f.deleted) throw new ValidationError(message)
    return f
  }

  /** validate(): the flags a survey points at belong to the project; variant rules. */
  async function checkLinks(team: number, next: StoredSurvey, input: SurveyInput): Promise<void> {
    const linked =
      next.linked_flag_id !== null && input.linked_flag_id != null
        ? await existingFlag(team, next.linked_flag_id, 'Feature Flag with this ID does not exist')
        : undefined
    if (input.targeting_flag_id != null) {
      await existingFlag(team, input.targeting_flag_id, 'Targeting Feature Flag with this ID does not exist')
    }
    const variant = input.conditions !== undefined ? next.conditions?.linkedFlagVariant : undefined
    if (typeof variant === 'string' && variant) {
      if (!linked) {
        throw new ValidationError('linkedFlagVariant can only be used when a linked_flag_id is specified')
      }
      const variants = (linked.filters.multivariate?.variants ?? []).map((v) => v.key)
      if (variant !== 'any' && !variants.includes(variant)) {
        throw new ValidationError(
          variants.length
            ? `Feature flag variant '${variant}' does not exist. Available variants: ${variants.join(', ')}`
            : `Feature flag variant '${variant}' specified but the linked feature flag has no variants`,
        )
      }
    }
    checkSurvey(next, input)
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/surveys/',
    scope: READ,
    tags: TAGS,
    summary: 'List surveys (newest first)',
    query: ListQuery,
    handler: async (req, _reply, { project }) => {
      const q = req.query
      const ids = q.ids ? new Set(q.ids.split(',').map((s) => s.trim().toLowerCase())) : undefined
      const search = q.search?.toLowerCase()
      const all = (await store.list(project.id)).filter(
        (s) =>
          (q.archived === undefined || s.archived === (q.archived === 'true')) &&
          (q.type === undefined || s.type === q.type) &&
          (!ids || ids.has(s.id)) &&
          (!search || `${s.name}\u0000${s.description}`.toLowerCase().includes(search)),
      )
      const page = paginate(req, q, all)
      const flag = lookup(project.id)
      const user = userResolver(ctx.rt.accounts)
      return {
        ...page,
        results: await Promise.all(
          page.results.map(async (s) => surveyBody(s, flag, await user(s.created_by))),
        ),
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/surveys/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Create a survey',
    body: SurveyInput,
    handler: async (req, reply, { principal, project }) => {
      const input = req.body
      if (!input.name) throw new ValidationError('This field is required.', 'name', 'required')
      if (!input.type) throw new ValidationError('This field is required.', 'type', 'required')
      if (input.targeting_flag_filters || input.targeting_flag_id != null) requireScope(principal, FLAG_WRITE)
      await checkFilterPatterns(input.targeting_flag_filters, project.id, 'targeting_flag_filters')
      const base: StoredSurvey = {
        id: randomUUID(),
        team_id: project.id,
        name: input.name,
        description: '',
        type: input.type,
        schedule: 'once',
        linked_flag_id: null,
        linked_insight_id: null,
        targeting_flag_id: input.targeting_flag_id ?? null,
        internal_targeting_flag_id: null,
        questions: null,
        conditions: null,
        appearance: null,
        start_date: null,
        end_date: null,
        archived: false,
        responses_limit: null,
        iteration_count: null,
        iteration_frequency_days: null,
        enable_partial_responses: false,
        enable_iframe_embedding: false,
        base_language: 'en',
        translations: null,
        created_at: new Date().toISOString(),
        created_by: principal.user.id,
      }
      const next = applyInput(base, input)
      await checkLinks(project.id, next, input)
      const names = (await store.list(project.id)).some((s) => s.name === next.name)
      if (names) throw new ValidationError('There is already a survey with this name.', null, 'unique')
      const written: StoredFlag[] = []
      const running = !!next.start_date && !next.end_date && !next.archived
      try {
        if (input.targeting_flag_filters) {
          const f = await createSurveyFlag(
            flags,
            next,
            input.targeting_flag_filters,
            running,
            principal.user.id,
          )
          written.push(f)
          next.targeting_flag_id = f.id
        }
        const internal = await createSurveyFlag(
          flags,
          next,
          internalTargetingFilters(next),
          running,
          principal.user.id,
          '-custom',
        )
        next.internal_targeting_flag_id = internal.id
        await store.create(next)
        written.push(...(await syncSurveyFlags(flags, next)))
      } catch (err) {
        // The survey was not written: the flags made for it go too.
        for (const f of written)
          await updateSurveyFlag(flags, project.id, f.id, { deleted: true }).catch(() => undefined)
        if (next.internal_targeting_flag_id !== null) {
          await updateSurveyFlag(flags, project.id, next.internal_targeting_flag_id, { deleted: true }).catch(
            () => undefined,
          )
        }
        throw err
      }
      const user = userResolver(ctx.rt.accounts)
      return reply.code(201).send(surveyBody(next, lookup(project.id, written), await user(next.created_by)))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/surveys/:id/',
    scope: READ,
    tags: TAGS,
    summary: 'Retrieve a survey',
    params: SurveyParams,
    handler: async (req, _reply, { project }) => {
      const s = await store.get(project.id, req.params.id)
      if (!s) throw new NotFound()
      return surveyBody(s, lookup(project.id), await userResolver(ctx.rt.accounts)(s.created_by))
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/surveys/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Update a survey; start_date/end_date launch and stop it',
    params: SurveyParams,
    body: SurveyInput,
    handler: async (req, _reply, { principal, project }) => {
      const id = req.params.id
      const input = req.body
      const current = await store.get(project.id, id)
      if (!current) throw new NotFound()
      if (input.targeting_flag_filters || input.targeting_flag_id != null || input.remove_targeting_flag) {
        requireScope(principal, FLAG_WRITE)
      }
      await checkFilterPatterns(input.targeting_flag_filters, project.id, 'targeting_flag_filters')
      const next = applyInput(current, input)
      if (input.targeting_flag_id != null) next.targeting_flag_id = input.targeting_flag_id
      await checkLinks(project.id, next, input)
      const written: StoredFlag[] = []
      if (input.remove_targeting_flag && current.targeting_flag_id !== null) {
        const removed = await updateSurveyFlag(flags, project.id, current.targeting_flag_id, {
          deleted: true,
        })
        if (removed) written.push(removed)
        next.targeting_flag_id = null
      }
      if (input.targeting_flag_filters) {
        const existing =
          next.targeting_flag_id !== null
            ? await flags.get(project.id, next.targeting_flag_id).catch(() => undefined)
            : undefined
        if (existing && !existing.deleted) {
          const f = await updateSurveyFlag(flags, project.id, existing.id, {
            filters: mergedFilters(existing.filters, input.targeting_flag_filters),
          })
          if (f) written.push(f)
        } else {
          const f = await createSurveyFlag(
            flags,
            next,
            input.targeting_flag_filters,
            false,
            principal.user.id,
          )
          written.push(f)
          next.targeting_flag_id = f.id
        }
      }
      if (next.internal_targeting_flag_id === null) {
        const internal = await createSurveyFlag(
          flags,
          next,
          internalTargetingFilters(next),
          false,
          principal.user.id,
          '-custom',
        )
        next.internal_targeting_flag_id = internal.id
      }
      const done = await store.update(project.id, id, (cur) => ({
        ...applyInput(cur, input),
        targeting_flag_id: next.targeting_flag_id,
        internal_targeting_flag_id: next.internal_targeting_flag_id,
      }))
      if (!done) throw new NotFound()
      written.push(...(await syncSurveyFlags(flags, done.after)))
      const user = userResolver(ctx.rt.accounts)
      return surveyBody(done.after, lookup(project.id, written), await user(done.after.created_by))
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/surveys/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Delete a survey and the flags it owns',
    params: SurveyParams,
    handler: async (req, reply, { principal, project }) => {
      const id = req.params.id
      const current = await store.get(project.id, id)
      if (!current) throw new NotFound()
      if (current.targeting_flag_id !== null) requireScope(principal, FLAG_WRITE)
      await store.delete(project.id, current.id)
      for (const flagId of [current.targeting_flag_id, current.internal_targeting_flag_id]) {
        if (flagId !== null) await updateSurveyFlag(flags, project.id, flagId, { deleted: true })
      }
      return reply.code(204).send()
    },
  })
}

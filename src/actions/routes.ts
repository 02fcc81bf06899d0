import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { userResolver } from '../accounts/user-body.ts'
import { cohortDocsFor } from '../cohorts/cache.ts'
import { actionDocsFor } from './cache.ts'
import { CohortStore } from '../cohorts/store.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { type Action, ActionWriteSchema } from './document.ts'
import { selectorRegex } from './selector.ts'
import { ActionStore } from './store.ts'
import { checkSteps } from './validate.ts'

// Actions (PostHog's /api/projects/:id/actions/, posthog/api/action.py):
//   GET/POST  …/actions/        list ({results}, as PostHog answers) / create (201)
//   GET/PATCH …/actions/:id/    retrieve / update (soft delete: PATCH {"deleted": true})
//   DELETE    …/actions/:id/    405: actions are only soft deleted
// Names are unique among a project's live actions; steps are checked before they are saved
// (selectors, RE2 patterns, cohorts named by their filters: validate.ts).

const READ = 'action:read'
const WRITE = 'action:write'
const TAGS = ['actions']

const Params = z.object({ id: z.string() })

function actionId(raw: string): number {
  if (!/^\d{1,12}$/.test(raw)) throw new NotFound()
  return Number(raw)
}

export async function registerActionRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const [store, cohortStore, cohorts, watched] = await Promise.all([
    ActionStore.open(ctx.rt.nc),
    CohortStore.open(ctx.rt.nc),
    cohortDocsFor(ctx.rt.nc, ctx.rt.log),
    actionDocsFor(ctx.rt.nc, ctx.rt.log),
  ])
  /** The written action, answered once this process's queries see it (read-your-writes). */
  const written = async (a: Action) => {
    await watched.caughtUp()
    return body(a)
  }
  const users = userResolver(ctx.rt.accounts)
  const paths = (p: string) => [p, `${p}/`]

  const body = async (a: Action) => ({
    id: a.id,
    name: a.name,
    description: a.description,
    tags: a.tags,
    post_to_slack: a.post_to_slack,
    slack_message_format: a.slack_message_format,
    steps: a.steps.map((s) => ({ ...s, selector_regex: regexOf(s.selector) })),
    created_at: a.created_at,
    created_by: await users(a.created_by),
    deleted: a.deleted,
    is_calculating: false,
    last_calculated_at: a.updated_at,
    team_id: a.team_id,
    is_action: true,
    bytecode_error: null,
    pinned_at: a.pinned_at,
    creation_context: null,
  })

  /** The steps' cohorts must be live cohorts of the project (read from the bucket if the watch lags). */
  const cohortChecker = async (team: number, steps: Action['steps']) => {
    const named = new Set<number>()
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) return v.forEach(walk)
      if (!v || typeof v !== 'object') return
      const o = v as Record<string, unknown>
      if (Array.isArray(o.values)) o.values.forEach(walk)
      if (typeof o.type === 'string' && o.type.endsWith('cohort'))
        named.add(Number(Array.isArray(o.value) ? o.value[0] : o.value))
    }
    steps.forEach((s) => walk(s.properties))
    const live = new Set<number>()
    for (const id of named) {
      const c = cohorts.get(team, id) ?? (await cohortStore.get(team, id).catch(() => undefined))
      if (c && !c.deleted) live.add(id)
    }
    return (id: number) => live.has(id)
  }

  const check = async (team: number, input: z.infer<typeof ActionWriteSchema>, self?: number) => {
    if (input.steps) checkSteps(input.steps, await cohortChecker(team, input.steps))
    if (input.name !== undefined && input.name !== null && input.deleted !== true) {
      const other = (await store.list(team)).find((a) => !a.deleted && a.id !== self && a.name === input.name)
      if (other) {
        throw new ValidationError(
          `This project already has an action with this name, ID ${other.id}`,
          'name',
          'unique',
        )
      }
    }
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/actions'),
    scope: READ,
    tags: TAGS,
    handler: async (_req, _reply, { project }) => {
      const live = (await store.list(project.id)).filter((a) => !a.deleted)
      return { results: await Promise.all(live.map(body)) }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: paths('/actions'),
    scope: WRITE,
    body: ActionWriteSchema,
    tags: TAGS,
    handler: async (req, reply, { project, principal }) => {
      await check(project.id, req.body)
      return reply.code(201).send(await written(await store.create(project.id, req.body, principal.user.id)))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/actions/:id'),
    scope: READ,
    params: Params,
    tags: TAGS,
    handler: async (req, _reply, { project }) => {
      const a = await store.get(project.id, actionId(req.params.id))
      if (a.deleted) throw new NotFound()
      return body(a)
    },
  })

  for (const method of ['PATCH', 'PUT'] as const) {
    projectRoute(app, ctx, {
      method,
      path: paths('/actions/:id'),
      scope: WRITE,
      params: Params,
      body: ActionWriteSchema,
      tags: TAGS,
      handler: async (req, _reply, { project }) => {
        const id = actionId(req.params.id)
        const current = await store.get(project.id, id)
        // a restored action's name must still be free
        const name =
          req.body.name !== undefined ? req.body.name : req.body.deleted === false ? current.name : undefined
        await check(project.id, { ...req.body, name }, id)
        return written(await store.update(project.id, id, req.body))
      },
    })
  }

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: paths('/actions/:id'),
    scope: WRITE,
    params: Params,
    tags: TAGS,
    handler: async (_req, reply) => reply.code(405).send(),
  })
}

/** PostHog shows each step's selector as the pattern it compiles to (null without one). */
function regexOf(selector: string | null | undefined): string | null {
  if (!selector) return null
  try {
    return selectorRegex(selector)
  } catch {
    return null
  }
}

import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFound, ValidationError } from '../http/errors.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { dashboardFilter } from './filters.ts'
import { refreshMode } from './results.ts'
import { insightBasicBody, insightBody, tilesByInsight } from './serialize.ts'
import { type DashboardsService, refuseHardDelete } from './service.ts'
import type { Insight, InsightFields } from './store.ts'

// Saved insights (posthog/api/insight.py): list, create, retrieve, update; soft delete only
// (PATCH `deleted: true`; DELETE is a 405, as PostHog's ForbidDestroyModel). Results come from the
// query endpoint's runner and cache (results.ts), in the `?refresh=` mode asked, by default the
// cache only (force_cache), as in PostHog.

const READ = 'insight:read'
const WRITE = 'insight:write'
const TAGS = ['insights']

const Writable = z.object({
  name: z.string().max(400).nullable().optional(),
  derived_name: z.string().max(400).nullable().optional(),
  description: z.string().max(400).nullable().optional(),
  query: z.unknown().optional(),
  filters: z.record(z.string(), z.unknown()).optional(),
  order: z.number().int().nullable().optional(),
  deleted: z.boolean().optional(),
  saved: z.boolean().optional(),
  favorited: z.boolean().optional(),
  tags: z.array(z.string().max(255)).max(100).optional(),
  dashboards: z.array(z.number().int()).max(1000).optional(),
})
type Writable = z.infer<typeof Writable>

// the fields whose change moves last_modified_at (PostHog's MATERIAL_INSIGHT_FIELDS)
const MATERIAL = ['name', 'description', 'filters', 'query']

const truthy = (v: string | undefined) =>
  v !== undefined && ['y', 'yes', 't', 'true', 'on', '1'].includes(v.toLowerCase())

const ORDER_FIELDS = ['id', 'order', 'name', 'created_at', 'last_modified_at', 'updated_at']

const ListQuery = PageQuery.extend({
  short_id: z.string().optional(),
  search: z.string().optional().describe('name, derived name, description or a tag containing it'),
  favorited: z.string().optional().describe('present: favorited insights only'),
  saved: z.string().optional().describe('true: saved or on a dashboard; false: not saved'),
  created_by: z.coerce.number().int().optional(),
  user: z.string().optional().describe("present: the caller's own insights"),
  dashboards: z.string().optional().describe('JSON list of dashboard ids: insights on all of them'),
  basic: z.string().optional().describe('true: without results (PostHog InsightBasicSerializer)'),
  refresh: z.string().optional(),
  order: z
    .string()
    .refine((o) => ORDER_FIELDS.includes(o.replace(/^-/, '')), {
      message: `one of ${ORDER_FIELDS.join(', ')}`,
    })
    .optional(),
})

const RetrieveQuery = z.object({
  refresh: z.string().optional(),
  from_dashboard: z.coerce.number().int().optional(),
  basic: z.string().optional(),
})

const IdParams = z.object({ id: z.coerce.number().int() })

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return 1
  if (b === null || b === undefined) return -1
  return a < b ? -1 : 1
}

function fields(body: Writable): InsightFields {
  const { dashboards: _dashboards, ...rest } = body
  return rest
}

export function registerInsightRoutes(app: FastifyInstance, ctx: ApiContext, svc: DashboardsService): void {
  const live = (i: Insight | undefined) => (i && !i.deleted ? i : undefined)

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/insights/',
    scope: READ,
    tags: TAGS,
    summary: 'List saved insights, with their cached results (refresh: the query endpoint modes)',
    query: ListQuery,
    handler: async (req, _reply, access) => {
      const q = req.query
      const { project, principal } = access
      const { insights, dashboards } = await svc.team(project.id)
      const tiles = tilesByInsight(dashboards)
      let onDashboards: number[] | undefined
      if (q.dashboards) {
        try {
          onDashboards = (JSON.parse(q.dashboards) as unknown[]).map(Number)
        } catch {
          throw new ValidationError('dashboards must be a JSON list of ids', 'dashboards')
        }
      }
      const s = q.search?.toLowerCase()
      const list = [...insights.values()].filter((i) => {
        if (i.deleted) return false
        const on = tiles.get(i.id) ?? []
        if (q.short_id !== undefined && i.short_id !== q.short_id) return false
        if (q.created_by !== undefined && i.created_by !== q.created_by) return false
        if (q.user !== undefined && i.created_by !== principal.user.id) return false
        if (q.favorited !== undefined && !i.favorited) return false
        if (q.saved !== undefined) {
          if (truthy(q.saved) ? !(i.saved || on.length) : i.saved) return false
        }
        if (onDashboards && !onDashboards.every((d) => on.some((t) => t.dashboard_id === d))) return false
        if (s) {
          const text = [i.name, i.derived_name, i.description, ...i.tags].map((x) => (x ?? '').toLowerCase())
          if (!text.some((x) => x.includes(s))) return false
        }
        return true
      })
      const order = q.order ?? 'order'
      const field = order.replace(/^-/, '') as keyof Insight
      const desc = order.startsWith('-')
      list.sort((a, b) => {
        const c = compare(a[field], b[field])
        return (desc ? -c : c) || compare(b.last_modified_at, a.last_modified_at) || b.id - a.id
      })
      const page = paginate(req, q, list)
      const basic = truthy(q.basic)
      const serve = svc.access(req, access, refreshMode(q.refresh))
      return {
        ...page,
        results: await Promise.all(
          page.results.map((i) =>
            basic
              ? insightBasicBody(i, tiles.get(i.id) ?? [], serve.users)
              : insightBody(i, tiles.get(i.id) ?? [], serve),
          ),
        ),
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/insights/',
    scope: WRITE,
    tags: TAGS,
    summary:
      'Save an insight (query: an InsightVizNode, DataVisualizationNode or DataTableNode); dashboards adds it to them',
    body: Writable,
    handler: async (req, reply, access) => {
      const { project, principal } = access
      await svc.checkQuery(req.body.query, project)
      const dashboards = await svc.store.dashboards(project.id)
      for (const id of req.body.dashboards ?? []) {
        if (!dashboards.some((d) => d.id === id))
          throw new ValidationError('Dashboard not found', 'dashboards')
      }
      const insight = await svc.store.createInsight(project.id, principal.user.id, fields(req.body))
      if (req.body.dashboards?.length)
        await svc.setInsightDashboards(project.id, insight.id, req.body.dashboards)
      const tiles = tilesByInsight(await svc.store.dashboards(project.id))
      return reply
        .code(201)
        .send(await insightBody(insight, tiles.get(insight.id) ?? [], svc.access(req, access, 'force_cache')))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/insights/:id/',
    scope: READ,
    tags: TAGS,
    summary:
      'Retrieve an insight with its results (refresh: the query endpoint modes; default the cache only)',
    params: IdParams,
    query: RetrieveQuery,
    handler: async (req, _reply, access) => {
      const { project } = access
      const insight = live(await svc.store.insight(project.id, req.params.id))
      if (!insight) throw new NotFound()
      const dashboards = await svc.store.dashboards(project.id)
      const tiles = tilesByInsight(dashboards).get(insight.id) ?? []
      if (truthy(req.query.basic))
        return insightBasicBody(insight, tiles, svc.access(req, access, 'force_cache').users)
      const from = req.query.from_dashboard
      const dashboard = from === undefined ? undefined : dashboards.find((d) => d.id === from && !d.deleted)
      const tile = dashboard?.tiles.find((t) => t.insight_id === insight.id && !t.deleted)
      const serve = svc.access(req, access, refreshMode(req.query.refresh))
      const body = await insightBody(insight, tiles, serve, tile ? dashboardFilter(dashboard!.filters) : {})
      return tile ? { ...body, color: tile.color, layouts: tile.layouts } : body
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/insights/:id/',
    scope: WRITE,
    tags: TAGS,
    summary:
      'Update an insight; deleted: true soft-deletes it (and takes it off its dashboards), false restores it',
    params: IdParams,
    body: Writable,
    handler: async (req, _reply, access) => {
      const { project, principal } = access
      const current = await svc.store.insight(project.id, req.params.id)
      // a soft-deleted insight can only be brought back
      if (!current || (current.deleted && req.body.deleted !== false)) throw new NotFound()
      if (req.body.query !== undefined) await svc.checkQuery(req.body.query, project)
      const material = Object.keys(req.body).some((k) => MATERIAL.includes(k))
      const updated = await svc.store.updateInsight(
        project.id,
        current.id,
        principal.user.id,
        fields(req.body),
        material,
      )
      if (!updated) throw new NotFound()
      if (req.body.deleted === true) await svc.removeFromDashboards(project.id, updated.id)
      else if (req.body.dashboards !== undefined)
        await svc.setInsightDashboards(project.id, updated.id, req.body.dashboards)
      const tiles = tilesByInsight(await svc.store.dashboards(project.id)).get(updated.id) ?? []
      return insightBody(updated, tiles, svc.access(req, access, 'force_cache'))
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/insights/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Refused (405): soft-delete with PATCH deleted: true',
    params: IdParams,
    handler: async (_req, reply) => refuseHardDelete(reply),
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/insights/:id/viewed/',
    scope: READ,
    tags: TAGS,
    summary: 'Note that the caller viewed the insight (accepted; Burrow keeps no view history)',
    params: IdParams,
    handler: async (req, reply, { project }) => {
      if (!live(await svc.store.insight(project.id, req.params.id))) throw new NotFound()
      return reply.code(201).send()
    },
  })
}

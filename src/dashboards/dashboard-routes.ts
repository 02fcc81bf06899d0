import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFound, ValidationError } from '../http/errors.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { dashboardFilter } from './filters.ts'
import { refreshMode } from './results.ts'
import { dashboardBasicBody, dashboardBody, tilesByInsight } from './serialize.ts'
import { type DashboardsService, newTile, refuseHardDelete } from './service.ts'
import type { Dashboard, DashboardFields, Tile } from './store.ts'

// Dashboards (posthog/api/dashboards/dashboard.py): CRUD with tiles (an insight, added through the
// insight's `dashboards`, or a text card, added through the dashboard's `tiles`), each with a
// layout; soft delete only. Retrieving one calculates its insight tiles in the `?refresh=` mode asked
// (default: the cache only), all at once up to the key's concurrency, with the dashboard's filters
// (date range, properties) or `?filters_override=` applied to every tile.

const READ = 'dashboard:read'
const WRITE = 'dashboard:write'
const TAGS = ['dashboards']

const TileInput = z
  .object({
    id: z.number().int().optional(),
    text: z
      .object({ id: z.number().int().optional(), body: z.string().max(4000).nullable().optional() })
      .passthrough()
      .nullable()
      .optional(),
    layouts: z.record(z.string(), z.unknown()).optional(),
    color: z.string().max(400).nullable().optional(),
    deleted: z.boolean().optional(),
    filters_overrides: z.record(z.string(), z.unknown()).optional(),
    show_description: z.boolean().nullable().optional(),
    transparent_background: z.boolean().nullable().optional(),
  })
  .passthrough()

const Writable = z.object({
  name: z.string().max(400).nullable().optional(),
  description: z.string().max(10_000).optional(),
  pinned: z.boolean().optional(),
  deleted: z.boolean().optional(),
  filters: z.record(z.string(), z.unknown()).optional(),
  variables: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string().max(255)).max(100).optional(),
  breakdown_colors: z.unknown().optional(),
  data_color_theme_id: z.number().int().nullable().optional(),
  use_dashboard: z.number().int().nullable().optional(),
  use_template: z.string().optional(),
  delete_insights: z.boolean().optional(),
  tiles: z.array(TileInput).max(500).optional(),
})
type Writable = z.infer<typeof Writable>

const ListQuery = PageQuery.extend({
  tags: z.union([z.string(), z.array(z.string())]).optional(),
  creation_mode: z.enum(['default', 'template', 'duplicate']).optional(),
  search: z.string().optional(),
})

const RetrieveQuery = z.object({
  refresh: z.string().optional(),
  filters_override: z
    .string()
    .optional()
    .describe('JSON: filters used instead of the saved ones, for this view'),
})

const IdParams = z.object({ id: z.coerce.number().int() })

function fields(b: Writable): DashboardFields {
  const out: DashboardFields = {}
  for (const k of [
    'name',
    'description',
    'pinned',
    'filters',
    'variables',
    'tags',
    'breakdown_colors',
    'data_color_theme_id',
  ] as const) {
    if (b[k] !== undefined) (out as Record<string, unknown>)[k] = b[k]
  }
  return out
}

const byPinnedThenName = (a: Dashboard, b: Dashboard) =>
  Number(b.pinned) - Number(a.pinned) || (a.name ?? '').localeCompare(b.name ?? '') || a.id - b.id

export function registerDashboardRoutes(app: FastifyInstance, ctx: ApiContext, svc: DashboardsService): void {
  const sharedIds = async (team: number, dashboards: Dashboard[]) => {
    const shared = await Promise.all(dashboards.map((d) => svc.store.sharing(team, 'dashboard', d.id)))
    return new Set(dashboards.filter((_, i) => shared[i]?.enabled).map((d) => d.id))
  }

  /** The dashboard as DashboardSerializer shows it, its tiles calculated as `req` asks. */
  async function full(d: Dashboard, serve: ReturnType<DashboardsService['access']>, override?: unknown) {
    const { insights, dashboards } = await svc.team(d.team_id)
    const shared = (await svc.store.sharing(d.team_id, 'dashboard', d.id))?.enabled === true
    const filters = override === undefined ? undefined : { ...d.filters, ...(override as object) }
    return dashboardBody(
      d,
      insights,
      tilesByInsight(dashboards),
      shared,
      serve,
      filters === undefined ? undefined : dashboardFilter(filters),
    )
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/dashboards/',
    scope: READ,
    tags: TAGS,
    summary: 'List dashboards (pinned first, then by name), without their tiles',
    query: ListQuery,
    handler: async (req, _reply, access) => {
      const { project } = access
      const q = req.query
      const tags = q.tags === undefined ? [] : Array.isArray(q.tags) ? q.tags : [q.tags]
      const s = q.search?.toLowerCase()
      const all = await svc.store.dashboards(project.id)
      const list = all
        .filter((d) => !d.deleted)
        .filter((d) => !tags.length || d.tags.some((t) => tags.includes(t)))
        .filter((d) => !q.creation_mode || d.creation_mode === q.creation_mode)
        .filter((d) => !s || `${d.name ?? ''}\u0000${d.description}`.toLowerCase().includes(s))
        .sort(byPinnedThenName)
      const page = paginate(req, q, list)
      const shared = await sharedIds(project.id, page.results)
      const users = svc.access(req, access, 'force_cache').users
      return {
        ...page,
        results: await Promise.all(page.results.map((d) => dashboardBasicBody(d, shared.has(d.id), users))),
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/dashboards/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Create a dashboard (use_dashboard: a copy of that one, showing the same insights)',
    body: Writable,
    handler: async (req, reply, access) => {
      const { project, principal } = access
      const b = req.body
      if (b.use_template)
        throw new ValidationError(`Invalid template provided: ${b.use_template}`, 'use_template')
      let tiles: Tile[] = []
      const f = fields(b)
      if (b.use_dashboard !== undefined && b.use_dashboard !== null) {
        const source = await svc.store.dashboard(project.id, b.use_dashboard)
        if (!source || source.deleted) throw new ValidationError('Invalid value provided', 'use_dashboard')
        tiles = []
        for (const t of source.tiles.filter((x) => !x.deleted)) {
          const text = t.text ? { ...t.text, id: await svc.store.nextId('text') } : null
          tiles.push({ ...t, id: await svc.store.nextId('tile'), text })
        }
        f.filters ??= source.filters
        f.variables ??= source.variables
        f.creation_mode = 'duplicate'
      }
      const d = await svc.store.createDashboard(project.id, principal.user.id, f, tiles)
      return reply.code(201).send(await full(d, svc.access(req, access, 'force_cache')))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/dashboards/:id/',
    scope: READ,
    tags: TAGS,
    summary:
      'Retrieve a dashboard with its tiles calculated (refresh: the query endpoint modes; default the cache only)',
    params: IdParams,
    query: RetrieveQuery,
    handler: async (req, _reply, access) => {
      const d = await svc.store.dashboard(access.project.id, req.params.id)
      if (!d || d.deleted) throw new NotFound()
      let override: unknown
      if (req.query.filters_override !== undefined) {
        try {
          override = JSON.parse(req.query.filters_override)
        } catch {
          throw new ValidationError('Invalid JSON passed in filters_override parameter', 'filters_override')
        }
        if (typeof override !== 'object' || override === null || Array.isArray(override)) {
          throw new ValidationError('filters_override must be a JSON object', 'filters_override')
        }
      }
      const accessed = await svc.store.changeDashboard(d.team_id, d.id, (cur) => ({
        ...cur,
        last_accessed_at: new Date().toISOString(),
      }))
      return full(accessed ?? d, svc.access(req, access, refreshMode(req.query.refresh)), override)
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/dashboards/:id/',
    scope: WRITE,
    tags: TAGS,
    summary:
      'Update a dashboard: its fields, its tiles (text cards, layouts, removal), deleted: true soft-deletes it (delete_insights: and the insights only it shows)',
    params: IdParams,
    body: Writable,
    handler: async (req, _reply, access) => {
      const { project, principal } = access
      const b = req.body
      const current = await svc.store.dashboard(project.id, req.params.id)
      if (!current || (current.deleted && b.deleted !== false)) throw new NotFound()
      const now = new Date().toISOString()
      // ids for the tiles and text cards to create, taken before the (retried) change
      const newIds = await Promise.all(
        (b.tiles ?? []).map(async (t) => ({
          tile: t.id === undefined ? await svc.store.nextId('tile') : t.id,
          text: t.text && t.text.id === undefined ? await svc.store.nextId('text') : t.text?.id,
        })),
      )
      for (const t of b.tiles ?? []) {
        if (t.id !== undefined && !current.tiles.some((x) => x.id === t.id)) {
          throw new ValidationError(`Tile ${t.id} is not on this dashboard.`, 'tiles')
        }
      }
      let alsoDelete: number[] = []
      if (b.deleted === true && b.delete_insights) {
        const others = tilesByInsight(
          (await svc.store.dashboards(project.id)).filter((d) => d.id !== current.id),
        )
        alsoDelete = current.tiles
          .filter((t) => !t.deleted && t.insight_id !== null && !(others.get(t.insight_id)?.length ?? 0))
          .map((t) => t.insight_id!)
      }
      const updated = await svc.store.changeDashboard(project.id, current.id, (cur) => {
        const next: Dashboard = { ...cur, ...fields(b) }
        if (b.deleted !== undefined) {
          next.deleted = b.deleted
          next.tiles = cur.tiles.map((t) => ({ ...t, deleted: b.deleted! }))
        }
        ;(b.tiles ?? []).forEach((t, n) => {
          const ids = newIds[n]!
          const existing = next.tiles.find((x) => x.id === ids.tile)
          const text = t.text
            ? {
                id: ids.text!,
                body: t.text.body ?? null,
                created_by: existing?.text?.created_by ?? principal.user.id,
                last_modified_at: now,
                last_modified_by: existing?.text ? principal.user.id : null,
              }
            : undefined
          const base = existing ?? newTile(ids.tile, null, text ?? null, next.tiles)
          const tile: Tile = {
            ...base,
            ...(text ? { text } : {}),
            ...(t.layouts !== undefined ? { layouts: t.layouts } : {}),
            ...(t.color !== undefined ? { color: t.color } : {}),
            ...(t.deleted !== undefined ? { deleted: t.deleted } : {}),
            ...(t.filters_overrides !== undefined ? { filters_overrides: t.filters_overrides } : {}),
            ...(t.show_description !== undefined ? { show_description: t.show_description } : {}),
            ...(t.transparent_background !== undefined
              ? { transparent_background: t.transparent_background }
              : {}),
          }
          // a tile given without a text card and unknown here would be an empty tile: none is made
          if (!existing && !text) return
          next.tiles = existing ? next.tiles.map((x) => (x === existing ? tile : x)) : [...next.tiles, tile]
        })
        return next
      })
      if (!updated) throw new NotFound()
      for (const id of alsoDelete)
        await svc.store.updateInsight(project.id, id, principal.user.id, { deleted: true }, false)
      if (b.deleted === false && current.deleted) {
        // PostHog brings back the insights of the dashboard's tiles too
        for (const t of updated.tiles) {
          if (t.insight_id === null) continue
          const i = await svc.store.insight(project.id, t.insight_id)
          if (i?.deleted)
            await svc.store.updateInsight(project.id, i.id, principal.user.id, { deleted: false }, false)
        }
      }
      return full(updated, svc.access(req, access, 'force_cache'))
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/dashboards/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Refused (405): soft-delete with PATCH deleted: true',
    params: IdParams,
    handler: async (_req, reply) => refuseHardDelete(reply),
  })
}

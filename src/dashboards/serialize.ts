import type { Project } from '../accounts/documents.ts'
import type { UserBasic } from '../accounts/user-body.ts'
import type { RefreshMode } from '../queries/schema.ts'
import type { QueryRunner } from '../queries/runner.ts'
import { AppError } from '../http/errors.ts'
import { applyDashboardFilters, type DashboardFilter } from './filters.ts'
import { type InsightResult, insightResult, inPool, noResult, type RunAs } from './results.ts'
import type { Dashboard, Insight, Tile } from './store.ts'

// The response bodies of the insight and dashboard endpoints, with PostHog's serializers' fields
// (posthog/api/insight.py InsightSerializer / InsightBasicSerializer, posthog/api/dashboards/
// dashboard.py DashboardSerializer / DashboardBasicSerializer / DashboardTileSerializer). Burrow has
// no per-dashboard access control: every dashboard is "everyone in the project can edit" (21), and
// a caller with the write scope may edit (37); a shared view may only view (21).

export const RESTRICTION_EVERYONE_CAN_EDIT = 21
export const PRIVILEGE_CAN_VIEW = 21
export const PRIVILEGE_CAN_EDIT = 37

type Users = (id: number | null) => Promise<UserBasic | null>

/** How a body is being made: who asks (for the runs), in what mode, shared or not. */
export interface ServeContext {
  project: Project
  runner: QueryRunner
  users: Users
  mode: RefreshMode
  as: RunAs
  /** a public shared view: no user details, view-only */
  shared?: boolean
  /** how many of a dashboard's tiles are calculated at once */
  width: number
}

/** The live tiles that show each insight, from the project's dashboards. */
export function tilesByInsight(dashboards: Dashboard[]): Map<number, { id: number; dashboard_id: number }[]> {
  const out = new Map<number, { id: number; dashboard_id: number }[]>()
  for (const d of dashboards) {
    if (d.deleted) continue
    for (const t of d.tiles) {
      if (t.deleted || t.insight_id === null) continue
      const list = out.get(t.insight_id) ?? []
      list.push({ id: t.id, dashboard_id: d.id })
      out.set(t.insight_id, list)
    }
  }
  return out
}

function basicFields(i: Insight, tiles: { id: number; dashboard_id: number }[]) {
  return {
    id: i.id,
    short_id: i.short_id,
    name: i.name,
    derived_name: i.derived_name,
    filters: {},
    query: i.query,
    dashboards: tiles.map((t) => t.dashboard_id),
    dashboard_tiles: tiles.map((t) => ({ id: t.id, dashboard_id: t.dashboard_id, deleted: false })),
    description: i.description,
    saved: i.saved,
    tags: i.tags,
    updated_at: i.updated_at,
    created_at: i.created_at,
    last_modified_at: i.last_modified_at,
    favorited: i.favorited,
  }
}

/** InsightBasicSerializer (`?basic=true`): no calculation. */
export async function insightBasicBody(
  i: Insight,
  tiles: { id: number; dashboard_id: number }[],
  users: Users,
) {
  return {
    ...basicFields(i, tiles),
    last_refresh: null,
    refreshing: false,
    created_by: await users(i.created_by),
  }
}

/**
 * InsightSerializer: the insight with its results in `ctx.mode`; `dashboard`: shown on that
 * dashboard, whose filters apply to its query (the query shown is the one that ran).
 */
export async function insightBody(
  i: Insight,
  tiles: { id: number; dashboard_id: number }[],
  ctx: ServeContext,
  filters: DashboardFilter = {},
  computed?: InsightResult,
) {
  const query = applyDashboardFilters(i.query, filters)
  const r = computed ?? (await insightResult(ctx.runner, ctx.project, query, ctx.mode, ctx.as))
  const { filters_hash, ...result } = r
  return {
    ...basicFields(i, tiles),
    query,
    order: i.order,
    deleted: i.deleted,
    ...result,
    created_by: ctx.shared ? null : await ctx.users(i.created_by),
    last_modified_by: ctx.shared ? null : await ctx.users(i.last_modified_by),
    is_sample: false,
    effective_restriction_level: RESTRICTION_EVERYONE_CAN_EDIT,
    effective_privilege_level: ctx.shared ? PRIVILEGE_CAN_VIEW : PRIVILEGE_CAN_EDIT,
    filters_hash,
  }
}

const basicDashboardFields = (d: Dashboard, isShared: boolean) => ({
  id: d.id,
  name: d.name,
  description: d.description,
  pinned: d.pinned,
  created_at: d.created_at,
  last_accessed_at: d.last_accessed_at,
  last_viewed_at: null,
  is_shared: isShared,
  deleted: d.deleted,
  creation_mode: d.creation_mode,
  tags: d.tags,
  restriction_level: RESTRICTION_EVERYONE_CAN_EDIT,
  effective_restriction_level: RESTRICTION_EVERYONE_CAN_EDIT,
  access_control_version: 'v2',
  team_id: d.team_id,
})

/** DashboardBasicSerializer (the list): no tiles. */
export async function dashboardBasicBody(d: Dashboard, isShared: boolean, users: Users) {
  return {
    ...basicDashboardFields(d, isShared),
    created_by: await users(d.created_by),
    effective_privilege_level: PRIVILEGE_CAN_EDIT,
    user_access_level: 'editor',
    last_refresh: null,
  }
}

/** The text card of a tile (PostHog's TextSerializer). */
async function textBody(t: Tile, d: Dashboard, ctx: ServeContext) {
  if (!t.text) return null
  return {
    id: t.text.id,
    body: t.text.body,
    created_by: ctx.shared ? null : await ctx.users(t.text.created_by),
    last_modified_at: t.text.last_modified_at,
    last_modified_by: ctx.shared ? null : await ctx.users(t.text.last_modified_by),
    team: d.team_id,
    dashboard_tiles: [{ id: t.id, dashboard_id: d.id, deleted: false }],
  }
}

/** A tile's layout position for ordering: top to bottom, then left to right ("sm" layout). */
function position(t: Tile): [number, number] {
  const sm = (t.layouts.sm ?? {}) as { x?: unknown; y?: unknown }
  return [typeof sm.y === 'number' ? sm.y : 100, typeof sm.x === 'number' ? sm.x : 100]
}

/**
 * DashboardSerializer with its tiles: every insight tile calculated in `ctx.mode`, at most
 * `ctx.width` at once, with the dashboard's filters (or `filtersOverride`) applied to each. A tile
 * whose query fails carries `error` instead of failing the dashboard.
 */
export async function dashboardBody(
  d: Dashboard,
  insights: Map<number, Insight>,
  tilesOf: Map<number, { id: number; dashboard_id: number }[]>,
  isShared: boolean,
  ctx: ServeContext,
  filtersOverride?: DashboardFilter,
) {
  const filters = filtersOverride ?? (d.filters as DashboardFilter)
  const tiles = d.tiles
    .filter((t) => !t.deleted && (t.insight_id === null || insights.get(t.insight_id)?.deleted === false))
    .sort((a, b) => {
      const [ay, ax] = position(a)
      const [by, bx] = position(b)
      return ay - by || ax - bx || a.id - b.id
    })
  const bodies = await inPool(
    tiles.map((t, order) => async () => {
      const base = {
        id: t.id,
        layouts: t.layouts,
        color: t.color,
        filters_overrides: t.filters_overrides,
        show_description: t.show_description,
        transparent_background: t.transparent_background,
        button_tile: null,
        order,
      }
      const insight = t.insight_id === null ? undefined : insights.get(t.insight_id)
      if (!insight) {
        return {
          ...base,
          insight: null,
          text: await textBody(t, d, ctx),
          last_refresh: null,
          is_cached: false,
        }
      }
      const tiles = tilesOf.get(insight.id) ?? []
      try {
        const body = await insightBody(insight, tiles, ctx, filters)
        return {
          ...base,
          insight: body,
          text: null,
          last_refresh: body.last_refresh,
          is_cached: body.is_cached,
        }
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err
        const body = await insightBody(insight, tiles, ctx, filters, noResult(ctx.project))
        return {
          ...base,
          insight: body,
          text: null,
          last_refresh: null,
          is_cached: false,
          error: { type: err.code, message: err.detail },
        }
      }
    }),
    ctx.width,
  )
  const refreshed = bodies.map((b) => b.last_refresh).filter((r): r is string => r !== null)
  return {
    ...basicDashboardFields(d, isShared),
    created_by: ctx.shared ? null : await ctx.users(d.created_by),
    effective_privilege_level: ctx.shared ? PRIVILEGE_CAN_VIEW : PRIVILEGE_CAN_EDIT,
    user_access_level: ctx.shared ? 'viewer' : 'editor',
    // the oldest result shown: the dashboard is as fresh as that
    last_refresh: refreshed.length ? refreshed.reduce((a, b) => (a < b ? a : b)) : null,
    filters,
    variables: d.variables,
    breakdown_colors: d.breakdown_colors,
    data_color_theme_id: d.data_color_theme_id,
    persisted_filters: Object.keys(d.filters).length ? d.filters : null,
    persisted_variables: Object.keys(d.variables).length ? d.variables : null,
    quick_filter_ids: [],
    tiles: bodies,
  }
}

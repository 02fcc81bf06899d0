// A dashboard's filters over one of its insights' queries, as PostHog applies them
// (posthog/hogql_queries/apply_dashboard_filters.py and each runner's apply_dashboard_filters): the
// wrapper nodes pass them to their source; insight kinds take the date range (both ends replaced when
// either is set) and AND the dashboard's property filters with their own; an EventsQuery takes them
// as after/before and more properties; a HogQLQuery in its `filters` (the `{filters}` placeholder).
// Other kinds are left as they are. Pure: the query is copied, never changed in place.

/** The nodes that wrap a query for display (PostHog's WRAPPER_NODE_KINDS). */
export const WRAPPER_KINDS = ['InsightVizNode', 'DataVisualizationNode', 'DataTableNode'] as const

/** PostHog's DashboardFilter (breakdown_filter is not applied here). */
export interface DashboardFilter {
  date_from?: string | null
  date_to?: string | null
  explicitDate?: boolean | null
  properties?: unknown[] | null
}

type Node = Record<string, unknown>

const INSIGHT_KINDS = new Set([
  'TrendsQuery',
  'FunnelsQuery',
  'RetentionQuery',
  'LifecycleQuery',
  'StickinessQuery',
  'PathsQuery',
])

const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The filters worth applying: an empty object (or none) changes nothing. */
export function dashboardFilter(raw: unknown): DashboardFilter {
  if (!isNode(raw)) return {}
  const f: DashboardFilter = {}
  if (typeof raw.date_from === 'string' && raw.date_from) f.date_from = raw.date_from
  if (typeof raw.date_to === 'string' && raw.date_to) f.date_to = raw.date_to
  if (typeof raw.explicitDate === 'boolean') f.explicitDate = raw.explicitDate
  if (Array.isArray(raw.properties) && raw.properties.length) f.properties = raw.properties
  return f
}

const hasAny = (f: DashboardFilter) => Boolean(f.date_from || f.date_to || f.properties?.length)

/** `query` with the dashboard's filters applied (the same object when they change nothing). */
export function applyDashboardFilters(query: unknown, filters: DashboardFilter): unknown {
  if (!isNode(query) || !hasAny(filters)) return query
  if ((WRAPPER_KINDS as readonly unknown[]).includes(query.kind) && isNode(query.source)) {
    return { ...query, source: applyDashboardFilters(query.source, filters) }
  }
  const dates = Boolean(filters.date_from || filters.date_to)
  if (INSIGHT_KINDS.has(String(query.kind))) {
    const next: Node = { ...query }
    if (filters.properties?.length) {
      const own = query.properties
      const ownGroup = Array.isArray(own)
        ? own.length
          ? { type: 'AND', values: own }
          : undefined
        : isNode(own)
          ? own
          : undefined
      next.properties = ownGroup
        ? { type: 'AND', values: [ownGroup, { type: 'AND', values: filters.properties }] }
        : filters.properties
    }
    if (dates) {
      const range = isNode(query.dateRange) ? query.dateRange : {}
      next.dateRange = { ...range, date_from: filters.date_from ?? null, date_to: filters.date_to ?? null }
      if (filters.explicitDate !== undefined) (next.dateRange as Node).explicitDate = filters.explicitDate
      // "all time" has no previous period to compare with
      if (filters.date_from === 'all' && isNode(query.compareFilter) && query.compareFilter.compare) {
        next.compareFilter = { ...query.compareFilter, compare: false }
      }
    }
    return next
  }
  if (query.kind === 'EventsQuery') {
    const next: Node = { ...query }
    if (dates) {
      next.after = filters.date_from ?? null
      next.before = filters.date_to ?? null
    }
    if (filters.properties?.length) {
      next.properties = [...(Array.isArray(query.properties) ? query.properties : []), ...filters.properties]
    }
    return next
  }
  if (query.kind === 'HogQLQuery') {
    const own = isNode(query.filters) ? query.filters : {}
    const next: Node = { ...own }
    if (dates) {
      const range = isNode(own.dateRange) ? own.dateRange : {}
      next.dateRange = { ...range, date_from: filters.date_from ?? null, date_to: filters.date_to ?? null }
    }
    if (filters.properties?.length) {
      next.properties = [...(Array.isArray(own.properties) ? own.properties : []), ...filters.properties]
    }
    return { ...query, filters: next }
  }
  return query
}

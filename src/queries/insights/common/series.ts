// The events a series counts: an EventsNode's event name (or every event), or the events an
// ActionsNode's action matches (`matchesAction`, resolved by the compiler from the project's
// catalog), and the series' own property filters.
import { currentCatalog } from '../../compile-cache.ts'
import { and, num, str } from './hogql.ts'
import { propertiesCondition } from './properties.ts'
import type { Properties, SeriesNode } from './schema.ts'

/** The HogQL condition an event meets to be one of the series' events (none: every event). */
export function nodeCondition(node: SeriesNode): string | undefined {
  if (node.kind === 'ActionsNode') return `matchesAction(${num(node.id)})`
  return node.event !== null && node.event !== undefined ? `event = ${str(node.event)}` : undefined
}

/** HogQL condition for one series plus the query-wide filters; `event: null` means all events. */
export function seriesCondition(node: SeriesNode, queryProperties?: Properties): string {
  return and([
    nodeCondition(node),
    propertiesCondition(node.properties),
    propertiesCondition(queryProperties),
  ])
}

/** PostHog's series label: the event name, or 'All events'; an action's name. */
export function seriesLabel(node: SeriesNode): string {
  if (node.kind === 'ActionsNode') return node.name ?? `Action ${node.id}`
  return node.event ?? 'All events'
}

/** What a series' `action` says of it in results: the event or action id, and which of the two. */
export function seriesEntity(node: SeriesNode): { id: string | number | null; type: 'events' | 'actions' } {
  return node.kind === 'ActionsNode'
    ? { id: node.id, type: 'actions' }
    : { id: node.event ?? null, type: 'events' }
}

/**
 * Gives actions without a name the name their definition has (the catalog the query compiles with),
 * so results are labelled as PostHog labels them. Call while compiling; changes `series` in place.
 */
export function nameActions(series: SeriesNode[]): void {
  const actions = currentCatalog()?.actions
  if (!actions) return
  for (const node of series) {
    if (node.kind !== 'ActionsNode' || node.name) continue
    const found = actions.find((a) => a.id === node.id)
    if (found?.name) node.name = found.name
  }
}

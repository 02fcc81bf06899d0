// The events a series (EventsNode) counts: its event name and its own property filters.
import { and, str } from './hogql.ts'
import { propertiesCondition } from './properties.ts'
import type { EventsNode, Properties } from './schema.ts'

/** HogQL condition for one series plus the query-wide filters; `event: null` means all events. */
export function seriesCondition(node: EventsNode, queryProperties?: Properties): string {
  return and([
    node.event !== null && node.event !== undefined ? `event = ${str(node.event)}` : undefined,
    propertiesCondition(node.properties),
    propertiesCondition(queryProperties),
  ])
}

/** PostHog's series label: the event name, or 'All events'. */
export function seriesLabel(node: EventsNode): string {
  return node.event ?? 'All events'
}

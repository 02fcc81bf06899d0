// WebOverviewQuery on POST /query/ (PostHog's posthog/hogql_queries/web_analytics/web_overview.py):
// visitors, views, sessions, session duration and bounce rate of the page views and screens in a
// date range, with the previous period beside them when compareFilter asks. Counted per session
// (docs/sessions.md): a session belongs to the period its first event is in. Conversion goals and revenue are refused (not supported yet). The request fields, ranges and
// filters are those of every web query kind (filters.ts).
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { and } from '../queries/insights/common/hogql.ts'
import { registerQueryKind } from '../queries/kinds.ts'
import type { DataFacts } from '../queries/person-overrides.ts'
import {
  compares,
  instantInRange,
  refuseUnsupported,
  WebQueryBaseSchema,
  webPropertiesCondition,
  webRanges,
  type WebRanges,
} from './filters.ts'
import { eventsLevel, sessionsLevel } from './levels.ts'

export const WebOverviewQuerySchema = WebQueryBaseSchema.extend({
  kind: z.literal('WebOverviewQuery'),
}).passthrough()
export type WebOverviewQuery = z.infer<typeof WebOverviewQuerySchema>

/** One figure of the overview, as PostHog's WebOverviewItem. */
export interface WebOverviewItem {
  key: string
  kind: 'unit' | 'duration_s' | 'percentage'
  isIncreaseBad: boolean | null
  value: number | null
  previous: number | null
  changeFromPreviousPct: number | null
}

/**
 * The overview's SQL: one row of current and previous figures. Per session with a page view or
 * screen in either period (events grouped per session, then joined to the session's start, duration
 * and bounce from raw_sessions), kept when the session started in a period.
 */
export async function webOverviewSQL(
  q: WebOverviewQuery,
  ranges: WebRanges,
  project: Project,
  facts?: DataFacts,
): Promise<{ hogql: string; sql: string }> {
  refuseUnsupported(q)
  const { range, prev } = ranges
  const events = await eventsLevel(
    project,
    ranges,
    and([`$session_id != ''`, webPropertiesCondition(q, project)]),
    {},
    facts,
  )
  const sessions = sessionsLevel(project.id, ['$start_timestamp', '$session_duration', '$is_bounce'], ranges)
  const current = instantInRange(range, 'start_timestamp')
  const previous = prev ? instantInRange(prev, 'start_timestamp') : null
  const inner = `SELECT e.w_person AS session_person_id, e.w_session AS session_id, e.w_views AS filtered_pageview_count,
    s.\`$start_timestamp\` AS start_timestamp, s.\`$session_duration\` AS session_duration, s.\`$is_bounce\` AS is_bounce
  FROM (SELECT w_session, any(w_person) AS w_person, count() AS w_views FROM (${events.sql}) GROUP BY w_session) AS e
  INNER JOIN (${sessions}) AS s ON e.w_session = s.session_id
  WHERE (${current})${previous ? ` OR (${previous})` : ''}`
  const pair = (fn: string, column: string) => [
    prev ? `${fn}If(${column}, ${current})` : `${fn}(${column})`,
    previous ? `${fn}If(${column}, ${previous})` : 'NULL',
  ]
  const select = [
    ...pair('uniq', 'session_person_id'),
    ...pair('sum', 'filtered_pageview_count'),
    ...pair('uniq', 'session_id'),
    ...pair('avg', 'session_duration'),
    ...pair('avg', 'is_bounce'),
  ]
  return { hogql: events.hogql, sql: `SELECT ${select.join(', ')} FROM (${inner})` }
}

// Python's round(): halves to the even neighbour (PostHog rounds the change with it).
function roundHalfEven(x: number): number {
  const r = Math.round(x)
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r
}

const num = (v: unknown): number | null => {
  if (v === null || v === undefined) return null
  const n = Number(v)
  return Number.isNaN(n) ? null : n
}

/** PostHog's to_data: percentages times 100, the change in whole percent when there is a previous value. */
export function overviewItem(
  key: string,
  kind: WebOverviewItem['kind'],
  rawValue: unknown,
  rawPrevious: unknown,
  isIncreaseBad: boolean | null = null,
): WebOverviewItem {
  let value = num(rawValue)
  let previous = num(rawPrevious)
  if (kind === 'percentage') {
    if (value !== null) value *= 100
    if (previous !== null) previous *= 100
  }
  const change =
    value !== null && previous !== null && previous !== 0
      ? roundHalfEven((100 * (value - previous)) / previous)
      : null
  return { key, kind, isIncreaseBad, value, previous, changeFromPreviousPct: change }
}

/** The overview's items from its one row (previous values only with compareFilter.compare). */
export function overviewItems(row: unknown[] | undefined, compare: boolean): WebOverviewItem[] {
  const r = row ?? []
  const prev = (i: number) => (compare ? r[i] : null)
  return [
    overviewItem('visitors', 'unit', r[0], prev(1)),
    overviewItem('views', 'unit', r[2], prev(3)),
    overviewItem('sessions', 'unit', r[4], prev(5)),
    overviewItem('session duration', 'duration_s', r[6], prev(7)),
    overviewItem('bounce rate', 'percentage', r[8], prev(9), true),
  ]
}

const COLUMNS = ['visitors', 'views', 'sessions', 'session duration', 'bounce rate'].flatMap((k) => [
  k,
  `previous ${k}`,
])

registerQueryKind('WebOverviewQuery', {
  async compile(raw, project, facts) {
    const q = WebOverviewQuerySchema.parse(raw)
    const { hogql, sql } = await webOverviewSQL(q, webRanges(q, project), project, facts)
    return { hogql, clickhouse: sql, columns: COLUMNS, types: [] }
  },
  shape(rows, _compiled, raw) {
    const q = WebOverviewQuerySchema.parse(raw)
    return overviewItems(rows[0], compares(q))
  },
})

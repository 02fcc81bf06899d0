// WebOverviewQuery on POST /query/ (PostHog's posthog/hogql_queries/web_analytics/web_overview.py):
// visitors, views, sessions, session duration and bounce rate of the page views and screens in a
// date range, with the previous period beside them when compareFilter asks. Counted per session
// from the sessions table (docs/sessions.md): a session belongs to the period its first event is
// in. Conversion goals and revenue are refused (not supported yet). The request fields, ranges and
// filters are those of every web query kind (filters.ts).
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { compileHogQLCached } from '../queries/compile-cache.ts'
import { rangeCondition, type ResolvedRange } from '../queries/insights/common/date-range.ts'
import { registerQueryKind } from '../queries/kinds.ts'
import {
  compares,
  periodsCondition,
  refuseUnsupported,
  WebQueryBaseSchema,
  webPropertiesCondition,
  webRanges,
} from './filters.ts'

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

/** The HogQL of the overview: one row of current and previous figures. */
export function webOverviewHogQL(
  q: WebOverviewQuery,
  range: ResolvedRange,
  prev: ResolvedRange | null,
  project: Project,
): string {
  refuseUnsupported(q)
  const periods = (field: string) => periodsCondition({ range, prev }, field)
  const props = webPropertiesCondition(q, project)
  const inner = `SELECT any(events.person_id) AS session_person_id, session.session_id AS session_id,
    min(session.$start_timestamp) AS start_timestamp, any(session.$session_duration) AS session_duration,
    countIf(event = '$pageview' OR event = '$screen') AS filtered_pageview_count,
    any(session.$is_bounce) AS is_bounce
  FROM events
  WHERE events.$session_id != '' AND (event = '$pageview' OR event = '$screen') AND (${periods('timestamp')})
    ${props ? `AND (${props})` : ''}
  GROUP BY session_id
  HAVING ${periods('start_timestamp')}`
  const current = rangeCondition(range, 'start_timestamp')
  const previous = prev ? rangeCondition(prev, 'start_timestamp') : null
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
  return `SELECT ${select.join(', ')} FROM (${inner})`
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

registerQueryKind('WebOverviewQuery', {
  async compile(raw, project, server) {
    const q = WebOverviewQuerySchema.parse(raw)
    const { range, prev } = webRanges(q, project)
    return compileHogQLCached(webOverviewHogQL(q, range, prev, project), {
      teamId: project.id,
      timezone: project.timezone,
      capabilities: server,
    })
  },
  shape(rows, _compiled, raw) {
    const q = WebOverviewQuerySchema.parse(raw)
    return overviewItems(rows[0], compares(q))
  },
})

// What every web analytics query kind shares (PostHog's web_analytics_query_runner.py): the request
// fields for the date range, compare period, property filters and test accounts; the ranges they
// resolve to in the project's zone; the filters a query applies to its events; and the UTC days of
// raw_sessions a query reads.
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { ValidationError } from '../http/errors.ts'
import {
  and,
  bound,
  instant,
  operatorCondition,
  previousPeriod,
  propertiesCondition,
  rangeCondition,
  resolveDateRange,
  type ResolvedRange,
} from '../queries/insights/common/index.ts'
import { DateRangeSchema, PropertiesSchema } from '../queries/insights/common/schema.ts'
import { sqlStr } from '../queries/insights/common/hogql.ts'
import { quoteIdentifier } from '../hogql/escape.ts'
import { testAccountsCondition } from '../queries/test-accounts.ts'

/** The fields of PostHog's WebAnalyticsQueryBase that Burrow reads. */
export const WebQueryBaseSchema = z.object({
  dateRange: DateRangeSchema.nullable().optional(),
  properties: PropertiesSchema.nullable().optional(),
  compareFilter: z
    .object({ compare: z.boolean().nullable().optional(), compare_to: z.string().nullable().optional() })
    .passthrough()
    .nullable()
    .optional(),
  filterTestAccounts: z.boolean().nullable().optional(),
  conversionGoal: z.unknown().optional(),
  includeRevenue: z.boolean().nullable().optional(),
})
export type WebQueryBase = z.infer<typeof WebQueryBaseSchema>

/** Whether the query compares with a previous period (compareFilter.compare or a compare_to shift). */
export const compares = (q: WebQueryBase): boolean =>
  !!q.compareFilter?.compare || !!q.compareFilter?.compare_to

/** The current period (days, in the project's zone) and, when compareFilter asks, the previous one. */
export interface WebRanges {
  range: ResolvedRange
  prev: ResolvedRange | null
}

/**
 * The query's ranges. `allowAll`: date_from 'all' reads from the first event on (no lower bound;
 * refused with a comparison, whose previous period would have no start).
 */
export function webRanges(
  q: WebQueryBase,
  project: Pick<Project, 'timezone'>,
  opts: { now?: number; allowAll?: boolean } = {},
): WebRanges {
  const range = resolveDateRange(q.dateRange, 'day', project.timezone, { now: opts.now })
  const compare = compares(q)
  if (range.all && (!opts.allowAll || compare)) {
    throw new ValidationError(
      compare
        ? "dateRange.date_from 'all' cannot be compared with a previous period"
        : "dateRange.date_from 'all' is not supported here yet",
      'dateRange',
    )
  }
  if (!range.all && range.from > range.to) {
    throw new ValidationError('dateRange.date_from is after dateRange.date_to', 'dateRange')
  }
  const prev = compare ? previousPeriod(range, q.compareFilter?.compare_to) : null
  return { range, prev }
}

/** The HogQL condition on `field` for "inside either period" (PostHog's _periods_expression). */
export function periodsCondition(r: WebRanges, field = 'timestamp'): string {
  return [r.range, ...(r.prev ? [r.prev] : [])].map((x) => `(${rangeCondition(x, field)})`).join(' OR ')
}

/** The query's property filters and, with filterTestAccounts, the project's test-account filters, as one HogQL condition. */
export function webPropertiesCondition(
  q: WebQueryBase,
  project: Project,
  keep: (f: { key?: string; type?: string }) => boolean = () => true,
): string | undefined {
  const own = q.properties ?? []
  const list = Array.isArray(own) ? own.filter(keep) : own
  // session filters (PostHog's SessionPropertyFilter) read the event's session, e.g.
  // session.$channel_type; the rest are the insights' filters
  const isSession = (f: { type?: string }) => f.type === 'session'
  const sessions = Array.isArray(list) ? list.filter(isSession) : []
  const rest = Array.isArray(list) ? list.filter((f) => !isSession(f)) : list
  const parts = [
    propertiesCondition(rest),
    ...sessions.map((f) => operatorCondition(`session.${quoteIdentifier(f.key)}`, f)),
    testAccountsCondition(q.filterTestAccounts, project),
  ]
  const present = parts.filter((x): x is string => !!x)
  return present.length ? and(present) : undefined
}

/** Refuses what no web query kind supports yet, naming the field. */
export function refuseUnsupported(q: WebQueryBase): void {
  if (q.conversionGoal) throw new ValidationError('conversionGoal is not supported yet', 'conversionGoal')
  if (q.includeRevenue) throw new ValidationError('includeRevenue is not supported yet', 'includeRevenue')
}

// PostHog's SESSION_BUFFER_DAYS: the session rows a query reads are those within 3 days of its
// periods (raw_sessions has a row per session and UTC day); a session longer than that is seen in
// the part of it that falls inside the window, as PostHog's sessions pushdown sees it.
const SESSION_BUFFER_DAYS = 3

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/**
 * ClickHouse conditions on raw_sessions' `day` (UTC) for the rows of sessions a query over `r`
 * reads: from 3 days before the earliest period's start to 3 days after the latest's end.
 */
export function sessionDayBounds(r: WebRanges): string[] {
  const ranges = [r.range, ...(r.prev ? [r.prev] : [])]
  const tz = r.range.tz
  const upper = Math.max(...ranges.map((x) => instant(x.to, tz)))
  const out = [`day <= toDate(${sqlStr(utcDay(upper + SESSION_BUFFER_DAYS * 86_400_000))})`]
  if (ranges.every((x) => !Number.isNaN(x.lower))) {
    const lower = Math.min(...ranges.map((x) => instant(x.lower, tz)))
    out.unshift(`day >= toDate(${sqlStr(utcDay(lower - SESSION_BUFFER_DAYS * 86_400_000))})`)
  }
  return out
}

/** ClickHouse: `column` (a DateTime64 in UTC) inside range `x`, its bounds read in the project's zone. */
export function instantInRange(x: ResolvedRange, column: string): string {
  const at = (w: number) => `toDateTime64(${sqlStr(bound(w))}, 6, ${sqlStr(x.tz)})`
  const upper = `${column} <= ${at(x.to)}`
  return Number.isNaN(x.lower) ? upper : `${column} >= ${at(x.lower)} AND ${upper}`
}

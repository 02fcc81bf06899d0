// TrendsQuery → one ClickHouse statement. Each (series, period) is a HogQL query over events
// grouped by bucket and breakdown value; breakdowns go through the top-N wrapper; all parts are
// tagged with their series and period and joined by UNION ALL, so one round trip answers the query.
import type { Project } from '../../../accounts/documents.ts'
import type { DataFacts } from '../../person-overrides.ts'
import type { CompiledQuery } from '../../../hogql/index.ts'
import { ValidationError } from '../../../http/errors.ts'
import {
  addIntervals,
  ALL_USERS,
  and,
  type BreakdownPlan,
  breakdownEnabled,
  bucketsOf,
  bucketText,
  compileInner,
  dateString,
  type Interval,
  planBreakdown,
  previousPeriod,
  rangeCondition,
  type ResolvedRange,
  resolveDateRange,
  seriesCondition,
  nameActions,
  str,
  topBreakdownsSql,
  wallString,
} from '../common/index.ts'
import { activeWindowDays, aggregation, effectiveMath, type Math, mathCondition } from './aggregation.ts'
import { currentCatalog } from '../../compile-cache.ts'
import { CUMULATIVE_DISPLAY, TOTAL_VALUE_DISPLAYS, type TrendsQuery } from './schema.ts'

export interface TrendsPlan {
  query: TrendsQuery
  interval: Interval
  totalValue: boolean
  cumulative: boolean
  ranges: ResolvedRange[]
  timezone: string
  now: number
  /** buckets left out of the statement because the runner holds their values (facts.skipBuckets) */
  skipped?: Record<string, string[]>
  /** a cohort breakdown's labels by value: the cohorts' names, 'all users' */
  breakdownLabels?: Record<string, string>
}

export interface TrendsCompiled extends CompiledQuery {
  trends: TrendsPlan
}

/**
 * What one series counts in one period, shared by the trends statement and its actors
 * (actors/insight-actors.ts): the effective math, the breakdown value expression and the join it
 * needs, and the event conditions (range, series, query-wide filters, math), the range reaching
 * `lookbackDays` earlier for active-user windows.
 */
export interface SeriesEvents {
  node: TrendsQuery['series'][number]
  math: Math
  breakdown: BreakdownPlan | undefined
  bv: string
  join: string
  /** days in the weekly/monthly active window, if any */
  window: number | undefined
  /** the series' own conditions: event, its filters, the query's filters, the math's */
  filters: string
  /** `filters` within the range */
  where: (lookbackDays?: number) => string
}

export function seriesEvents(q: TrendsQuery, i: number, r: ResolvedRange): SeriesEvents {
  const node = q.series[i]
  if (!node) throw new ValidationError(`Series ${i} does not exist`, 'series')
  const math = effectiveMath(node, r.interval)
  const breakdown = breakdownEnabled(q.breakdownFilter) ? planBreakdown(q.breakdownFilter) : undefined
  const filters = and([seriesCondition(node, q.properties), mathCondition(node, math)])
  return {
    node,
    math,
    breakdown,
    bv: breakdown ? breakdown.value : "''",
    join: breakdown?.join ?? '',
    window: activeWindowDays(math),
    filters,
    where: (lookback = 0) => and([rangeCondition(r, 'timestamp', lookback), filters]),
  }
}

/** The inner HogQL of one (series, period): columns insight_bucket, insight_breakdown, insight_value. */
export function innerHogQL(
  q: TrendsQuery,
  i: number,
  r: ResolvedRange,
  totalValue: boolean,
  cumulative: boolean,
): string {
  const { node, math, bv, join, window, where: filters } = seriesEvents(q, i, r)

  if (window && !totalValue) {
    // Each active day counts for itself and the window-1 days after it; only chart buckets are kept.
    const days = bucketsOf(r).map((b) => str(dateString(b)))
    const perDay =
      `SELECT person_id AS insight_actor, ${bv} AS insight_breakdown, toDate(timestamp) AS insight_day` +
      ` FROM events${join} WHERE ${filters(window - 1)} GROUP BY insight_actor, insight_breakdown, insight_day`
    const spread =
      'SELECT insight_actor, insight_breakdown, addDays(insight_day, arrayJoin(range(' +
      `${window}))) AS insight_active_day FROM (${perDay})`
    return (
      'SELECT toString(insight_active_day) AS insight_bucket, insight_breakdown,' +
      ` count(DISTINCT insight_actor) AS insight_value FROM (${spread})` +
      ` WHERE toString(insight_active_day) IN (${days.join(', ') || "''"})` +
      ' GROUP BY insight_bucket, insight_breakdown'
    )
  }
  if (window) {
    return (
      `SELECT '' AS insight_bucket, ${bv} AS insight_breakdown, count(DISTINCT person_id) AS insight_value` +
      ` FROM events${join} WHERE ${filters(window - 1)} GROUP BY insight_bucket, insight_breakdown`
    )
  }
  if (cumulative && !totalValue && (math === 'dau' || math === 'unique_group')) {
    // Cumulative unique actors: each actor counts once, in the bucket of its first event.
    const actor = math === 'dau' ? 'person_id' : `\`$group_${node.math_group_type_index}\``
    const first =
      `SELECT ${actor} AS insight_actor, ${bv} AS insight_breakdown, min(${bucketText(r.interval)})` +
      ` AS insight_first FROM events${join} WHERE ${filters()} GROUP BY insight_actor, insight_breakdown`
    return (
      'SELECT insight_first AS insight_bucket, insight_breakdown, count() AS insight_value' +
      ` FROM (${first}) GROUP BY insight_bucket, insight_breakdown`
    )
  }
  const bucket = totalValue ? "''" : bucketText(r.interval)
  return (
    `SELECT ${bucket} AS insight_bucket, ${bv} AS insight_breakdown, ${aggregation(node, math)} AS insight_value` +
    ` FROM events${join} WHERE ${filters()} GROUP BY insight_bucket, insight_breakdown`
  )
}

/** The display mode and the periods (current, then previous with compare) of a trends query. */
export function trendsRanges(q: TrendsQuery, tz: string, now: number) {
  const totalValue = TOTAL_VALUE_DISPLAYS.has(q.trendsFilter?.display ?? '')
  const cumulative = q.trendsFilter?.display === CUMULATIVE_DISPLAY
  // Total-value charts compute their range as day charts do.
  const interval: Interval = totalValue ? 'day' : (q.interval ?? 'day')
  const current = resolveDateRange(q.dateRange, interval, tz, { now })
  const ranges = [current]
  if (q.compareFilter?.compare && !current.all)
    ranges.push(previousPeriod(current, q.compareFilter.compare_to))
  return { interval, totalValue, cumulative, ranges }
}

export async function compileTrends(
  q: TrendsQuery,
  project: Project,
  now = Date.now(),
  facts?: DataFacts,
): Promise<TrendsCompiled> {
  nameActions(q.series)
  const tz = project.timezone
  const { interval, totalValue, cumulative, ranges } = trendsRanges(q, tz, now)
  const current = ranges[0]!
  for (const r of ranges) bucketsOf(r) // refuses ranges with too many buckets before any query runs

  const parts: string[] = []
  const hogqls: string[] = []
  const limit = breakdownEnabled(q.breakdownFilter) ? planBreakdown(q.breakdownFilter).limit : 0
  const skipped: Record<string, string[]> = {}
  for (const [c, r] of ranges.entries()) {
    for (let i = 0; i < q.series.length; i++) {
      const skip = facts?.skipBuckets?.[`${c}|${i}`]
      const spans = skip?.length && !limit ? spansOf(r, new Set(skip)) : { ranges: [r], skipped: [] }
      if (spans.skipped.length) skipped[`${c}|${i}`] = spans.skipped
      for (const span of spans.ranges) {
        const hogql = innerHogQL(q, i, span, totalValue, cumulative)
        hogqls.push(hogql)
        const inner = (await compileInner(hogql, project.id, tz, facts)).clickhouse
        // the tag columns at the rows' own level: no level more (about 1 ms of analysis each on 26.x)
        const head = `'row' AS tag, toUInt32(${i}) AS s, toUInt8(${c}) AS c, `
        parts.push(
          limit
            ? topBreakdownsSql(inner, limit, head)
            : `SELECT ${head}toString(insight_breakdown) AS breakdown, toString(insight_bucket) AS bucket,` +
                ` toFloat64(insight_value) AS value FROM (${inner})`,
        )
      }
    }
  }
  if (!parts.length) {
    // every bucket is known: a statement without rows keeps the runner's path the same
    parts.push(
      "SELECT 'row' AS tag, toUInt32(0) AS s, toUInt8(0) AS c, '' AS breakdown, '' AS bucket," +
        ' toFloat64(0) AS value FROM system.one WHERE 0',
    )
  }
  if (current.all) {
    const hogql = 'SELECT toString(min(timestamp)) AS insight_earliest, count() AS insight_events FROM events'
    hogqls.push(hogql)
    const inner = (await compileInner(hogql, project.id, tz, facts)).clickhouse
    parts.push(
      "SELECT 'earliest' AS tag, toUInt32(0) AS s, toUInt8(0) AS c, '' AS breakdown," +
        ` if(insight_events = 0, '', insight_earliest) AS bucket, toFloat64(0) AS value FROM (${inner})`,
    )
  }
  return {
    hogql: hogqls.join('\nUNION ALL\n'),
    clickhouse: parts.join(' UNION ALL '),
    columns: ['tag', 's', 'c', 'breakdown', 'bucket', 'value'],
    types: ['String', 'UInt32', 'UInt8', 'String', 'String', 'Float64'],
    trends: {
      query: q,
      interval,
      totalValue,
      cumulative,
      ranges,
      timezone: tz,
      now,
      skipped,
      ...(q.breakdownFilter?.breakdown_type === 'cohort' ? { breakdownLabels: cohortLabels() } : {}),
    },
  }
}

/** PostHog's labels of a cohort breakdown: each cohort's name (the catalog's), and 'all users'. */
function cohortLabels(): Record<string, string> {
  const labels: Record<string, string> = { [ALL_USERS]: 'all users' }
  for (const c of currentCatalog()?.cohorts ?? []) labels[String(c.id)] = c.name ?? `Cohort ${c.id}`
  return labels
}

/** More separate spans than this are read as one span from the first to the last. */
const MAX_SPANS = 4

/**
 * The parts of range `r` to compute when the buckets starting at `skip` (start texts) are known:
 * runs of the other buckets, each as a range of its own (the first from the range's lower bound,
 * the last to its upper bound), and the buckets actually left out.
 */
export function spansOf(r: ResolvedRange, skip: Set<string>): { ranges: ResolvedRange[]; skipped: string[] } {
  const starts = bucketsOf(r)
  // only buckets wholly inside this range are left out (the runner chose them at its own `now`)
  const whole = (b: number) => b >= r.lower && addIntervals(b, r.interval, 1) - 1000 <= r.to
  const compute = starts.map((b) => !(skip.has(wallString(b)) && whole(b)))
  let runs: [number, number][] = []
  for (let k = 0; k < starts.length; k++) {
    if (!compute[k]) continue
    const last = runs[runs.length - 1]
    if (last && last[1] === k - 1) last[1] = k
    else runs.push([k, k])
  }
  if (runs.length > MAX_SPANS) runs = [[runs[0]![0], runs[runs.length - 1]![1]]]
  const inRun = (k: number) => runs.some(([a, b]) => k >= a && k <= b)
  const ranges = runs.map(([a, b]) => ({
    ...r,
    lower: a === 0 ? r.lower : starts[a]!,
    to: b === starts.length - 1 ? r.to : addIntervals(starts[b]!, r.interval, 1) - 1000,
  }))
  return { ranges, skipped: starts.filter((_, k) => !inRun(k)).map(wallString) }
}

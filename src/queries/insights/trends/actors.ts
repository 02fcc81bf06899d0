// The persons behind one point of a TrendsQuery, built from the same blocks as the statement
// (query.ts seriesEvents / innerHogQL), so they are the persons the point counts:
//  * a time-series point is the events of its bucket; weekly/monthly active points the events of
//    the window ending that day; cumulative points everything up to the end of the bucket;
//  * a total-value display has one point per series: the whole range;
//  * a breakdown value keeps the events with that value; "other" those whose value is not one of
//    the top `breakdown_limit` values, ranked exactly as the statement ranks them.
// Persons are merged persons (person_id); groups (math unique_group) are not actors here.
import type { Project } from '../../../accounts/documents.ts'
import { ValidationError } from '../../../http/errors.ts'
import {
  addDays,
  addIntervals,
  alignToInterval,
  and,
  BREAKDOWN_OTHER,
  bound,
  compileInner,
  parseWall,
  type ResolvedRange,
  sqlStr,
  str,
  topBreakdownValuesSql,
  type Wall,
} from '../common/index.ts'
import { innerHogQL, seriesEvents, trendsRanges } from './query.ts'
import type { TrendsQuery } from './schema.ts'

export interface TrendsPoint {
  /** the bucket's start ('YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss'); ignored for total-value displays */
  day?: string | number | null
  series?: number | null
  breakdown?: unknown
  compare?: 'current' | 'previous' | null
}

/**
 * A bucket's events. A bucket the range cuts (a partial first or last interval) is cut the same
 * way, as the statement counts it; a bucket outside the range is the whole interval, as PostHog's
 * trends actors read it (trends_actors_query_builder.py clips to the range only for explicit dates).
 */
function bucketCondition(start: Wall, end: Wall, r: ResolvedRange): string {
  const lower = !Number.isNaN(r.lower) && start < r.lower && end > r.lower ? r.lower : start
  const upper =
    start <= r.to && end > r.to ? `timestamp <= ${str(bound(r.to))}` : `timestamp < ${str(bound(end))}`
  return `timestamp >= ${str(bound(lower))} AND ${upper}`
}

/** ClickHouse SQL of the person ids behind the point (one column, ids may repeat). */
export async function trendsActorsSql(
  q: TrendsQuery,
  point: TrendsPoint,
  project: Project,
  now = Date.now(),
): Promise<string> {
  const tz = project.timezone
  const { interval, totalValue, cumulative, ranges } = trendsRanges(q, tz, now)
  const r = point.compare === 'previous' ? ranges[1] : ranges[0]
  if (!r) throw new ValidationError("compare 'previous' needs compareFilter.compare", 'compare')
  const i = point.series ?? 0
  const s = seriesEvents(q, i, r)
  let where: string
  if (totalValue) where = s.where(s.window ? s.window - 1 : 0)
  else {
    if (point.day === null || point.day === undefined) throw new ValidationError('day is required', 'day')
    let start: number
    try {
      start = alignToInterval(parseWall(String(point.day)), interval)
    } catch {
      throw new ValidationError(`Invalid day '${String(point.day)}'`, 'day')
    }
    const end = addIntervals(start, interval, 1)
    const before = `timestamp < ${str(bound(end))}`
    if (s.window) {
      const from = `timestamp >= ${str(bound(addDays(start, -(s.window - 1))))}`
      where = and([s.where(s.window - 1), from, before])
    } else if (cumulative) where = and([s.where(), before])
    else where = and([s.filters, bucketCondition(start, end, r)])
  }
  const hogql =
    `SELECT person_id AS insight_actor, ${s.bv} AS insight_breakdown` + ` FROM events${s.join} WHERE ${where}`
  const events = (await compileInner(hogql, project.id, tz)).clickhouse
  if (!s.breakdown || point.breakdown === undefined || point.breakdown === null) {
    return `SELECT insight_actor FROM (${events})`
  }
  if (point.breakdown === BREAKDOWN_OTHER) {
    const inner = innerHogQL(q, i, r, totalValue, cumulative)
    const ranked = (await compileInner(inner, project.id, tz)).clickhouse
    const top = topBreakdownValuesSql(ranked, s.breakdown.limit)
    return `SELECT insight_actor FROM (${events}) WHERE insight_breakdown NOT IN (${top})`
  }
  return `SELECT insight_actor FROM (${events}) WHERE insight_breakdown = ${sqlStr(String(point.breakdown))}`
}

// LifecycleQuery (posthog/hogql_queries/insights/lifecycle/lifecycle_query_runner.py). For each
// person and interval of the range:
//   new          first active interval is the one the person was created in
//   returning    active, and active in the interval before
//   resurrecting active, not active in the interval before (and not new)
//   dormant      active in the interval before, not in this one (counted negative)
// Only events from one interval before the range to one after are read, whatever the history.
// Events sent with `$process_person_profile: false` are left out.
import { withTestAccounts } from '../../test-accounts.ts'
import { z } from 'zod'
import type { Project } from '../../../accounts/documents.ts'
import type { CompiledQuery } from '../../../hogql/index.ts'
import type { QueryKind } from '../../kinds.ts'
import type { DataFacts } from '../../person-overrides.ts'
import {
  addIntervals,
  alignToInterval,
  and,
  bound,
  bucketsOf,
  bucketText,
  compileInner,
  dateString,
  DateRangeSchema,
  dayOf,
  SeriesNodeSchema,
  type Interval,
  IntervalSchema,
  labelOf,
  PropertiesSchema,
  type ResolvedRange,
  resolveDateRange,
  seriesCondition,
  seriesEntity,
  nameActions,
  seriesLabel,
  str,
} from '../common/index.ts'
import { ValidationError } from '../../../http/errors.ts'

export const LifecycleQuerySchema = z
  .object({
    kind: z.literal('LifecycleQuery'),
    series: z.array(SeriesNodeSchema).min(1),
    interval: IntervalSchema.nullable().optional(),
    dateRange: DateRangeSchema.nullable().optional(),
    properties: PropertiesSchema,
    lifecycleFilter: z
      .object({ toggledLifecycles: z.array(z.string()).nullable().optional() })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough()
export type LifecycleQuery = z.infer<typeof LifecycleQuerySchema>

export const STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const

interface LifecyclePlan {
  query: LifecycleQuery
  range: ResolvedRange
}

interface LifecycleCompiled extends CompiledQuery {
  lifecycle: LifecyclePlan
}

// Interval starts as consecutive integers, computed from the wall-clock text of each bucket, so
// "the interval before" is `index - 1` whatever the month lengths or DST.
function indexSql(interval: Interval, text: string): string {
  switch (interval) {
    case 'minute':
      return `toRelativeMinuteNum(toDateTime(${text}, 'UTC'))`
    case 'hour':
      return `toRelativeHourNum(toDateTime(${text}, 'UTC'))`
    case 'day':
      return `toRelativeDayNum(toDate(${text}))`
    case 'week':
      // Sunday-based weeks: day 0 (1970-01-01) is a Thursday, so +4 puts week breaks on Sundays.
      return `intDiv(toRelativeDayNum(toDate(${text})) + 4, 7)`
    case 'month':
      return `(toYear(toDate(${text})) * 12 + toMonth(toDate(${text})) - 1)`
  }
}

function wallOfIndex(interval: Interval, i: number): number {
  switch (interval) {
    case 'minute':
      return i * 60_000
    case 'hour':
      return i * 3_600_000
    case 'day':
      return i * 86_400_000
    case 'week':
      return (i * 7 - 4) * 86_400_000
    case 'month':
      return Date.UTC(Math.floor(i / 12), i % 12, 1)
  }
}

/**
 * The lifecycle status of every person in every interval of the range: `sql`, ClickHouse SQL with
 * columns insight_actor, period (interval index, see indexOf), status (statusCode), whose rows of
 * one period and status are a point's actors (actors/insight-actors.ts); `counts`, the same rows
 * counted by (period, status), which the LifecycleQuery answers.
 */
export async function lifecycleStatuses(
  q: LifecycleQuery,
  project: Project,
  now = Date.now(),
  facts?: DataFacts,
) {
  const tz = project.timezone
  const interval = q.interval ?? 'day'
  if (q.dateRange?.date_from === 'all') {
    throw new ValidationError("Lifecycle does not support date_from 'all'", 'dateRange.date_from')
  }
  const range = resolveDateRange(q.dateRange, interval, tz, { now })
  bucketsOf(range)
  const first = alignToInterval(range.from, interval)
  const last = alignToInterval(range.to, interval)
  const node = q.series[0]!
  const where = and([
    `ifNull(properties['$process_person_profile'], '') != 'false'`,
    `timestamp >= ${str(bound(addIntervals(first, interval, -1)))}`,
    `timestamp < ${str(bound(addIntervals(last, interval, 1)))}`,
    seriesCondition(node, q.properties),
  ])
  // Days are collected as Dates (a number hashes and sorts several times faster than its text; indexSql
  // reads either), other intervals as their wall-clock text. The person's creation is joined once
  // per person after grouping, not once per event.
  const day = interval === 'day'
  const activity = day ? 'toDate(timestamp)' : bucketText(interval)
  const created = day ? 'toDate(p.created_at)' : bucketText(interval, 'p.created_at')
  const hogql =
    'SELECT a.insight_actor AS insight_actor,' +
    ` ${created} AS insight_created, a.insight_activity AS insight_activity` +
    ` FROM (SELECT person_id AS insight_actor, groupUniqArray(${activity}) AS insight_activity` +
    ` FROM events WHERE ${where} GROUP BY insight_actor) AS a` +
    ' LEFT JOIN persons AS p ON p.id = a.insight_actor'
  const inner = (await compileInner(hogql, project.id, tz, facts)).clickhouse
  // Day intervals stay Dates throughout (2 bytes; `d - 1` is the day before), converted to their
  // index only once counted; other intervals are Int64 indexes from their text. Each person's
  // intervals sorted, with the one before each (the first's is the creation) and the one after.
  const acts = day
    ? 'arraySort(insight_activity)'
    : `arraySort(arrayMap(t -> toInt64(${indexSql(interval, 't')}), insight_activity))`
  const createdIndex = day ? 'insight_created' : `toInt64(${indexSql(interval, 'insight_created')})`
  const perActor =
    `SELECT insight_actor, ${acts} AS acts, arrayPushFront(arrayPopBack(acts), ${createdIndex}) AS prevs,` +
    ` arrayPushBack(arrayPopFront(acts), ${day ? 'toDate(0)' : 'toInt64(0)'}) AS nexts FROM (${inner})`
  // Every (interval, status code) of a person: codes are STATUSES' positions from 1. Lambdas take
  // every value as an argument (18.16 dropped columns a lambda only captures; the form reads the
  // same on every release).
  const statusArray =
    'arrayConcat(arrayMap((cur, prev, i) -> tuple(cur, multiIf(prev = cur, 1, i > 1 AND prev = cur - 1, 2, 3)),' +
    ' acts, prevs, arrayEnumerate(acts)),' +
    ' arrayMap(cur -> tuple(cur + 1, 4), arrayFilter((cur, nxt) -> nxt != cur + 1, acts, nexts)))'
  const lit = (w: number) => (day ? `toDate(${str(dateString(w))})` : String(indexOf(interval, w)))
  const inRange = `tupleElement(ps, 1) >= ${lit(first)} AND tupleElement(ps, 1) <= ${lit(last)}`
  const periodOf = (x: string) => (day ? `toInt64(toRelativeDayNum(${x}))` : x)
  // The statuses as rows (insight_actor, period index, status code), for the actors of a point.
  const sql =
    `SELECT insight_actor, ${periodOf('tupleElement(ps, 1)')} AS period, tupleElement(ps, 2) AS status` +
    ` FROM (SELECT insight_actor, arrayJoin(${statusArray}) AS ps FROM (${perActor})) WHERE ${inRange}`
  // The counts by (period, status code), one level above the per-person arrays: on 18.16 every
  // level of subquery analysed the levels below it again, which was a third of the statement's
  // CPU at 500K events; on 26.x a level costs about 1 ms of analysis (docs/insights.md).
  const counts =
    `SELECT ${periodOf('tupleElement(arrayJoin(' + statusArray + ') AS ps, 1)')} AS period,` +
    ` tupleElement(ps, 2) AS status, count() AS persons FROM (${perActor}) WHERE ${inRange}` +
    ' GROUP BY tupleElement(ps, 1), tupleElement(ps, 2)'
  return { hogql, sql, counts, range, interval }
}

/** The code lifecycleStatuses gives `status` (its position in STATUSES, from 1). */
export const statusCode = (status: (typeof STATUSES)[number]) => STATUSES.indexOf(status) + 1

export async function compileLifecycle(
  q: LifecycleQuery,
  project: Project,
  now = Date.now(),
  facts?: DataFacts,
) {
  nameActions(q.series)
  const { hogql, counts, range } = await lifecycleStatuses(q, project, now, facts)
  const compiled: LifecycleCompiled = {
    hogql,
    clickhouse: counts,
    columns: ['period', 'status', 'persons'],
    types: ['Int64', 'UInt8', 'UInt64'],
    lifecycle: { query: q, range },
  }
  return compiled
}

/** The index lifecycleStatuses gives the interval starting at wall time `w`. */
export function indexOf(interval: Interval, w: number): number {
  switch (interval) {
    case 'minute':
      return Math.floor(w / 60_000)
    case 'hour':
      return Math.floor(w / 3_600_000)
    case 'day':
      return Math.floor(w / 86_400_000)
    case 'week':
      return Math.floor((Math.floor(w / 86_400_000) + 4) / 7)
    case 'month': {
      const d = new Date(w)
      return d.getUTCFullYear() * 12 + d.getUTCMonth()
    }
  }
}

export function shapeLifecycle(rows: unknown[][], plan: LifecyclePlan) {
  const { range, query } = plan
  const buckets = bucketsOf(range)
  const at = new Map(buckets.map((b, i) => [b, i]))
  const counts = new Map<string, number[]>(
    STATUSES.map((s) => [s, new Array<number>(buckets.length).fill(0)]),
  )
  for (const [period, code, persons] of rows as [number, number, number][]) {
    const i = at.get(wallOfIndex(range.interval, Number(period)))
    const status = STATUSES[Number(code) - 1]
    const data = status && counts.get(status)
    if (i === undefined || !data) continue
    data[i] = status === 'dormant' ? -Number(persons) : Number(persons)
  }
  const node = query.series[0]!
  const name = seriesLabel(node)
  const labels = buckets.map((b) => labelOf(b, range))
  const days = buckets.map((b) => dayOf(b, range.interval === 'minute' ? 'day' : range.interval))
  return STATUSES.map((status) => {
    const data = counts.get(status)!
    return {
      action: {
        ...seriesEntity(node),
        name,
        order: 0,
        math: 'total',
        ...(node.custom_name ? { custom_name: node.custom_name } : {}),
      },
      data,
      count: data.reduce((a, b) => a + b, 0),
      labels,
      days,
      label: `${name} - ${status}`,
      status,
    }
  })
}

export const lifecycleKind: QueryKind = {
  compile: (raw, project, facts) =>
    compileLifecycle(withTestAccounts(LifecycleQuerySchema.parse(raw), project), project, undefined, facts),
  shape: (rows, compiled) => shapeLifecycle(rows, (compiled as LifecycleCompiled).lifecycle),
}

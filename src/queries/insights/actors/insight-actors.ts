// The persons behind one data point of an insight, as a HogQL subquery of person ids:
//  * trends: did the series' event in the interval starting at `day`;
//  * lifecycle: had status `status` in the interval starting at `day` (PostHog's definitions: new =
//    active and created in the interval, returning = active now and in the previous interval,
//    resurrecting = active now, not before, created earlier, dormant = active before, not now);
//  * stickiness: active in exactly `day` intervals of the range;
//  * funnels: reached step `funnelStep` (1-based), or dropped off before step -funnelStep (-2 = did
//    step 1, not step 2), optionally for one breakdown value;
//  * retention: in the cohort of interval `interval` (0-based).
// Personless events have no person row, so lifecycle and stickiness leave them out as PostHog does.
import { z } from 'zod'
import { ValidationError } from '../../../errors.ts'
import { FunnelsQuery } from '../funnels/schema.ts'
import { funnelPersonsSQL } from '../funnels/sql.ts'
import {
  addDays,
  addMonths,
  resolveDateRange,
  startOfDay,
  type Wall,
  wallFromMs,
  wallMs,
  wallText,
} from '../funnels/date-range.ts'
import { planRetention, RetentionQuery, retentionPersonsHogQL } from '../retention/index.ts'
import { compileUnlimited, str } from './hogql.ts'
import { propertiesToHogQL } from './property-filters.ts'

export const InsightActorsQuery = z
  .object({
    kind: z.literal('InsightActorsQuery').optional(),
    source: z.object({ kind: z.string() }).passthrough(),
    day: z.union([z.string(), z.number()]).nullable().optional(),
    status: z.string().nullable().optional(),
    series: z.number().int().min(0).nullable().optional(),
    breakdown: z.unknown().optional(),
    interval: z.number().int().min(0).nullable().optional(),
    funnelStep: z.number().int().nullable().optional(),
    funnelStepBreakdown: z.unknown().optional(),
  })
  .passthrough()
export type InsightActorsQuery = z.infer<typeof InsightActorsQuery>

const Series = z
  .object({
    kind: z.string().optional(),
    event: z.string().nullable().optional(),
    properties: z.unknown().optional(),
  })
  .passthrough()

const TrendsLike = z
  .object({
    kind: z.string(),
    series: z.array(Series).min(1),
    dateRange: z
      .object({ date_from: z.string().nullable().optional(), date_to: z.string().nullable().optional() })
      .passthrough()
      .nullable()
      .optional(),
    interval: z.enum(['minute', 'hour', 'day', 'week', 'month']).nullable().optional(),
    properties: z.unknown().optional(),
    breakdownFilter: z
      .object({ breakdown: z.unknown().optional(), breakdown_type: z.string().nullable().optional() })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough()
type TrendsLike = z.infer<typeof TrendsLike>

export type Interval = 'minute' | 'hour' | 'day' | 'week' | 'month'

export function addInterval(w: Wall, interval: Interval, n: number): Wall {
  if (interval === 'minute') return wallFromMs(wallMs(w) + n * 60_000)
  if (interval === 'hour') return wallFromMs(wallMs(w) + n * 3_600_000)
  if (interval === 'day') return addDays(w, n)
  if (interval === 'week') return addDays(w, 7 * n)
  return addMonths(w, n)
}

/** `day` of a data point: a date or date-time, read as a wall time of the project time zone. */
export function parseDay(day: string | number | null | undefined): Wall {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(String(day ?? ''))
  if (!m) throw new ValidationError(`Invalid day '${String(day)}'.`, 'day')
  return { y: +m[1]!, m: +m[2]!, d: +m[3]!, h: +(m[4] ?? 0), mi: +(m[5] ?? 0), s: +(m[6] ?? 0) }
}

function seriesCondition(q: TrendsLike, index: number): string {
  const s = q.series[index]
  if (!s) throw new ValidationError(`Series ${index} does not exist.`, 'series')
  if ((s.kind ?? 'EventsNode') !== 'EventsNode')
    throw new ValidationError('Only event series are supported.', 'series')
  const parts: string[] = []
  if (s.event) parts.push(`event = ${str(s.event)}`)
  for (const p of [s.properties, q.properties]) {
    const c = propertiesToHogQL(p, 'events')
    if (c !== '1') parts.push(`(${c})`)
  }
  return parts.length ? parts.join(' AND ') : '1'
}

function breakdownCondition(q: TrendsLike, value: unknown): string {
  const b = q.breakdownFilter?.breakdown
  if (value === undefined || value === null || b === undefined || b === null || Array.isArray(b)) return '1'
  const type = q.breakdownFilter?.breakdown_type ?? 'event'
  const base = type === 'person' ? 'person.properties' : 'properties'
  return `ifNull(toString(${base}[${str(String(b))}]), '') = ${str(String(value))}`
}

const between = (from: Wall, to: Wall) => `timestamp >= '${wallText(from)}' AND timestamp < '${wallText(to)}'`
const HAS_PERSON = `person.created_at > '1970-01-02 00:00:00'`

function trendsActors(q: TrendsLike, a: InsightActorsQuery): string {
  const interval = q.interval ?? 'day'
  const start = parseDay(a.day)
  const conds = [seriesCondition(q, a.series ?? 0), between(start, addInterval(start, interval, 1))]
  const b = breakdownCondition(q, a.breakdown)
  if (b !== '1') conds.push(b)
  return `SELECT DISTINCT person_id FROM events WHERE ${conds.join(' AND ')}`
}

function lifecycleActors(q: TrendsLike, a: InsightActorsQuery): string {
  const interval = q.interval ?? 'day'
  const start = parseDay(a.day)
  const end = addInterval(start, interval, 1)
  const prev = addInterval(start, interval, -1)
  const now = `countIf(timestamp >= '${wallText(start)}') > 0`
  const before = `countIf(timestamp < '${wallText(start)}') > 0`
  const created = `min(person.created_at)`
  const status: Record<string, string> = {
    new: `${now} AND ${created} >= '${wallText(start)}' AND ${created} < '${wallText(end)}'`,
    returning: `${now} AND ${before}`,
    resurrecting: `${now} AND NOT ${before} AND ${created} < '${wallText(start)}'`,
    dormant: `${before} AND NOT ${now}`,
  }
  const having = status[a.status ?? '']
  if (!having) throw new ValidationError('status must be new, returning, resurrecting or dormant.', 'status')
  return `SELECT person_id FROM events
WHERE ${seriesCondition(q, a.series ?? 0)} AND ${between(prev, end)} AND ${HAS_PERSON}
GROUP BY person_id HAVING ${having}`
}

function intervalIndex(interval: Interval, from: Wall): string {
  const f = `'${wallText(from)}'`
  if (interval === 'minute')
    return `intDiv(dateDiff('second', assumeNotNull(toDateTime(${f})), timestamp), 60)`
  if (interval === 'hour')
    return `intDiv(dateDiff('second', assumeNotNull(toDateTime(${f})), timestamp), 3600)`
  if (interval === 'day') return `dateDiff('day', assumeNotNull(toDate(${f})), toDate(timestamp))`
  if (interval === 'week') return `intDiv(dateDiff('day', assumeNotNull(toDate(${f})), toDate(timestamp)), 7)`
  return `(toYear(timestamp) * 12 + toMonth(timestamp)) - ${from.y * 12 + from.m}`
}

function stickinessActors(q: TrendsLike, a: InsightActorsQuery, tz: string): string {
  const interval = q.interval ?? 'day'
  const range = resolveDateRange(q.dateRange, tz, '-7d')
  const from = range.from ?? startOfDay(range.to)
  const days = Number(a.day)
  if (!Number.isInteger(days) || days < 1)
    throw new ValidationError('day must be a number of intervals.', 'day')
  return `SELECT person_id FROM events
WHERE ${seriesCondition(q, a.series ?? 0)} AND timestamp >= '${wallText(from)}'
  AND timestamp <= '${wallText(range.to)}' AND ${HAS_PERSON}
GROUP BY person_id HAVING uniq(${intervalIndex(interval, from)}) = ${days}`
}

async function funnelActors(q: FunnelsQuery, a: InsightActorsQuery, opts: Opts): Promise<string> {
  const { sql } = await funnelPersonsSQL(q, opts)
  const step = a.funnelStep ?? 1
  if (step === 0 || step === -1)
    throw new ValidationError('funnelStep is 1-based; drop-offs start at -2.', 'funnelStep')
  const conds = [step > 0 ? `step_reached >= ${step - 1}` : `step_reached = ${-step - 2}`]
  if (a.funnelStepBreakdown !== undefined && a.funnelStepBreakdown !== null) {
    const v = a.funnelStepBreakdown
    conds.push(
      Array.isArray(v)
        ? `breakdown = [${v.map((x) => str(String(x))).join(', ')}]`
        : `breakdown = ${str(String(v))}`,
    )
  }
  return `SELECT aggregation_target FROM (${sql}) WHERE ${conds.join(' AND ')}`
}

interface Opts {
  teamId: number
  timezone: string
}

/** ClickHouse SQL returning the person ids behind the data point (one column, maybe repeated). */
export async function actorIdsSQL(a: InsightActorsQuery, opts: Opts): Promise<string> {
  const kind = a.source.kind
  const tz = opts.timezone
  if (kind === 'FunnelsQuery') return funnelActors(FunnelsQuery.parse(a.source), a, opts)
  let hogql: string
  if (kind === 'RetentionQuery') {
    const plan = planRetention(RetentionQuery.parse(a.source), tz)
    hogql = `SELECT person_id FROM (${retentionPersonsHogQL(plan)}) WHERE cohort = ${a.interval ?? 0}`
  } else {
    const q = TrendsLike.parse(a.source)
    if (kind === 'TrendsQuery') hogql = trendsActors(q, a)
    else if (kind === 'LifecycleQuery') hogql = lifecycleActors(q, a)
    else if (kind === 'StickinessQuery') hogql = stickinessActors(q, a, tz)
    else throw new ValidationError(`Actors of '${kind}' are not supported.`, 'source.kind')
  }
  return (await compileUnlimited(hogql, opts)).clickhouse
}

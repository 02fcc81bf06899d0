// RetentionQuery (PostHog's shape): cohorts by the period of the target event (the first one ever for
// `retention_first_time`, every one for `retention_recurring`), and for each later period how many of
// the cohort did the returning event. The range ends at date_to (default now) and spans totalIntervals
// periods back; only first-time retention reads older events (to find each person's first time).
import { withTestAccounts } from '../../test-accounts.ts'
import { z } from 'zod'
import { ValidationError } from '../../../http/errors.ts'
import { registerQueryKind } from '../../kinds.ts'
import { compile } from '../actors/hogql.ts'
import {
  addIntervals,
  alignToInterval,
  and,
  bound,
  DateRangeSchema,
  instantOf,
  type Interval,
  PropertiesSchema,
  propertiesCondition,
  resolveDateRange,
  str,
  type Wall,
  wallString,
} from '../common/index.ts'

const Entity = z
  .object({
    id: z.union([z.string(), z.number()]).nullable().optional(),
    type: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    properties: PropertiesSchema,
  })
  .passthrough()

export const PERIODS = ['Hour', 'Day', 'Week', 'Month'] as const
export type Period = (typeof PERIODS)[number]

export const RetentionQuery = z
  .object({
    kind: z.literal('RetentionQuery'),
    dateRange: DateRangeSchema.nullable().optional(),
    properties: PropertiesSchema,
    retentionFilter: z
      .object({
        retentionType: z.enum(['retention_first_time', 'retention_recurring']).nullable().optional(),
        totalIntervals: z.number().int().min(1).max(400).nullable().optional(),
        period: z.enum(PERIODS).nullable().optional(),
        targetEntity: Entity.nullable().optional(),
        returningEntity: Entity.nullable().optional(),
      })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough()
export type RetentionQuery = z.infer<typeof RetentionQuery>

export const DEFAULT_TOTAL_INTERVALS = 11

export interface RetentionPlan {
  period: Period
  interval: Interval
  total: number
  firstTime: boolean
  start: Wall // start of period 0
  end: Wall // end of the last period (exclusive)
  target: string
  returning: string
  where: string | undefined
}

const INTERVAL_OF: Record<Period, Interval> = { Hour: 'hour', Day: 'day', Week: 'week', Month: 'month' }

function entityCondition(e: z.infer<typeof Entity> | null | undefined): string {
  const type = e?.type ?? 'events'
  if (type === 'actions') {
    const id = Number(e?.id)
    if (!Number.isSafeInteger(id) || id <= 0)
      throw new ValidationError('An action entity needs the action id.', 'retentionFilter')
    return and([`matchesAction(${id})`, propertiesCondition(e?.properties)])
  }
  if (type !== 'events') {
    throw new ValidationError('Retention entities are events or actions.', 'retentionFilter')
  }
  const event = e?.id ?? '$pageview'
  return and([
    event !== null && event !== '' ? `event = ${str(String(event))}` : undefined,
    propertiesCondition(e?.properties),
  ])
}

export function planRetention(q: RetentionQuery, tz: string): RetentionPlan {
  const f = q.retentionFilter ?? {}
  const period = f.period ?? 'Day'
  const interval = INTERVAL_OF[period]
  const total = f.totalIntervals ?? DEFAULT_TOTAL_INTERVALS
  // Only date_to matters: the range is the totalIntervals periods ending with the one holding it.
  const to = resolveDateRange(
    { date_to: q.dateRange?.date_to, explicitDate: q.dateRange?.explicitDate },
    interval,
    tz,
  ).to
  const last = alignToInterval(to, interval)
  const start = addIntervals(last, interval, -(total - 1))
  const target = entityCondition(f.targetEntity)
  const returning = f.returningEntity ? entityCondition(f.returningEntity) : target
  return {
    period,
    interval,
    total,
    firstTime: (f.retentionType ?? 'retention_first_time') === 'retention_first_time',
    start,
    end: addIntervals(last, interval, 1),
    target,
    returning,
    where: propertiesCondition(q.properties),
  }
}

/** The period index (0 = the first period of the range) of a timestamp, in the project time zone. */
function periodIndex(p: RetentionPlan, ts: string): string {
  const startText = str(bound(p.start))
  if (p.period === 'Hour')
    return `intDiv(dateDiff('second', assumeNotNull(toDateTime(${startText})), ${ts}), 3600)`
  if (p.period === 'Day') return `dateDiff('day', assumeNotNull(toDate(${startText})), toDate(${ts}))`
  if (p.period === 'Week')
    return `intDiv(dateDiff('day', assumeNotNull(toDate(${startText})), toDate(${ts})), 7)`
  const d = new Date(p.start)
  return `(toYear(${ts}) * 12 + toMonth(${ts})) - ${d.getUTCFullYear() * 12 + d.getUTCMonth() + 1}`
}

/**
 * HogQL grouping the events by person: person_id, cohorts (the periods the person is in a cohort
 * of) and returned (the periods of the range with a returning event), each event's condition read
 * inside the aggregates rather than a level below: a level of subquery costs about 1 ms of analysis
 * on 26.x, and 18.16 analysed every level below a query again (docs/insights.md).
 */
function perPersonHogQL(p: RetentionPlan): string {
  const inRange = `timestamp >= ${str(bound(p.start))} AND timestamp < ${str(bound(p.end))}`
  const conds = [`((${p.target}) OR (${p.returning}))`, `timestamp < ${str(bound(p.end))}`]
  if (!p.firstTime) conds.push(inRange)
  if (p.where) conds.push(p.where)
  const pi = periodIndex(p, 'timestamp')
  const cohorts = p.firstTime
    ? `arrayFilter(c -> c >= 0 AND c < ${p.total}, [${periodIndex(p, `minIf(timestamp, ${p.target})`)}])`
    : `arrayDistinct(groupArrayIf(${pi}, ${p.target}))`
  // Recurring with the same target and returning event: the two are the same array, built once.
  const returned =
    !p.firstTime && p.target === p.returning
      ? 'cohorts'
      : `arrayDistinct(groupArrayIf(${pi}, (${p.returning}) AND ${inRange}))`
  return `SELECT person_id, ${cohorts} AS cohorts, ${returned} AS returned
  FROM events WHERE ${conds.join(' AND ')}
  GROUP BY person_id`
}

/** One row per (person, cohort period): the person, the cohort and the later periods they returned in. */
export function retentionPersonsHogQL(p: RetentionPlan): string {
  return `SELECT person_id, cohort, arrayFilter(x -> x > cohort AND x < ${p.total}, returned) AS returned_in
FROM (${perPersonHogQL(p)})
ARRAY JOIN cohorts AS cohort`
}

/** The persons of each (cohort, offset), counted at the level that unrolls the cohorts. */
export function retentionHogQL(p: RetentionPlan): string {
  return `SELECT cohort, arrayJoin(arrayConcat([0], arrayMap(x -> x - cohort,
    arrayFilter(x -> x > cohort AND x < ${p.total}, returned)))) AS offset, count() AS persons
FROM (${perPersonHogQL(p)})
ARRAY JOIN cohorts AS cohort
GROUP BY cohort, offset
ORDER BY cohort, offset
LIMIT 50000`
}

/** A wall time as ISO 8601 with the zone's offset at that time ('Z' in UTC). */
export function isoInZone(w: Wall, tz: string): string {
  const off = Math.round((w - instantOf(w, tz)) / 60_000)
  const abs = Math.abs(off)
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
  return `${wallString(w).replace(' ', 'T')}${off === 0 ? 'Z' : `${off > 0 ? '+' : '-'}${hhmm}`}`
}

export function formatRetention(p: RetentionPlan, rows: unknown[][], tz: string) {
  const counts = new Map<string, number>()
  for (const [c, o, n] of rows) counts.set(`${Number(c)}:${Number(o)}`, Number(n))
  return Array.from({ length: p.total }, (_, i) => ({
    values: Array.from({ length: p.total - i }, (_, k) => ({
      count: counts.get(`${i}:${k}`) ?? 0,
      label: `${p.period} ${k}`,
    })),
    label: `${p.period} ${i}`,
    date: isoInZone(addIntervals(p.start, p.interval, i), tz),
  }))
}

registerQueryKind('RetentionQuery', {
  async compile(raw, project, facts) {
    const plan = planRetention(withTestAccounts(RetentionQuery.parse(raw), project), project.timezone)
    return compile(retentionHogQL(plan), { teamId: project.id, timezone: project.timezone, facts })
  },
  shape(rows, _c, raw, project) {
    return formatRetention(planRetention(RetentionQuery.parse(raw), project.timezone), rows, project.timezone)
  },
})

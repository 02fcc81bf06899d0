// Funnel correlation as PostHog computes it (funnel_correlation_query_runner.py): among the persons who
// entered the funnel, those who converted (reached the last step) are successes, the others
// failures. For every event they did between entering the funnel and converting (or the end of the
// conversion window), count the successes and failures who did it; the odds ratio, with a prior of
// 1 in each cell, is
//   ((success_count + 1) / (success_total - success_count + 1)) /
//   ((failure_count + 1) / (failure_total - failure_count + 1))
// and the event correlates with success when it is above 1, with failure otherwise. Funnel step
// events are left out.
import { and, bound, compileInner, num, type Properties, propertiesCondition, str } from '../common/index.ts'
import type { FunnelsQuery } from './schema.ts'
import { type FunnelPlan, funnelPersonsSQL, funnelRange } from './sql.ts'

export interface CorrelationEntity {
  event: string
  properties?: Properties
}

interface Opts {
  teamId: number
  timezone: string
}

/** Events each funnel person did inside their funnel window, with the person's outcome (SQL). */
async function personEvents(q: FunnelsQuery, opts: Opts, eventFilter: string) {
  const { plan, sql } = await funnelPersonsSQL(q, opts)
  const range = funnelRange(q, opts.timezone)
  // the steps' own events are not correlations (an action's events are left in: they have no one name)
  const steps = plan.steps
    .map((s) => (s.kind === 'ActionsNode' ? null : s.event))
    .filter((e): e is string => !!e)
  const where = and([
    // the funnel window may run past the funnel's date range, so only the lower bound applies
    Number.isNaN(range.lower) ? undefined : `timestamp >= ${str(bound(range.lower))}`,
    eventFilter,
    steps.length ? `event NOT IN (${steps.map(str).join(', ')})` : undefined,
  ])
  const events = await compileInner(
    `SELECT person_id AS ev_person, event AS ev_name, toUnixTimestamp(timestamp) AS ev_ts FROM events
     WHERE ${where}`,
    opts.teamId,
    opts.timezone,
  )
  return {
    plan,
    persons: funnelPersonsOf(plan, sql),
    // Current ClickHouse releases require an alias on every subquery of a join.
    sql: `SELECT ev_person AS person, success, ev_name AS event
FROM (${funnelPersonsOf(plan, sql)}) AS funnel_person
ALL INNER JOIN (${events.clickhouse}) AS person_event USING ev_person
WHERE ev_ts >= first_ts AND ev_ts <= if(success = 1, last_ts, first_ts + ${num(plan.windowSeconds)})`,
  }
}

function funnelPersonsOf(plan: FunnelPlan, personsSql: string): string {
  return `SELECT aggregation_target AS ev_person, first_ts, last_ts,
  if(step_reached = ${plan.steps.length - 1}, 1, 0) AS success
FROM (${personsSql})`
}

/** Rows: event, success_count, failure_count, success_total, failure_total. */
export async function correlationEventsSQL(q: FunnelsQuery, opts: Opts, exclude: string[] = []) {
  const ex = exclude.length ? `event NOT IN (${exclude.map(str).join(', ')})` : '1 = 1'
  const { sql, persons } = await personEvents(q, opts, ex)
  return `SELECT event, uniqIf(person, success = 1), uniqIf(person, success = 0),
  (SELECT countIf(success = 1) FROM (${persons})),
  (SELECT countIf(success = 0) FROM (${persons}))
FROM (${sql})
GROUP BY event
LIMIT 10000`
}

export interface CorrelationResult {
  event: { event: string; properties: Record<string, unknown>; elements: unknown[] }
  success_count: number
  failure_count: number
  odds_ratio: number
  correlation_type: 'success' | 'failure'
}

export function oddsRatio(s: number, f: number, sTotal: number, fTotal: number): number {
  return (s + 1) / (sTotal - s + 1) / ((f + 1) / (fTotal - f + 1))
}

/**
 * Ranked as PostHog shows them: strongest success correlations first, then strongest failures;
 * equal odds ratios by event name, so the order never depends on the order ClickHouse grouped in.
 */
export function rankCorrelations(rows: unknown[][]): CorrelationResult[] {
  const out = rows.map(([event, s, f, st, ft]) => {
    const ratio = oddsRatio(Number(s), Number(f), Number(st), Number(ft))
    return {
      event: { event: String(event), properties: {}, elements: [] },
      success_count: Number(s),
      failure_count: Number(f),
      odds_ratio: ratio,
      correlation_type: ratio > 1 ? ('success' as const) : ('failure' as const),
    }
  })
  const success = out
    .filter((r) => r.correlation_type === 'success')
    .sort((a, b) => b.odds_ratio - a.odds_ratio || byName(a, b))
  const failure = out
    .filter((r) => r.correlation_type === 'failure')
    .sort((a, b) => a.odds_ratio - b.odds_ratio || byName(a, b))
  return [...success, ...failure]
}

const byName = (a: CorrelationResult, b: CorrelationResult) =>
  a.event.event < b.event.event ? -1 : a.event.event > b.event.event ? 1 : 0

/** SQL of the ids of funnel persons who did `entity` in their funnel window and converted (or not). */
export async function correlationActorsSQL(
  q: FunnelsQuery,
  opts: Opts,
  entity: CorrelationEntity,
  converted: boolean,
) {
  const filter = and([`event = ${str(entity.event)}`, propertiesCondition(entity.properties)])
  const { sql } = await personEvents(q, opts, filter)
  return `SELECT DISTINCT person FROM (${sql}) WHERE success = ${converted ? 1 : 0}`
}

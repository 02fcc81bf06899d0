// Funnel correlation as PostHog computes it (funnel_correlation_query_runner.py): among the persons who
// entered the funnel, those who converted (reached the last step) are successes, the others
// failures. For every event they did between entering the funnel and converting (or the end of the
// conversion window), count the successes and failures who did it; the odds ratio, with a prior of
// 1 in each cell, is
//   ((success_count + 1) / (success_total - success_count + 1)) /
//   ((failure_count + 1) / (failure_total - failure_count + 1))
// and the event correlates with success when it is above 1, with failure otherwise. Funnel step
// events are left out; `properties` correlation does the same per person property value.
import { num, str } from '../actors/hogql.ts'
import { propertiesToHogQL } from '../actors/property-filters.ts'
import type { FunnelsQuery } from './schema.ts'
import { funnelWhere, type FunnelPlan, personsQuery, planFunnel } from './sql.ts'
import { resolveDateRange, wallText } from './date-range.ts'

export interface CorrelationEntity {
  event: string
  properties?: unknown
}

/** Funnel persons with first/last step times and whether they converted. */
function funnelPersons(plan: FunnelPlan, q: FunnelsQuery, tz: string): string {
  return `SELECT aggregation_target, first_ts, last_ts, if(step_reached = ${plan.steps.length - 1}, 1, 0) AS success
FROM (${personsQuery(plan, funnelWhere(q, tz))})`
}

/** Events each funnel person did inside their funnel window, with the person's outcome. */
function personEvents(plan: FunnelPlan, q: FunnelsQuery, tz: string, eventFilter: string): string {
  const range = resolveDateRange(q.dateRange, tz, '-7d')
  const steps = plan.steps.map((s) => s.event).filter((e): e is string => !!e)
  const notStep = steps.length ? ` AND event NOT IN (${steps.map(str).join(', ')})` : ''
  // the window may run past the funnel's date range
  const from = range.from ? `timestamp >= '${wallText(range.from)}' AND ` : ''
  return `SELECT f.aggregation_target AS person, f.success AS success, e.event AS event
FROM (${funnelPersons(plan, q, tz)}) AS f
JOIN (SELECT person_id, event, toUnixTimestamp(timestamp) AS ts FROM events
      WHERE ${from}${eventFilter}${notStep}) AS e ON e.person_id = f.aggregation_target
WHERE e.ts >= f.first_ts AND e.ts <= if(f.success = 1, f.last_ts, f.first_ts + ${num(plan.windowSeconds)})`
}

/** Rows: event, success_count, failure_count, success_total, failure_total. */
export function correlationEventsHogQL(q: FunnelsQuery, tz: string, exclude: string[] = []): string {
  const plan = planFunnel(q)
  const ex = exclude.length ? `event NOT IN (${exclude.map(str).join(', ')})` : '1'
  return `SELECT event, uniqIf(person, success = 1), uniqIf(person, success = 0),
  (SELECT countIf(success = 1) FROM (${funnelPersons(plan, q, tz)})),
  (SELECT countIf(success = 0) FROM (${funnelPersons(plan, q, tz)}))
FROM (${personEvents(plan, q, tz, ex)})
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
  return ((s + 1) / (sTotal - s + 1)) / ((f + 1) / (fTotal - f + 1))
}

/** Ranked as PostHog shows them: strongest success correlations first, then strongest failures. */
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
  const success = out.filter((r) => r.correlation_type === 'success').sort((a, b) => b.odds_ratio - a.odds_ratio)
  const failure = out.filter((r) => r.correlation_type === 'failure').sort((a, b) => a.odds_ratio - b.odds_ratio)
  return [...success, ...failure]
}

/** Person ids of funnel persons who did `entity` in their funnel window and converted (or not). */
export function correlationActorsHogQL(q: FunnelsQuery, tz: string, entity: CorrelationEntity, converted: boolean) {
  const plan = planFunnel(q)
  const props = propertiesToHogQL(entity.properties, 'events')
  const filter = `event = ${str(entity.event)}${props !== '1' ? ` AND (${props})` : ''}`
  return `SELECT person FROM (${personEvents(plan, q, tz, filter)}) WHERE success = ${converted ? 1 : 0}`
}

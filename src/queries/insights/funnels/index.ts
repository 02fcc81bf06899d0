import { z } from 'zod'
import { registerQueryKind } from '../../kinds.ts'
import { compile } from '../actors/hogql.ts'
import { correlationEventsHogQL, rankCorrelations } from './correlation.ts'
import { formatFunnel } from './results.ts'
import { FunnelsQuery } from './schema.ts'
import { funnelWhere, personsQuery, planFunnel } from './sql.ts'

/** The aggregate over persons: per breakdown value, persons ending at each step and conversion times. */
export function funnelAggregateHogQL(q: FunnelsQuery, tz: string): string {
  const plan = planFunnel(q)
  const n = plan.steps.length
  const ended = Array.from({ length: n }, (_, i) => `countIf(step_reached = ${i})`)
  const times = Array.from(
    { length: n - 1 },
    (_, i) => `groupArrayIf(arrayElement(timings, ${i + 1}), arrayElement(timings, ${i + 1}) > 0)`,
  )
  return `SELECT breakdown, ${[...ended, ...times].join(', ')}
FROM (${personsQuery(plan, funnelWhere(q, tz))})
GROUP BY breakdown
LIMIT 50000`
}

registerQueryKind('FunnelsQuery', {
  async compile(raw, project) {
    const q = FunnelsQuery.parse(raw)
    return compile(funnelAggregateHogQL(q, project.timezone), { teamId: project.id, timezone: project.timezone })
  },
  shape(rows, _compiled, raw) {
    return formatFunnel(planFunnel(FunnelsQuery.parse(raw)), rows)
  },
})

const FunnelCorrelationQuery = z
  .object({
    kind: z.literal('FunnelCorrelationQuery'),
    source: z.object({ source: FunnelsQuery }).passthrough(),
    funnelCorrelationType: z.enum(['events']).nullable().optional(),
    funnelCorrelationExcludeEventNames: z.array(z.string()).nullable().optional(),
  })
  .passthrough()

// Event correlation (PostHog's FunnelCorrelationQuery with type `events`): {events, skewed}.
registerQueryKind('FunnelCorrelationQuery', {
  async compile(raw, project) {
    const q = FunnelCorrelationQuery.parse(raw)
    const hogql = correlationEventsHogQL(q.source.source, project.timezone, q.funnelCorrelationExcludeEventNames ?? [])
    return compile(hogql, { teamId: project.id, timezone: project.timezone })
  },
  shape(rows) {
    const events = rankCorrelations(rows)
    const totals = rows[0] ? Number(rows[0][3]) + Number(rows[0][4]) : 0
    return { events, skewed: false, total_persons: totals }
  },
})

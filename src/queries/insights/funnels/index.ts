import { z } from 'zod'
import { registerQueryKind } from '../../kinds.ts'
import { correlationEventsSQL, rankCorrelations } from './correlation.ts'
import { formatFunnel } from './results.ts'
import { FunnelsQuery } from './schema.ts'
import { withTestAccounts } from '../../test-accounts.ts'
import { type FunnelPlan, funnelPersonsSQL, planFunnel } from './sql.ts'

/** The aggregate over persons: per breakdown value, persons ending at each step and conversion times. */
export function funnelAggregateSQL(plan: FunnelPlan, personsSql: string): string {
  const n = plan.steps.length
  const ended = Array.from({ length: n }, (_, i) => `countIf(step_reached = ${i})`)
  // With a breakdown the values past the limit are merged into "Other" in Node, which needs each
  // group's conversion times; without one, ClickHouse sends how many converted, their mean and
  // their exact median (the middle value, or the mean of the two middle values), not every time.
  const times = Array.from({ length: n - 1 }, (_, i) => {
    const list = `groupArrayIf(timings[${i + 1}], timings[${i + 1}] > 0)`
    return plan.breakdown ? list : timeStats(list)
  })
  return `SELECT breakdown, ${[...ended, ...times].join(', ')}
FROM (${personsSql})
GROUP BY breakdown
LIMIT 50000`
}

/** `[count, mean, median]` (Float64) of the non-empty sorted list `list` makes; zeros when empty. */
function timeStats(list: string): string {
  const s = `arraySort(${list})`
  const len = `length(${s})`
  const half = `intDiv(${len}, 2)`
  const median = `if(${len} % 2 = 1, toFloat64(${s}[${half} + 1]), (${s}[${half}] + ${s}[${half} + 1]) / 2)`
  return `[toFloat64(${len}), if(${len} = 0, 0, arraySum(${s}) / ${len}), ${median}]`
}

registerQueryKind('FunnelsQuery', {
  async compile(raw, project, facts) {
    const q = withTestAccounts(FunnelsQuery.parse(raw), project)
    const opts = { teamId: project.id, timezone: project.timezone, facts }
    const { plan, sql, hogql } = await funnelPersonsSQL(q, opts)
    const n = plan.steps.length
    const columns = ['breakdown', ...Array.from({ length: n }, (_, i) => `step_${i + 1}`)]
    columns.push(...Array.from({ length: n - 1 }, (_, i) => `step_${i + 1}_conversion_times`))
    // actions' names as the catalog has them (the shape runs where there is none)
    const stepNames = plan.steps.map((st) => st.name ?? null)
    return { hogql, clickhouse: funnelAggregateSQL(plan, sql), columns, types: [], limit: 50000, stepNames }
  },
  shape(rows, compiled, raw) {
    const plan = planFunnel(FunnelsQuery.parse(raw))
    const names = (compiled as { stepNames?: (string | null)[] }).stepNames ?? []
    plan.steps = plan.steps.map((st, i) => (st.name || !names[i] ? st : { ...st, name: names[i] }))
    return formatFunnel(plan, rows)
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
    const opts = { teamId: project.id, timezone: project.timezone }
    const funnel = withTestAccounts(q.source.source, project)
    const sql = await correlationEventsSQL(funnel, opts, q.funnelCorrelationExcludeEventNames ?? [])
    const columns = ['event', 'success_count', 'failure_count', 'success_total', 'failure_total']
    return { hogql: '', clickhouse: sql, columns, types: [], limit: 10000 }
  },
  shape(rows) {
    const events = rankCorrelations(rows)
    const totals = rows[0] ? Number(rows[0][3]) + Number(rows[0][4]) : 0
    return { events, skewed: false, total_persons: totals }
  },
})

// Rows of the funnel aggregate -> PostHog's FunnelsQuery results (base.py _format_single_funnel):
// per step {action_id, name, custom_name, order, people, count, type, average_conversion_time,
// median_conversion_time}, counts cumulative (everyone who got at least that far); with a breakdown,
// one such list per value, the values past the breakdown limit merged into "Other".
import type { FunnelPlan } from './sql.ts'

export interface FunnelStepResult {
  action_id: string | number | null
  name: string | null
  custom_name: string | null
  order: number
  people: string[]
  count: number
  type: 'events' | 'actions'
  average_conversion_time: number | null
  median_conversion_time: number | null
  breakdown?: unknown
  breakdown_value?: unknown
}

interface Group {
  breakdown: unknown
  // persons whose furthest step is i (0-based)
  ended: number[]
  // conversion times (seconds) into step i+1, of persons who made it (with a breakdown)
  times: number[][]
  // [count, mean, median] of those times, as ClickHouse computed them (without a breakdown)
  stats?: number[][]
}

export function median(xs: number[]): number | null {
  if (!xs.length) return null
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null)

export function parseRows(rows: unknown[][], steps: number, stats = false): Group[] {
  return rows.map((r) => {
    const lists = Array.from({ length: steps - 1 }, (_, i) =>
      ((r[1 + steps + i] as unknown[]) ?? []).map(Number),
    )
    return {
      breakdown: r[0],
      ended: Array.from({ length: steps }, (_, i) => Number(r[1 + i])),
      times: stats ? [] : lists,
      stats: stats ? lists : undefined,
    }
  })
}

/** Mean and median of the conversion times into step i+1 (0-based i), null when nobody converted. */
function timeFigures(g: Group, i: number): { mean: number | null; median: number | null } {
  const s = g.stats?.[i]
  if (s) return s[0] ? { mean: s[1]!, median: s[2]! } : { mean: null, median: null }
  const times = g.times[i] ?? []
  return { mean: mean(times), median: median(times) }
}

function formatGroup(plan: FunnelPlan, g: Group, withBreakdown: boolean): FunnelStepResult[] {
  const n = plan.steps.length
  const out: FunnelStepResult[] = []
  let cumulative = 0
  const counts: number[] = []
  for (let i = n - 1; i >= 0; i--) {
    cumulative += g.ended[i] ?? 0
    counts[i] = cumulative
  }
  for (let i = 0; i < n; i++) {
    const step = plan.steps[i]!
    const unordered = plan.order === 'unordered'
    const figures = i > 0 ? timeFigures(g, i - 1) : { mean: null, median: null }
    const r: FunnelStepResult = {
      action_id: unordered ? null : step.kind === 'ActionsNode' ? step.id : (step.event ?? null),
      name: unordered
        ? `Completed ${i + 1} step${i ? 's' : ''}`
        : step.kind === 'ActionsNode'
          ? (step.name ?? `Action ${step.id}`)
          : (step.event ?? null),
      custom_name: unordered ? null : (step.custom_name ?? null),
      order: i,
      people: [],
      count: counts[i]!,
      type: step.kind === 'ActionsNode' ? 'actions' : 'events',
      average_conversion_time: figures.mean,
      median_conversion_time: figures.median,
    }
    if (withBreakdown) {
      r.breakdown = g.breakdown
      r.breakdown_value = g.breakdown
    }
    out.push(r)
  }
  return out
}

/** Orders breakdown values as PostHog does (most persons ending at the last step, then the one
 * before, …) and merges those past the limit into "Other". */
export function rankBreakdowns(plan: FunnelPlan, groups: Group[]): Group[] {
  const n = plan.steps.length
  const sorted = [...groups].sort((a, b) => {
    for (let i = n - 1; i >= 0; i--) {
      const d = (b.ended[i] ?? 0) - (a.ended[i] ?? 0)
      if (d) return d
    }
    return String(a.breakdown).localeCompare(String(b.breakdown))
  })
  if (sorted.length <= plan.breakdownLimit) return sorted
  const kept = sorted.slice(0, plan.breakdownLimit)
  const rest = sorted.slice(plan.breakdownLimit)
  const other: Group = {
    breakdown: plan.breakdown?.array ? ['Other'] : 'Other',
    ended: Array.from({ length: n }, (_, i) => rest.reduce((s, g) => s + (g.ended[i] ?? 0), 0)),
    times: Array.from({ length: n - 1 }, (_, i) => rest.flatMap((g) => g.times[i] ?? [])),
  }
  return [...kept, other]
}

export function formatFunnel(plan: FunnelPlan, rows: unknown[][]): FunnelStepResult[] | FunnelStepResult[][] {
  const groups = parseRows(rows, plan.steps.length, !plan.breakdown)
  if (!plan.breakdown) {
    if (!groups.length) return []
    return formatGroup(plan, groups[0]!, false)
  }
  return rankBreakdowns(plan, groups).map((g) => formatGroup(plan, g, true))
}

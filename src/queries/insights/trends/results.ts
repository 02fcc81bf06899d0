// Rows of the compiled trends statement → PostHog's TrendsQueryResponse.results.
import {
  BREAKDOWN_OTHER,
  breakdownEnabled,
  breakdownRank,
  bucketsOf,
  bucketWall,
  dayOf,
  labelOf,
  resolveDateRange,
  type ResolvedRange,
  seriesLabel,
  seriesEntity,
  startOfDay,
  type Wall,
} from '../common/index.ts'
import { applyFormula, parseFormula } from './formula.ts'
import type { TrendsPlan } from './query.ts'

type Result = Record<string, unknown> & { data: number[] | null; breakdown_value?: unknown }

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)

function rangesWithEarliest(plan: TrendsPlan, rows: unknown[][]): ResolvedRange[] {
  if (!plan.ranges[0]!.all) return plan.ranges
  const row = rows.find((r) => r[0] === 'earliest')
  const text = row ? String(row[4]) : ''
  // Without any event the range is just today (PostHog falls back to a fixed early date).
  const earliest: Wall = text ? bucketWall(text) : startOfDay(plan.ranges[0]!.to)
  return [resolveDateRange(plan.query.dateRange, plan.interval, plan.timezone, { now: plan.now, earliest })]
}

export function shapeTrends(rows: unknown[][], plan: TrendsPlan): Result[] {
  const q = plan.query
  const ranges = rangesWithEarliest(plan, rows)
  const buckets = ranges.map(bucketsOf)
  const index = buckets.map((bs) => new Map(bs.map((b, i) => [b, i])))
  const width = (c: number) => (plan.totalValue ? 1 : buckets[c]!.length)

  // (period, series) → breakdown value → values per bucket
  const cells = new Map<string, Map<string, number[]>>()
  for (const row of rows) {
    if (row[0] !== 'row') continue
    const [, s, c, breakdown, bucket, value] = row as [string, number, number, string, string, number]
    const at = plan.totalValue ? 0 : index[c]!.get(bucketWall(bucket))
    if (at === undefined) continue
    const key = `${c}|${s}`
    let byValue = cells.get(key)
    if (!byValue) cells.set(key, (byValue = new Map()))
    let data = byValue.get(breakdown)
    if (!data) byValue.set(breakdown, (data = new Array<number>(width(c)).fill(0)))
    data[at]! += Number(value)
  }

  const hasBreakdown = breakdownEnabled(q.breakdownFilter)
  const compare = ranges.length > 1
  const results: Result[] = []
  for (let c = 0; c < ranges.length; c++) {
    const r = ranges[c]!
    const days = plan.totalValue ? [] : buckets[c]!.map((b) => dayOf(b, r.interval))
    const labels = buckets[c]!.map((b) => labelOf(b, r))
    for (let s = 0; s < q.series.length; s++) {
      const node = q.series[s]!
      const action = {
        days,
        ...seriesEntity(node),
        order: s,
        name: seriesLabel(node),
        custom_name: node.custom_name ?? null,
        math: node.math ?? null,
        math_property: node.math_property ?? null,
        math_hogql: node.math_hogql ?? null,
        math_group_type_index: node.math_group_type_index ?? null,
        properties: {},
      }
      const byValue = cells.get(`${c}|${s}`) ?? new Map<string, number[]>()
      const entries: [string | null, number[]][] = hasBreakdown
        ? [...byValue.entries()]
        : [[null, byValue.get('') ?? new Array<number>(width(c)).fill(0)]]
      if (hasBreakdown) {
        entries.sort(
          (a, b) => breakdownRank(a[0]) - breakdownRank(b[0]) || sum(b[1]) - sum(a[1]) || cmp(a[0]!, b[0]!),
        )
      }
      for (const [value, raw] of entries) {
        let label = seriesLabel(node)
        const shown = plan.breakdownLabels ? (plan.breakdownLabels[value ?? ''] ?? value) : value
        if (hasBreakdown) label = q.series.length > 1 ? `${label} - ${shown}` : String(shown)
        const out: Result = plan.totalValue
          ? { data: [], days: [], count: 0, aggregated_value: raw[0] ?? 0, label, action }
          : timeSeries(raw, plan, labels, days, label, action)
        // a cohort breakdown's values are the cohorts' ids (numbers) and 'all', as PostHog gives them
        if (hasBreakdown)
          out.breakdown_value = plan.breakdownLabels && /^\d+$/.test(value ?? '') ? Number(value) : value
        if (compare) Object.assign(out, { compare: true, compare_label: c === 0 ? 'current' : 'previous' })
        results.push(out)
      }
    }
  }
  const formulas = formulaList(plan)
  if (!formulas.length) return hideOther(results, plan)
  return hideOther(withFormulas(results, formulas, plan, compare, hasBreakdown), plan)
}

function timeSeries(
  raw: number[],
  plan: TrendsPlan,
  labels: string[],
  days: string[],
  label: string,
  action: unknown,
): Result {
  let data = raw
  let count = sum(raw)
  if (plan.cumulative) {
    let acc = 0
    data = raw.map((v) => (acc += v))
    count = data[data.length - 1] ?? 0
  }
  return { data, labels, days, count, label, action }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function hideOther(results: Result[], plan: TrendsPlan): Result[] {
  if (!plan.query.breakdownFilter?.breakdown_hide_other_aggregation) return results
  return results.filter((r) => r.breakdown_value !== BREAKDOWN_OTHER)
}

function formulaList(plan: TrendsPlan): { formula: string; custom_name?: string | null }[] {
  const f = plan.query.trendsFilter
  if (!f) return []
  if (f.formulaNodes?.length) return f.formulaNodes
  if (f.formulas?.length) return f.formulas.map((formula) => ({ formula }))
  return f.formula ? [{ formula: f.formula }] : []
}

// posthog trends_query_runner.apply_formula: series are combined per compare period and per
// breakdown value (a series without that value counts as zeros).
function withFormulas(
  results: Result[],
  formulas: { formula: string; custom_name?: string | null }[],
  plan: TrendsPlan,
  compare: boolean,
  hasBreakdown: boolean,
): Result[] {
  const n = plan.query.series.length
  const out: Result[] = []
  const periods = compare ? ['current', 'previous'] : [undefined]
  for (const f of formulas) {
    const ast = parseFormula(f.formula, n)
    for (const period of periods) {
      const inPeriod = results.filter((r) => period === undefined || r.compare_label === period)
      const order = (r: Result) => (r.action as { order: number }).order
      const keys = hasBreakdown ? [...new Set(inPeriod.map((r) => r.breakdown_value as string))] : [undefined]
      const group: Result[] = []
      for (const key of keys) {
        const members = inPeriod.filter((r) => !hasBreakdown || r.breakdown_value === key)
        const any = members[0]
        if (!any) continue
        const value = (i: number): number[] => {
          const m = members.find((r) => order(r) === i)
          if (plan.totalValue) return [Number(m?.aggregated_value ?? 0)]
          return m?.data ?? new Array<number>(any.data?.length ?? 0).fill(0)
        }
        const computed = applyFormula(
          ast,
          Array.from({ length: n }, (_, i) => value(i)),
        )
        const base: Result = { ...any, label: f.custom_name ?? `Formula (${f.formula})`, action: null }
        if (plan.totalValue) Object.assign(base, { aggregated_value: sum(computed), data: null, count: 0 })
        else Object.assign(base, { data: computed, count: sum(computed) })
        group.push(base)
      }
      if (hasBreakdown) {
        const total = (r: Result) => (plan.totalValue ? Number(r.aggregated_value) : sum(r.data ?? []))
        group.sort(
          (a, b) =>
            breakdownRank(a.breakdown_value) - breakdownRank(b.breakdown_value) ||
            total(b) - total(a) ||
            cmp(String(a.breakdown_value), String(b.breakdown_value)),
        )
      }
      out.push(...group)
    }
  }
  return out
}

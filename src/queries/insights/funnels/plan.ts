// A FunnelsQuery read into what its SQL is built from (FunnelPlan), with PostHog's defaults and the
// checks PostHog makes (exclusion ranges, step attribution), as 400s.
import { ValidationError } from '../../../http/errors.ts'
import {
  and,
  DEFAULT_BREAKDOWN_LIMIT,
  nameActions,
  nodeCondition,
  propertiesCondition,
  propertyField,
} from '../common/index.ts'
import { type ExclusionNode, type FunnelsQuery, StepNode } from './schema.ts'

/** The most steps a funnel may have: one bit each in a UInt64 mask, as exact JS integers. */
export const MAX_STEPS = 52

// PostHog's DATERANGE_MAP: a month is 30 days.
const UNIT_SECONDS = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800, month: 2592000 }

export type OrderType = 'ordered' | 'strict' | 'unordered'
export type Attribution = 'first_touch' | 'last_touch' | 'all_events' | 'step'

export interface FunnelPlan {
  steps: StepNode[]
  order: OrderType
  windowSeconds: number
  exclusions: ExclusionNode[]
  breakdown: { exprs: string[]; array: boolean } | null
  attribution: Attribution
  attributionStep: number
  breakdownLimit: number
}

/** The SQL condition an event meets to be this step or exclusion. */
export function eventCondition(node: StepNode | ExclusionNode): string {
  return and([
    node.kind === 'ActionsNode' ? nodeCondition(node) : nodeCondition({ ...node, kind: 'EventsNode' }),
    propertiesCondition(node.properties),
  ])
}

// Funnels keep PostHog's '' for a missing value (trends use the null label instead).
function breakdownExpr(prop: string | number, type: string): string {
  const key = String(prop)
  if (type === 'event') return `ifNull(toString(${propertyField(key)}), '')`
  if (type === 'person') return `ifNull(toString(${propertyField(key, 'person.')}), '')`
  if (type === 'hogql') return `ifNull(toString(${key}), '')`
  throw new ValidationError(`Unsupported breakdown type '${type}'.`, 'breakdownFilter.breakdown_type')
}

export function planFunnel(q: FunnelsQuery): FunnelPlan {
  const steps = q.series.map((s, i) => {
    const node = StepNode.safeParse(s)
    if (!node.success)
      throw new ValidationError(`Step ${i} must be an EventsNode or an ActionsNode.`, `series.${i}`)
    return node.data
  })
  nameActions(steps)
  if (steps.length > MAX_STEPS) {
    throw new ValidationError(`A funnel has at most ${MAX_STEPS} steps.`, 'series')
  }
  const f = q.funnelsFilter ?? {}
  const unit = f.funnelWindowIntervalUnit ?? 'day'
  const windowSeconds = f.funnelWindowInterval
    ? f.funnelWindowInterval * UNIT_SECONDS[unit]
    : (f.funnelWindowDays ?? 14) * 86400
  const exclusions = f.exclusions ?? []
  for (const e of exclusions) {
    if (e.funnelFromStep >= e.funnelToStep) {
      throw new ValidationError(
        'Exclusion event range is invalid. End of range should be greater than start.',
      )
    }
    if (e.funnelToStep > steps.length - 1) {
      throw new ValidationError(
        'Exclusion event range is invalid. End of range is greater than number of steps.',
      )
    }
  }
  const order = f.funnelOrderType ?? 'ordered'
  const b = q.breakdownFilter
  let breakdown: FunnelPlan['breakdown'] = null
  if (b?.breakdown !== null && b?.breakdown !== undefined && b.breakdown !== '') {
    const type = b.breakdown_type ?? 'event'
    breakdown = Array.isArray(b.breakdown)
      ? { exprs: b.breakdown.map((x) => breakdownExpr(x, type)), array: true }
      : { exprs: [breakdownExpr(b.breakdown, type)], array: false }
  }
  const attribution = f.breakdownAttributionType ?? 'first_touch'
  const attributionStep = f.breakdownAttributionValue ?? 0
  if (attribution === 'step' && attributionStep >= steps.length) {
    throw new ValidationError('breakdownAttributionValue is not a step of the funnel.')
  }
  if (order === 'unordered' && attribution === 'step' && attributionStep !== 0) {
    throw new ValidationError(
      'Only the first step can be used for breakdown attribution in unordered funnels',
    )
  }
  return {
    steps,
    order,
    windowSeconds,
    exclusions: order === 'unordered' ? [] : exclusions,
    breakdown,
    attribution,
    attributionStep,
    breakdownLimit: b?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT,
  }
}

// How a funnel's SQL holds a person's events (one array of them per person) and reads one.
import type { FunnelPlan } from './plan.ts'

// An element of `evs` is one event, read through an EventLayout. The tuple layout holds scalars:
// 1 ts (seconds), 2 lowest step matched (0: none), 3 steps matched as a mask (bit k-1: step k),
// 4 exclusions matched as a mask (bit i-1: the exclusion blocking step i), 5 breakdown value (only
// with a breakdown). Tuples compare in that order, so sorting them orders events by second, then by
// lowest step. Masks instead of arrays: a tuple holding arrays costs an allocation per event to
// build, group and sort, and testing a bit is cheaper than `has`.
// Without a breakdown and with at most PACKED_MAX_STEPS steps, an event is one UInt64 instead (the
// packed layout): the second in the high 32 bits, then the lowest step (4 bits), the steps mask and
// the exclusions mask, so that the numbers sort exactly as the tuples do. Grouping and sorting one
// number per event cost a third of what tuples cost (docs/performance.md, "Funnels: one number per
// event"), and the grouping was most of a funnel's time.
// Timestamps come from a flat array: lambdas copy every array they capture once per element they map
// over, so capturing the events would cost memory quadratic in a person's events.
export const ts = (i: string) => `tsa[${i}]`

export const bit = (k: number) => String(2 ** (k - 1))
/** `mask` has bit k (1-based), as SQL. */
export const hasBit = (mask: string, k: number) => `bitAnd(${mask}, ${bit(k)}) != 0`

/** The most steps the packed layout holds: 32 bits for 4 + n + (n - 1) bits. */
export const PACKED_MAX_STEPS = 14

/** How `evs` elements are built (over the events level's columns) and read. */
export interface EventLayout {
  /** the `groupArray` argument */
  element: string
  ts(e: string): string
  low(e: string): string
  /** e can be step k (1-based) */
  step(e: string, k: number): string
  /** e is an exclusion blocking step i */
  excluded(e: string, i: number): string
  prop(e: string): string
}

export function eventLayout(plan: FunnelPlan): EventLayout {
  const n = plan.steps.length
  if (plan.breakdown || n > PACKED_MAX_STEPS) {
    return {
      element: `tuple(ts, low, st, ex${plan.breakdown ? ', prop' : ''})`,
      ts: (e) => `${e}.1`,
      low: (e) => `${e}.2`,
      step: (e, k) => hasBit(`${e}.3`, k),
      excluded: (e, i) => hasBit(`${e}.4`, i),
      prop: (e) => `tupleElement(${e}, 5)`,
    }
  }
  // bits 0..n-2 exclusions, n-1..2n-2 steps, 2n-1..2n+2 the lowest step, 32..63 the second
  const stAt = n - 1
  const lowAt = 2 * n - 1
  return {
    element: `toUInt64(ts) * 4294967296 + toUInt64(low) * ${2 ** lowAt} + toUInt64(st) * ${2 ** stAt} + toUInt64(ex)`,
    ts: (e) => `toUInt32(bitShiftRight(${e}, 32))`,
    low: (e) => `bitAnd(bitShiftRight(${e}, ${lowAt}), 15)`,
    step: (e, k) => hasBit(e, stAt + k),
    excluded: (e, i) => hasBit(e, i),
    prop: () => {
      throw new Error('the packed layout has no breakdown value')
    },
  }
}

/** Extra condition for the event used as step `k` (0-based) under step attribution. */
export function stepAttribution(plan: FunnelPlan, L: EventLayout, k: number, e: string): string {
  return plan.breakdown && plan.attribution === 'step' && plan.attributionStep === k
    ? ` AND ${L.prop(e)} = bv`
    : ''
}

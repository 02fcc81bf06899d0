// How many exposures an experiment needs, and how long that takes, as PostHog's running time
// calculator says (frontend/src/scenes/experiments/RunningTimeCalculator/calculations.ts): Lehr's
// rule for 80% power at a 5% two-sided level, N = 16·σ² / Δ² per variant, where Δ is the minimum
// detectable effect (a percentage of the control's value) and σ² is
//   funnel         p·(1 − p) of the control's conversion rate p
//   mean, count    2 × the control's mean (PostHog's scaling for counts)
//   mean, sum      0.25 × the control's mean²
//   ratio          the delta-method variance of the control's ratio
// The total is N times the number of variants.
import type { ExperimentMetric } from './metrics.ts'

/** PostHog's default minimum detectable effect, in percent. */
export const DEFAULT_MDE = 30

/** What the calculation reads of the control variant. */
export interface Baseline {
  number_of_samples: number
  sum: number
  sum_squares: number
  denominator_sum?: number | null
  denominator_sum_squares?: number | null
  numerator_denominator_sum_product?: number | null
}

/** The control's value the effect is relative to: conversion rate, mean per entity, or ratio. */
export function baselineValue(metric: ExperimentMetric, b: Baseline): number | null {
  if (b.number_of_samples === 0) return null
  if (metric.metric_type === 'ratio') return b.denominator_sum ? b.sum / b.denominator_sum : null
  return b.sum / b.number_of_samples
}

function varianceOf(metric: ExperimentMetric, value: number, b: Baseline): number | null {
  switch (metric.metric_type) {
    case 'funnel':
      return value * (1 - value)
    case 'mean':
      return metric.source.math === 'sum' ? 0.25 * value ** 2 : 2 * value
    case 'ratio': {
      const n = b.number_of_samples
      if (!b.denominator_sum) return null
      const mM = b.sum / n
      const mD = b.denominator_sum / n
      const vM = b.sum_squares / n - mM ** 2
      const vD = (b.denominator_sum_squares ?? 0) / n - mD ** 2
      const cov = (b.numerator_denominator_sum_product ?? 0) / n - mM * mD
      return vM / mD ** 2 + (mM ** 2 * vD) / mD ** 4 - (2 * mM * cov) / mD ** 3
    }
  }
}

/** Exposures needed over all variants to detect `mde` percent; null when it cannot be said. */
export function recommendedSampleSize(
  metric: ExperimentMetric,
  mde: number,
  variants: number,
  b: Baseline,
): number | null {
  const value = baselineValue(metric, b)
  if (value === null || mde === 0) return null
  const delta = (mde / 100) * value
  const variance = varianceOf(metric, value, b)
  if (delta === 0 || variance === null || !Number.isFinite(variance)) return null
  return Math.ceil(((16 * variance) / delta ** 2) * variants)
}

/** Days still to run at the rate seen so far; 0 once enough entities are exposed. */
export function remainingDays(
  recommended: number | null,
  exposures: number,
  daysElapsed: number | null,
): number | null {
  if (!recommended || !exposures || daysElapsed === null || daysElapsed < 0.1) return null
  const left = recommended - exposures
  return left <= 0 ? 0 : left / (exposures / daysElapsed)
}

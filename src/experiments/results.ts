// The rows of an experiment metric query (hogql.ts, one per variant seen) as PostHog's
// ExperimentQueryResponse: the control as `baseline`, each other variant in `variant_results` with
// its statistics against control, variants without data filled with zeros, the `$multiple` group
// dropped, and PostHog's checks that say when there is too little data for statistics.
import { ValidationError } from '../http/errors.ts'
import { MULTIPLE_VARIANT_KEY } from './hogql.ts'
import type { ExperimentMetric } from './metrics.ts'
import { DEFAULT_MDE, recommendedSampleSize, remainingDays } from './sample-size.ts'
import { bayesianTest, frequentistTest, type Statistic, StatisticError } from './statistics.ts'

/** PostHog's ExperimentStatsValidationFailure values. */
export type ValidationFailure = 'not-enough-exposures' | 'not-enough-metric-data' | 'baseline-mean-is-zero'

export interface VariantStats {
  key: string
  number_of_samples: number
  sum: number
  sum_squares: number
  step_counts?: number[]
  denominator_sum?: number
  denominator_sum_squares?: number
  numerator_denominator_sum_product?: number
}

export interface ResultContext {
  metric: ExperimentMetric
  /** the flag's variant keys, control first */
  variants: string[]
  method: 'bayesian' | 'frequentist'
  /** percent */
  minimumDetectableEffect: number | null
  startDate: string
  endDate: string | null
  now: number
}

const n = (v: unknown) => (v === null || v === undefined ? 0 : Number(v))

/** Rows (columns of hogql.ts metricColumns) as variant statistics, in the flag's variant order. */
export function variantStats(
  rows: unknown[][],
  ctx: Pick<ResultContext, 'metric' | 'variants'>,
): VariantStats[] {
  const byKey = new Map<string, VariantStats>()
  for (const r of rows) {
    const key = String(r[0])
    if (key === MULTIPLE_VARIANT_KEY || !ctx.variants.includes(key)) continue
    const v: VariantStats = { key, number_of_samples: n(r[1]), sum: n(r[2]), sum_squares: n(r[3]) }
    if (ctx.metric.metric_type === 'funnel') v.step_counts = ((r[4] as unknown[]) ?? []).map(n)
    if (ctx.metric.metric_type === 'ratio') {
      v.denominator_sum = n(r[4])
      v.denominator_sum_squares = n(r[5])
      v.numerator_denominator_sum_product = n(r[6])
    }
    byKey.set(key, v)
  }
  return ctx.variants.map((key) => {
    const seen = byKey.get(key)
    if (seen) return seen
    const empty: VariantStats = { key, number_of_samples: 0, sum: 0, sum_squares: 0 }
    if (ctx.metric.metric_type === 'funnel') {
      empty.step_counts = ctx.metric.series.map(() => 0)
    }
    if (ctx.metric.metric_type === 'ratio') {
      Object.assign(empty, {
        denominator_sum: 0,
        denominator_sum_squares: 0,
        numerator_denominator_sum_product: 0,
      })
    }
    return empty
  })
}

/** PostHog's validate_variant_result: the reasons a variant is left out of the statistics. */
export function validationFailures(
  v: VariantStats,
  metric: ExperimentMetric,
  baseline: boolean,
): ValidationFailure[] {
  const out: ValidationFailure[] = []
  if (v.number_of_samples < 50) out.push('not-enough-exposures')
  if (metric.metric_type === 'funnel' && v.sum < 5) out.push('not-enough-metric-data')
  if (baseline && v.sum === 0) out.push('baseline-mean-is-zero')
  return out
}

/** The statistic the tests compare: a proportion for funnels, a mean, or a ratio. */
export function statisticOf(metric: ExperimentMetric, v: VariantStats): Statistic {
  if (metric.metric_type === 'funnel') return { type: 'proportion', n: v.number_of_samples, sum: v.sum }
  const m = { type: 'mean' as const, n: v.number_of_samples, sum: v.sum, sumSquares: v.sum_squares }
  if (metric.metric_type === 'mean') return m
  return {
    type: 'ratio',
    n: v.number_of_samples,
    m,
    d: {
      type: 'mean',
      n: v.number_of_samples,
      sum: v.denominator_sum ?? 0,
      sumSquares: v.denominator_sum_squares ?? 0,
    },
    sumProducts: v.numerator_denominator_sum_product ?? 0,
  }
}

/** PostHog's response for one metric: baseline, variant results with statistics, sample size. */
export function experimentResult(rows: unknown[][], ctx: ResultContext) {
  const all = variantStats(rows, ctx)
  const [control, ...tests] = all
  if (!control) throw new ValidationError('The experiment has no variants', 'experiment_id')
  const baselineFailures = validationFailures(control, ctx.metric, true)
  const baseline = { ...control, validation_failures: baselineFailures }
  const inverse = ctx.metric.goal === 'decrease'
  const variant_results = tests.map((v) => {
    const failures = validationFailures(v, ctx.metric, false)
    const out: Record<string, unknown> = { ...v, validation_failures: failures }
    if (baselineFailures.length || failures.length) {
      Object.assign(
        out,
        ctx.method === 'bayesian'
          ? { chance_to_win: null, credible_interval: null }
          : { p_value: null, confidence_interval: null },
      )
      return { ...out, significant: false }
    }
    try {
      const t = statisticOf(ctx.metric, v)
      const c = statisticOf(ctx.metric, control)
      if (ctx.method === 'frequentist') {
        const r = frequentistTest(t, c)
        return {
          ...out,
          p_value: r.pValue,
          confidence_interval: r.confidenceInterval,
          significant: r.significant,
        }
      }
      const r = bayesianTest(t, c, { inverse })
      return {
        ...out,
        chance_to_win: r.chanceToWin,
        credible_interval: r.credibleInterval,
        significant: r.decisive,
      }
    } catch (err) {
      // PostHog answers a statistic it cannot compute with the reason, as a client error
      if (err instanceof StatisticError) throw new ValidationError(err.message, 'metric')
      throw err
    }
  })
  const exposures = all.reduce((s, v) => s + v.number_of_samples, 0)
  const mde = ctx.minimumDetectableEffect ?? DEFAULT_MDE
  const recommended = recommendedSampleSize(ctx.metric, mde, all.length, control)
  const end = ctx.endDate ? Date.parse(ctx.endDate) : ctx.now
  const daysElapsed = (end - Date.parse(ctx.startDate)) / 86_400_000
  return {
    kind: 'ExperimentQuery',
    metric: ctx.metric,
    baseline,
    variant_results,
    stats_method: ctx.method,
    significant: variant_results.some((v) => v.significant === true),
    sample_size: {
      minimum_detectable_effect: mde,
      recommended_sample_size: recommended,
      current_exposures: exposures,
      days_elapsed: daysElapsed,
      recommended_running_time_days: remainingDays(recommended, exposures, daysElapsed),
    },
  }
}

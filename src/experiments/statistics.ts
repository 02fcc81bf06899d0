// The statistics of an experiment result, as PostHog computes them (products/experiments/stats):
// each variant is summarised by sufficient statistics (n, sum, sum of squares; for ratios also the
// denominator's and the cross product), and each test variant is compared with control on the
// relative difference (treatment - control) / control, whose variance comes from the delta method.
//   Bayesian     non-informative Gaussian prior: the posterior of the effect is N(effect, variance);
//                chance to win = P(effect > 0), a 95% credible interval, decisive when the chance
//                to win is beyond the interval level either way.
//   frequentist  Welch's two-sided t-test with Welch-Satterthwaite degrees of freedom: p-value,
//                95% confidence interval, significant when p < alpha.
// The distributions are @stdlib's (normal and Student's t CDF and quantile): see docs/experiments.md.
import normalCdf from '@stdlib/stats-base-dists-normal-cdf'
import normalQuantile from '@stdlib/stats-base-dists-normal-quantile'
import tCdf from '@stdlib/stats-base-dists-t-cdf'
import tQuantile from '@stdlib/stats-base-dists-t-quantile'

/** A statistic cannot be computed from these inputs (PostHog's StatisticError). */
export class StatisticError extends Error {}

/** A continuous metric: per-entity values summed, and their squares summed. */
export interface MeanStatistic {
  type: 'mean'
  n: number
  sum: number
  sumSquares: number
}

/** A conversion metric: how many of n entities converted. */
export interface ProportionStatistic {
  type: 'proportion'
  n: number
  sum: number
}

/** A ratio of two per-entity sums (numerator m, denominator d), with their cross product. */
export interface RatioStatistic {
  type: 'ratio'
  n: number
  m: MeanStatistic
  d: MeanStatistic
  sumProducts: number
}

export type Statistic = MeanStatistic | ProportionStatistic | RatioStatistic

const sampleMeanVariance = (s: MeanStatistic) =>
  s.n <= 1 ? 0 : (s.sumSquares - s.sum ** 2 / s.n) / (s.n - 1)

/** The statistic's point value: the mean, the proportion, or the ratio of sums. */
export function meanOf(s: Statistic): number {
  if (s.type === 'ratio') return s.m.sum / s.d.sum
  return s.sum / s.n
}

/** The per-entity variance (divide by n for the variance of the mean). */
export function varianceOf(s: Statistic): number {
  switch (s.type) {
    case 'mean':
      return sampleMeanVariance(s)
    case 'proportion': {
      const p = s.sum / s.n
      return p * (1 - p)
    }
    case 'ratio': {
      const mMean = s.m.sum / s.n
      const dMean = s.d.sum / s.n
      const cov = s.n <= 1 ? 0 : (s.sumProducts - (s.m.sum * s.d.sum) / s.n) / (s.n - 1)
      return (
        sampleMeanVariance(s.m) / dMean ** 2 +
        (mMean ** 2 * sampleMeanVariance(s.d)) / dMean ** 4 -
        (2 * mMean * cov) / dMean ** 3
      )
    }
  }
}

/** PostHog's checks of one statistic before a test (shared/utils.py validate_statistic_inputs). */
function validate(s: Statistic, name: string): void {
  const problems: string[] = []
  if (!(s.n > 0)) problems.push('Sample size must be positive')
  if (s.type === 'ratio' && Math.abs(s.d.sum / s.n) < 1e-10) {
    problems.push('Denominator mean cannot be zero for ratio calculation')
  }
  const mean = meanOf(s)
  const variance = varianceOf(s)
  if (!Number.isFinite(mean)) problems.push('Mean must be finite')
  if (!Number.isFinite(variance) || variance < 0) problems.push('Variance must be finite and non-negative')
  if (s.type === 'mean' && s.n > 1 && s.sumSquares < s.sum ** 2 / s.n - 1e-10) {
    problems.push('sum_squares violates mathematical constraint')
  }
  if (s.type === 'proportion') {
    if (s.sum < 0 || s.sum > s.n) problems.push('Number of successes must be between 0 and the sample size')
    const p = s.sum / s.n
    if (p < 1e-10 || p > 1 - 1e-10) {
      problems.push('Proportion extremely close to 0 or 1 - statistical tests may be unreliable')
    }
  }
  if (problems.length) throw new StatisticError(`${name} statistic validation failed: ${problems.join('; ')}`)
}

export type DifferenceType = 'relative' | 'absolute'

/** The effect of treatment over control and the variance of that estimate. */
function effectAndVariance(
  t: Statistic,
  c: Statistic,
  difference: DifferenceType,
): { effect: number; variance: number } {
  const tm = meanOf(t)
  const cm = meanOf(c)
  const tv = varianceOf(t) / t.n
  const cv = varianceOf(c) / c.n
  if (difference === 'absolute') return { effect: tm - cm, variance: tv + cv }
  if (Math.abs(cm) < 1e-10) throw new StatisticError('Control mean cannot be zero for relative difference')
  // delta method for the ratio of two independent means, minus one
  return { effect: (tm - cm) / cm, variance: tv / cm ** 2 + (tm ** 2 * cv) / cm ** 4 }
}

export interface BayesianOptions {
  ciLevel?: number
  difference?: DifferenceType
  /** lower is better */
  inverse?: boolean
}

export interface BayesianResult {
  effect: number
  credibleInterval: [number, number]
  chanceToWin: number
  /** the chance to win is above the interval level or below its complement */
  decisive: boolean
}

/** PostHog's Bayesian test of treatment against control with a non-informative Gaussian prior. */
export function bayesianTest(t: Statistic, c: Statistic, opts: BayesianOptions = {}): BayesianResult {
  const ciLevel = opts.ciLevel ?? 0.95
  validate(t, 'Treatment')
  validate(c, 'Control')
  if (t.type !== c.type) throw new StatisticError('Treatment and control statistics must be the same type')
  if (t.type === 'proportion' && c.type === 'proportion') {
    for (const [name, s] of [
      ['treatment', t],
      ['control', c],
    ] as const) {
      if (s.sum < 5)
        throw new StatisticError(`Normal approximation invalid: ${name} has only ${s.sum} successes`)
      if (s.n - s.sum < 5) {
        throw new StatisticError(`Normal approximation invalid: ${name} has only ${s.n - s.sum} failures`)
      }
    }
  }
  const difference = opts.difference ?? 'relative'
  if (difference === 'relative' && meanOf(c) <= 0) {
    throw new StatisticError('Control mean must be positive for relative difference calculation')
  }
  const { effect, variance } = effectAndVariance(t, c, difference)
  if (!(variance > 0)) throw new StatisticError('Effect variance must be positive')
  // a non-informative prior: the posterior is the likelihood, N(effect, variance)
  const sd = Math.sqrt(variance)
  const below = normalCdf(0, effect, sd)
  const chanceToWin = opts.inverse ? below : 1 - below
  const alpha = 1 - ciLevel
  const credibleInterval: [number, number] = [
    normalQuantile(alpha / 2, effect, sd),
    normalQuantile(1 - alpha / 2, effect, sd),
  ]
  return {
    effect,
    credibleInterval,
    chanceToWin,
    decisive: chanceToWin > ciLevel || chanceToWin < 1 - ciLevel,
  }
}

export interface FrequentistOptions {
  alpha?: number
  difference?: DifferenceType
}

export interface FrequentistResult {
  effect: number
  confidenceInterval: [number, number]
  pValue: number
  significant: boolean
  degreesOfFreedom: number
}

/** PostHog's two-sided Welch t-test of treatment against control. */
export function frequentistTest(
  t: Statistic,
  c: Statistic,
  opts: FrequentistOptions = {},
): FrequentistResult {
  const alpha = opts.alpha ?? 0.05
  if (t.n < 5 || c.n < 5) throw new StatisticError('Each group needs a sample size of at least 5')
  const { effect, variance } = effectAndVariance(t, c, opts.difference ?? 'relative')
  const tv = varianceOf(t) / t.n
  const cv = varianceOf(c) / c.n
  const df = (tv + cv) ** 2 / (tv ** 2 / (t.n - 1) + cv ** 2 / (c.n - 1))
  if (!(variance > 0)) throw new StatisticError('Pooled variance must be positive')
  const se = Math.sqrt(variance)
  const tStat = effect / se
  const pValue = 2 * (1 - tCdf(Math.abs(tStat), df))
  const margin = tQuantile(1 - alpha / 2, df) * se
  return {
    effect,
    confidenceInterval: [effect - margin, effect + margin],
    pValue,
    significant: pValue < alpha,
    degreesOfFreedom: df,
  }
}

// The statistics against PostHog's own published numbers (products/experiments/stats/tests:
// test_bayesian.py test_realistic_example, test_frequentist.py's three TwoSidedTTest cases), and the
// recommended sample size against PostHog's formulas worked by hand.
import { describe, expect, it } from 'vitest'
import type { ExperimentMetric } from '../../../src/experiments/metrics.ts'
import { recommendedSampleSize, remainingDays } from '../../../src/experiments/sample-size.ts'
import {
  bayesianTest,
  frequentistTest,
  type MeanStatistic,
  type RatioStatistic,
  StatisticError,
} from '../../../src/experiments/statistics.ts'

const mean = (n: number, sum: number, sumSquares: number): MeanStatistic => ({
  type: 'mean',
  n,
  sum,
  sumSquares,
})
const close = (actual: number, expected: number, places = 4) =>
  expect(Math.abs(actual - expected)).toBeLessThan(0.5 * 10 ** -places)

// PostHog's sample-mean example: treatment then control
const treatment = mean(2461, 1922.7, 94698.29)
const control = mean(2507, 1196.87, 37377.9767)

describe('Bayesian test (PostHog test_bayesian.py)', () => {
  it('gives the realistic example the effect, credible interval and chance to win PostHog publishes', () => {
    const r = bayesianTest(treatment, control)
    close(r.effect, 0.63646)
    close(r.credibleInterval[0], -0.0873)
    close(r.credibleInterval[1], 1.36026)
    close(r.chanceToWin, 0.95759)
    expect(r.decisive).toBe(true)
  })

  it('turns the chance to win around when lower is better', () => {
    const r = bayesianTest(treatment, control, { inverse: true })
    close(r.chanceToWin, 1 - 0.95759)
  })

  it('refuses a zero control mean for a relative difference, and too few conversions', () => {
    expect(() => bayesianTest(mean(100, 100, 100), mean(100, 0, 0))).toThrow(StatisticError)
    expect(() =>
      bayesianTest({ type: 'proportion', n: 100, sum: 3 }, { type: 'proportion', n: 100, sum: 10 }),
    ).toThrow(/only 3 successes/)
  })

  it('favours the better proportion (PostHog test_proportion_test: 11% against 10%)', () => {
    const r = bayesianTest(
      { type: 'proportion', n: 1000, sum: 110 },
      { type: 'proportion', n: 1000, sum: 100 },
    )
    close(r.effect, 0.1, 10)
    expect(r.chanceToWin).toBeGreaterThan(0.5)
  })
})

describe('frequentist two-sided t-test (PostHog test_frequentist.py)', () => {
  it('sample means: expected, confidence interval and p-value', () => {
    const r = frequentistTest(treatment, control)
    close(r.effect, 0.63646)
    close(r.pValue, 0.08487)
    close(r.confidenceInterval[0], -0.0875)
    close(r.confidenceInterval[1], 1.36048)
    expect(r.significant).toBe(false)
  })

  it('proportions: 62 of 1471 against 87 of 1529', () => {
    const r = frequentistTest(
      { type: 'proportion', sum: 62, n: 1471 },
      { type: 'proportion', sum: 87, n: 1529 },
    )
    close(r.effect, -0.25925)
    close(r.pValue, 0.03096)
    close(r.confidenceInterval[0], -0.49475)
    close(r.confidenceInterval[1], -0.02376)
    expect(r.significant).toBe(true)
  })

  it('ratios: the delta-method variance with the cross product', () => {
    const ratio = (n: number, mSum: number, mSq: number, dSum: number): RatioStatistic => ({
      type: 'ratio',
      n,
      m: mean(n, mSum, mSq),
      d: mean(n, dSum, dSum),
      sumProducts: mSum,
    })
    const r = frequentistTest(
      ratio(2034, 99673.9364269569, 11298745.182728939, 947),
      ratio(1966, 94605.79858780127, 10463129.505392816, 936),
    )
    close(r.effect, 0.041333)
    close(r.pValue, 0.0032826)
    close(r.confidenceInterval[0], 0.01378609)
    close(r.confidenceInterval[1], 0.0689)
  })
})

describe('recommended sample size (PostHog running time calculator)', () => {
  const funnel: ExperimentMetric = { metric_type: 'funnel', series: [{ event: 'buy' }] }
  it('funnel: 16 p(1-p) / (mde p)^2 per variant', () => {
    // p = 0.1, MDE 5%: Δ = 0.005, 16 * 0.09 / 0.000025 = 57,600 per variant, two variants
    const b = { number_of_samples: 1000, sum: 100, sum_squares: 100 }
    expect(recommendedSampleSize(funnel, 5, 2, b)).toBe(115_200)
  })

  it('mean count: variance 2 x mean; mean sum: variance mean^2 / 4', () => {
    const b = { number_of_samples: 100, sum: 300, sum_squares: 1200 } // mean 3
    const count: ExperimentMetric = { metric_type: 'mean', source: { event: 'x', math: 'total' } }
    // Δ = 0.3 (10%), 16 * 6 / 0.09 = 1066.67 per variant, x3 variants = 3200
    expect(recommendedSampleSize(count, 10, 3, b)).toBe(3200)
    const sum: ExperimentMetric = {
      metric_type: 'mean',
      source: { event: 'x', math: 'sum', math_property: 'amount' },
    }
    // 16 * 2.25 / 0.09 = 400 per variant, x2 = 800
    expect(recommendedSampleSize(sum, 10, 2, b)).toBe(800)
  })

  it('says nothing without a baseline value, and how many days are left at the rate seen', () => {
    expect(recommendedSampleSize(funnel, 5, 2, { number_of_samples: 0, sum: 0, sum_squares: 0 })).toBeNull()
    // 1,000 exposed in 10 days: 100 a day, 2,000 more needed
    expect(remainingDays(3000, 1000, 10)).toBe(20)
    expect(remainingDays(500, 1000, 10)).toBe(0)
    expect(remainingDays(3000, 1000, 0.05)).toBeNull()
  })
})

import { describe, expect, it } from 'vitest'
import { oddsRatio, rankCorrelations } from '../../../../src/queries/insights/funnels/correlation.ts'

// rows as the correlation SQL returns them: event, successes, failures, success total, failure total
describe('rankCorrelations', () => {
  it('puts success correlations first (strongest first), then failures (strongest first)', () => {
    const ranked = rankCorrelations([
      ['weak-fail', 2, 3, 4, 4],
      ['strong-success', 4, 0, 4, 4],
      ['strong-fail', 0, 4, 4, 4],
      ['weak-success', 3, 2, 4, 4],
    ])
    expect(ranked.map((r) => r.event.event)).toEqual([
      'strong-success',
      'weak-success',
      'strong-fail',
      'weak-fail',
    ])
    // (4+1)/(0+1) / ((0+1)/(4+1)) = 25, PostHog's odds ratio with its +1 prior
    expect(ranked[0]?.odds_ratio).toBe(25)
    expect(oddsRatio(0, 4, 4, 4)).toBe(1 / 25)
  })

  it('orders equal odds ratios by event name, whatever order the rows came in', () => {
    const rows = [
      ['$pageview', 3, 8, 3, 9],
      ['$identify', 3, 8, 3, 9],
      ['$feature_flag_called', 3, 8, 3, 9],
    ]
    const names = (rs: unknown[][]) => rankCorrelations(rs).map((r) => r.event.event)
    expect(names(rows)).toEqual(['$feature_flag_called', '$identify', '$pageview'])
    expect(names([...rows].reverse())).toEqual(['$feature_flag_called', '$identify', '$pageview'])
  })
})

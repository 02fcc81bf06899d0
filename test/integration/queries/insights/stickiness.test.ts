import { beforeAll, describe, expect, it } from 'vitest'
import { FIRST_WEEK, type InsightsFixture, setupInsightsFixture } from './trends-fixture.ts'

let fx: InsightsFixture
beforeAll(async () => {
  fx = await setupInsightsFixture('stickiness')
})

describe('StickinessQuery', () => {
  it('counts persons by the number of New York days they were active', async () => {
    const r = await fx.query({
      kind: 'StickinessQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: FIRST_WEEK,
    })
    expect(r.status).toBe(200)
    // A: Jan 1 (with merged C), Jan 5 → 2 days; B: Jan 2, 3, 7 → 3 days; D: Jan 5 → 1 day.
    expect(r.body.results[0]).toMatchObject({
      data: [1, 1, 1, 0, 0, 0, 0],
      days: [1, 2, 3, 4, 5, 6, 7],
      count: 3,
      label: '$pageview',
    })
    expect(r.body.results[0].labels.slice(0, 2)).toEqual(['1 day', '2 days'])
  })

  it('counts "N or more" when cumulative, and filters by properties', async () => {
    const r = await fx.query({
      kind: 'StickinessQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: FIRST_WEEK,
      stickinessFilter: { computedAs: 'cumulative' },
      properties: [{ key: '$browser', value: 'Edge', operator: 'is_not' }],
    })
    // Without the Edge event D drops out: A 2 days, B 3 days.
    expect(r.body.results[0].data).toEqual([2, 2, 1, 0, 0, 0, 0])
    expect(r.body.results[0].labels[1]).toBe('2 days or more')
  })

  it('answers zeros for an empty range', async () => {
    const r = await fx.query({
      kind: 'StickinessQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '2023-06-01', date_to: '2023-06-02' },
    })
    expect(r.body.results[0]).toMatchObject({ data: [0, 0], count: 0 })
  })
})

/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
import { beforeAll, describe, expect, it } from 'vitest'
import { FIRST_WEEK, FIRST_WEEK_DAYS, type InsightsFixture, setupInsightsFixture } from './trends-fixture.ts'

let fx: InsightsFixture
beforeAll(async () => {
  fx = await setupInsightsFixture('lifecycle')
})

describe('LifecycleQuery', () => {
  it('classifies persons per New York day, merged persons as one, personless events left out', async () => {
    const r = await fx.query({
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: FIRST_WEEK,
      interval: 'day',
    })
    expect(r.status).toBe(200)
    // A (created Dec 31): active Dec 31, Jan 1 (incl. C's event), Jan 5 → Jan 1 returning, Jan 2 dormant,
    //   Jan 5 resurrecting, Jan 6 dormant.
    // B (created Jan 2): active Jan 2, Jan 3, Jan 7 → Jan 2 new, Jan 3 returning, Jan 4 dormant,
    //   Jan 7 resurrecting. D (personless) does not appear.
    expect(r.body.results.map((s: any) => [s.status, s.data])).toEqual([
      ['new', [0, 1, 0, 0, 0, 0, 0]],
      ['returning', [1, 0, 1, 0, 0, 0, 0]],
      ['resurrecting', [0, 0, 0, 0, 1, 0, 1]],
      ['dormant', [0, -1, 0, -1, 0, -1, 0]],
    ])
    const [first] = r.body.results
    expect(first).toMatchObject({ label: '$pageview - new', count: 1, days: FIRST_WEEK_DAYS })
    expect(first.labels[0]).toBe('1-Jan-2024')
    expect(first.action).toMatchObject({ id: '$pageview', name: '$pageview', type: 'events', math: 'total' })
    expect(r.body.results[3].count).toBe(-3)
  })

  it('reads only one interval before the range', async () => {
    const r = await fx.query({
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: FIRST_WEEK,
    })
    expect(r.body.hogql).toContain("timestamp >= '2023-12-31 00:00:00'")
    expect(r.body.hogql).toContain("timestamp < '2024-01-08 00:00:00'")
  })

  it('answers zeros for an empty range', async () => {
    const r = await fx.query({
      kind: 'LifecycleQuery',
      series: [{ kind: 'EventsNode', event: '$pageview' }],
      dateRange: { date_from: '2023-06-01', date_to: '2023-06-02' },
    })
    expect(r.body.results.map((s: any) => s.data)).toEqual([
      [0, 0],
      [0, 0],
      [0, 0],
      [0, 0],
    ])
  })
})

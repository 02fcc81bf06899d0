/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// For every data point of a trends, lifecycle and stickiness insight, ActorsQuery returns as many
// persons as the point counts. Data: trends-fixture.ts (America/New_York days, C merged into A,
// D personless). The insight values below are worked out by hand from the fixture's table:
//   A (with C's event merged in): active Dec 31, Jan 1 (3 events), Jan 5; created Dec 31.
//   B: active Jan 2, Jan 3, Jan 7 (Jan 8 04:59 UTC is Jan 7 23:59 in New York); created Jan 2.
// D has no person row: insights count it by its own id, but there is no person to list (PostHog's
// actors read the persons table too), so trends and stickiness leave its browser (Edge) out here.
import { beforeAll, describe, expect, it } from 'vitest'
import {
  A,
  B,
  FIRST_WEEK,
  FIRST_WEEK_DAYS,
  type InsightsFixture,
  setupInsightsFixture,
} from './trends-fixture.ts'

let fx: InsightsFixture
beforeAll(async () => {
  fx = await setupInsightsFixture('actors consistency')
})

const NO_PERSONLESS = [{ key: '$browser', value: 'Edge', operator: 'is_not', type: 'event' }]
const pageviews = (extra: Record<string, unknown> = {}) => ({
  series: [{ kind: 'EventsNode', event: '$pageview', ...extra }],
  dateRange: FIRST_WEEK,
  interval: 'day',
})

async function insight(query: Record<string, unknown>): Promise<any[]> {
  const r = await fx.query(query)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.results
}

async function actors(source: Record<string, unknown>, point: Record<string, unknown>): Promise<string[]> {
  const r = await fx.query({ kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', source, ...point } })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  expect(r.body.hasMore).toBe(false)
  return r.body.results.map((row: any[]) => row[1]).sort()
}

describe('ActorsQuery agrees with the insight at every data point', () => {
  it('TrendsQuery, unique users per New York day', async () => {
    const source = { kind: 'TrendsQuery', ...pageviews({ math: 'dau' }), properties: NO_PERSONLESS }
    const [series] = await insight(source)
    expect(series.days).toEqual(FIRST_WEEK_DAYS)
    expect(series.data).toEqual([1, 1, 1, 0, 1, 0, 1])
    for (const [i, day] of FIRST_WEEK_DAYS.entries()) {
      expect((await actors(source, { day, series: 0 })).length, day).toBe(series.data[i])
    }
    // Jan 1 (New York) is A, C's event included; B's Jan 7 23:59 event is on Jan 7
    expect(await actors(source, { day: '2024-01-01', series: 0 })).toEqual([A])
    expect(await actors(source, { day: '2024-01-07', series: 0 })).toEqual([B])
  })

  it('TrendsQuery with weekly active users (the 7 days ending each day)', async () => {
    const source = { kind: 'TrendsQuery', ...pageviews({ math: 'weekly_active' }), properties: NO_PERSONLESS }
    const [series] = await insight(source)
    // Jan 1: A (Dec 31, Jan 1); from Jan 2 on: A and B
    expect(series.data).toEqual([1, 2, 2, 2, 2, 2, 2])
    for (const [i, day] of FIRST_WEEK_DAYS.entries()) {
      expect((await actors(source, { day, series: 0 })).length, day).toBe(series.data[i])
    }
  })

  it('TrendsQuery broken down by browser, with "other"', async () => {
    const breakdownFilter = { breakdown: '$browser', breakdown_type: 'event', breakdown_limit: 2 }
    const source = {
      kind: 'TrendsQuery',
      ...pageviews({ math: 'dau' }),
      properties: NO_PERSONLESS,
      breakdownFilter,
    }
    const results = await insight(source)
    // ranked by the sum over the range: Safari 3 (B), Chrome 2 (A on Jan 1 and 5); Firefox (C's
    // event, person A) is past the limit of 2 and becomes "other"
    expect(results.map((s: any) => [s.breakdown_value, s.data])).toEqual([
      ['Safari', [0, 1, 1, 0, 0, 0, 1]],
      ['Chrome', [1, 0, 0, 0, 1, 0, 0]],
      ['$$_posthog_breakdown_other_$$', [1, 0, 0, 0, 0, 0, 0]],
    ])
    for (const s of results) {
      for (const [i, day] of FIRST_WEEK_DAYS.entries()) {
        const persons = await actors(source, { day, series: 0, breakdown: s.breakdown_value })
        expect(persons.length, `${s.breakdown_value} ${day}`).toBe(s.data[i])
      }
    }
    // the merged person: C's Firefox event counts for A
    expect(
      await actors(source, { day: '2024-01-01', series: 0, breakdown: '$$_posthog_breakdown_other_$$' }),
    ).toEqual([A])
  })

  it('LifecycleQuery, every status including dormant', async () => {
    const source = { kind: 'LifecycleQuery', ...pageviews() }
    const results = await insight(source)
    // see lifecycle.test.ts for the derivation
    expect(results.map((s: any) => [s.status, s.data])).toEqual([
      ['new', [0, 1, 0, 0, 0, 0, 0]],
      ['returning', [1, 0, 1, 0, 0, 0, 0]],
      ['resurrecting', [0, 0, 0, 0, 1, 0, 1]],
      ['dormant', [0, -1, 0, -1, 0, -1, 0]],
    ])
    for (const s of results) {
      for (const [i, day] of FIRST_WEEK_DAYS.entries()) {
        const persons = await actors(source, { day, status: s.status })
        expect(persons.length, `${s.status} ${day}`).toBe(Math.abs(s.data[i]))
      }
    }
    expect(await actors(source, { day: '2024-01-02', status: 'dormant' })).toEqual([A])
    expect(await actors(source, { day: '2024-01-04', status: 'dormant' })).toEqual([B])
  })

  it('StickinessQuery, every number of days', async () => {
    const source = { kind: 'StickinessQuery', ...pageviews(), properties: NO_PERSONLESS }
    const [series] = await insight(source)
    // A: Jan 1 and Jan 5 (2 days); B: Jan 2, 3 and 7 (3 days)
    expect(series.data).toEqual([0, 1, 1, 0, 0, 0, 0])
    for (const [i, n] of series.days.entries()) {
      expect((await actors(source, { day: n, series: 0 })).length, `${n} days`).toBe(series.data[i])
    }
    expect(await actors(source, { day: 2, series: 0 })).toEqual([A])
    // cumulative: active 2 or more days
    const cumulative = { ...source, stickinessFilter: { computedAs: 'cumulative' } }
    const [c] = await insight(cumulative)
    expect(c.data).toEqual([2, 2, 1, 0, 0, 0, 0])
    for (const [i, n] of c.days.entries()) {
      expect((await actors(cumulative, { day: n, series: 0 })).length, `${n}+ days`).toBe(c.data[i])
    }
  })
})

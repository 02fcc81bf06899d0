/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
import { beforeAll, describe, expect, it } from 'vitest'
import { v4 as uuidv4 } from 'uuid'
import { clickhouse } from '../../../harness/index.ts'
import { insertEvents, insertGroups } from '../../hogql/fixtures.ts'
import { FIRST_WEEK, FIRST_WEEK_DAYS, type InsightsFixture, setupInsightsFixture } from './trends-fixture.ts'

let fx: InsightsFixture
beforeAll(async () => {
  fx = await setupInsightsFixture('trends')
})

const pageviews = (extra: Record<string, unknown> = {}) => ({
  kind: 'EventsNode',
  event: '$pageview',
  ...extra,
})
const trends = (q: Record<string, unknown>) => fx.query({ kind: 'TrendsQuery', dateRange: FIRST_WEEK, ...q })

describe('TrendsQuery', () => {
  it('counts events per New York day (not UTC day), leaving out other projects and out-of-range events', async () => {
    const r = await trends({ series: [pageviews()] })
    expect(r.status).toBe(200)
    expect(r.body.results).toHaveLength(1)
    const [s] = r.body.results
    // Jan 1: #1, #2 (02 Jan 03:00 UTC), #3 — #10 is Dec 31 in New York; Jan 7: #8 (23:59), not #9.
    expect(s.data).toEqual([3, 1, 1, 0, 2, 0, 1])
    expect(s.count).toBe(8)
    expect(s.days).toEqual(FIRST_WEEK_DAYS)
    expect(s.labels).toEqual([
      '1-Jan-2024',
      '2-Jan-2024',
      '3-Jan-2024',
      '4-Jan-2024',
      '5-Jan-2024',
      '6-Jan-2024',
      '7-Jan-2024',
    ])
    expect(s.label).toBe('$pageview')
    expect(s.action).toMatchObject({ id: '$pageview', name: '$pageview', type: 'events', order: 0 })
  })

  it('counts a merged person once for unique users (dau), and personless events as their own id', async () => {
    const r = await trends({ series: [pageviews({ math: 'dau' })] })
    // Jan 1: A and C (merged into A) → 1; Jan 5: A and D → 2.
    expect(r.body.results[0].data).toEqual([1, 1, 1, 0, 2, 0, 1])
  })

  it('sums and averages a numeric property, 0 where there is nothing', async () => {
    const r = await trends({
      series: [
        pageviews({ math: 'sum', math_property: 'amount' }),
        pageviews({ math: 'avg', math_property: 'amount' }),
      ],
    })
    expect(r.body.results[0].data).toEqual([0, 0, 0, 0, 40, 0, 0])
    expect(r.body.results[1].data).toEqual([0, 0, 0, 0, 20, 0, 0])
  })

  it('weekly active users count persons active in the 7 days ending each day (history before the range too)', async () => {
    const r = await trends({ series: [pageviews({ math: 'weekly_active' })] })
    // A: Dec 31, Jan 1, Jan 5; B: Jan 2, 3, 7; D: Jan 5.
    expect(r.body.results[0].data).toEqual([1, 2, 2, 2, 3, 3, 3])
  })

  it('filters by event and person properties (person properties through merges)', async () => {
    const chrome = await trends({
      series: [pageviews()],
      properties: [{ key: '$browser', value: 'Chrome', operator: 'exact', type: 'event' }],
    })
    expect(chrome.body.results[0].data).toEqual([2, 0, 0, 0, 1, 0, 0])
    const notChrome = await trends({
      series: [
        pageviews({ properties: [{ key: '$browser', value: ['Chrome', 'Safari'], operator: 'is_not' }] }),
      ],
    })
    expect(notChrome.body.results[0].data).toEqual([1, 0, 0, 0, 1, 0, 0])
    const b = await trends({
      series: [pageviews()],
      properties: [{ key: 'email', value: 'Y.COM', operator: 'icontains', type: 'person' }],
    })
    expect(b.body.results[0].data).toEqual([0, 1, 1, 0, 0, 0, 1])
    // C's event belongs to A, whose email matches.
    const a = await trends({
      series: [pageviews()],
      properties: [{ key: 'email', value: 'a@x.com', operator: 'exact', type: 'person' }],
    })
    expect(a.body.results[0].data).toEqual([3, 0, 0, 0, 1, 0, 0])
  })

  it('supports PostHog property operators, missing properties matching only negative ones', async () => {
    // In range: #1-#8; $browser Chrome ×3, Firefox, Safari ×3, Edge; amount only on #6 (10) and #7 (30).
    const cases: [Record<string, unknown>, number][] = [
      [{ key: '$browser', value: '^S', operator: 'regex' }, 3],
      [{ key: '$browser', value: '^S', operator: 'not_regex' }, 5],
      [{ key: '$browser', value: 'FIRE', operator: 'icontains' }, 1],
      [{ key: '$browser', value: 'fire', operator: 'not_icontains' }, 7],
      [{ key: 'amount', value: 10, operator: 'gt' }, 1],
      [{ key: 'amount', value: 10, operator: 'gte' }, 2],
      [{ key: 'amount', value: 20, operator: 'lt' }, 1],
      [{ key: 'amount', value: [5, 15], operator: 'between' }, 1],
      [{ key: 'amount', value: [5, 15], operator: 'not_between' }, 7],
      [{ key: 'amount', operator: 'is_set' }, 2],
      [{ key: 'amount', operator: 'is_not_set' }, 6],
      [{ key: 'distinct_id', value: 'u2', operator: 'exact', type: 'event_metadata' }, 3],
      [{ key: "properties.$browser = 'Edge'", type: 'hogql' }, 1],
    ]
    for (const [filter, count] of cases) {
      const r = await trends({ series: [pageviews()], properties: [filter] })
      expect([filter, r.body.results?.[0]?.count]).toEqual([filter, count])
    }
    const either = await trends({
      series: [pageviews()],
      properties: {
        type: 'OR',
        values: [
          { type: 'AND', values: [{ key: '$browser', value: 'Edge', operator: 'exact' }] },
          { type: 'AND', values: [{ key: '$browser', value: 'Firefox', operator: 'exact' }] },
        ],
      },
    })
    expect(either.body.results[0].count).toBe(2)
  })

  it('breaks down by a property, keeping the top values and summing the rest into "other"', async () => {
    const r = await trends({
      series: [pageviews()],
      breakdownFilter: { breakdown: '$browser', breakdown_limit: 2 },
    })
    // Totals: Chrome 3, Safari 3, Edge 1, Firefox 1 → Chrome and Safari, then other (Firefox Jan 1, Edge Jan 5).
    expect(r.body.results.map((s: any) => [s.breakdown_value, s.label, s.data])).toEqual([
      ['Chrome', 'Chrome', [2, 0, 0, 0, 1, 0, 0]],
      ['Safari', 'Safari', [0, 1, 1, 0, 0, 0, 1]],
      ['$$_posthog_breakdown_other_$$', '$$_posthog_breakdown_other_$$', [1, 0, 0, 0, 1, 0, 0]],
    ])
    // values were folded into "other": PostHog says there is more
    expect(r.body.hasMore).toBe(true)
  })

  it('puts missing breakdown values under the null label, after real values', async () => {
    const r = await trends({ series: [{ event: 'signup' }], breakdownFilter: { breakdown: 'plan' } })
    expect(r.body.results.map((s: any) => [s.breakdown_value, s.data])).toEqual([
      ['pro', [0, 1, 0, 0, 0, 0, 0]],
      ['$$_posthog_breakdown_null_$$', [0, 0, 0, 0, 1, 0, 0]],
    ])
    expect(r.body.hasMore).toBe(false)
  })

  it('applies a formula across series', async () => {
    const r = await trends({ series: [pageviews(), { event: 'signup' }], trendsFilter: { formula: 'A+B' } })
    expect(r.body.results).toHaveLength(1)
    expect(r.body.results[0]).toMatchObject({
      label: 'Formula (A+B)',
      data: [3, 2, 1, 0, 3, 0, 1],
      count: 10,
    })
  })

  it('compares with the previous period of the same length', async () => {
    const r = await fx.query({
      kind: 'TrendsQuery',
      series: [pageviews()],
      dateRange: { date_from: '2024-01-05', date_to: '2024-01-07' },
      compareFilter: { compare: true },
    })
    expect(r.body.results.map((s: any) => [s.compare_label, s.days, s.data])).toEqual([
      ['current', ['2024-01-05', '2024-01-06', '2024-01-07'], [2, 0, 1]],
      ['previous', ['2024-01-02', '2024-01-03', '2024-01-04'], [1, 1, 0]],
    ])
  })

  it('answers one aggregated value for total-value displays', async () => {
    const r = await trends({ series: [pageviews({ math: 'dau' })], trendsFilter: { display: 'ActionsPie' } })
    expect(r.body.results[0]).toMatchObject({ aggregated_value: 3, data: [], label: '$pageview' })
    const bd = await trends({
      series: [pageviews()],
      trendsFilter: { display: 'ActionsTable' },
      breakdownFilter: { breakdown: '$browser', breakdown_limit: 1 },
    })
    expect(bd.body.results.map((s: any) => [s.breakdown_value, s.aggregated_value])).toEqual([
      ['Chrome', 3],
      ['$$_posthog_breakdown_other_$$', 5],
    ])
  })

  it('charts weeks (Sunday starts) and hours in the project time zone', async () => {
    const weeks = await trends({ series: [pageviews()], interval: 'week' })
    // Week of Sun Dec 31 (Jan 1–6 in range): #1-#7 = 7; week of Sun Jan 7: #8.
    // Labels show the part of each week inside the range.
    expect(weeks.body.results[0]).toMatchObject({
      days: ['2023-12-31', '2024-01-07'],
      data: [7, 1],
      labels: ['1–6 Jan', '7-Jan-2024'],
    })
    const hours = await fx.query({
      kind: 'TrendsQuery',
      series: [pageviews()],
      interval: 'hour',
      dateRange: { date_from: '2024-01-01 22:00:00', date_to: '2024-01-01 23:00:00' },
    })
    expect(hours.body.results[0]).toMatchObject({
      days: ['2024-01-01 22:00:00', '2024-01-01 23:00:00'],
      labels: ['1-Jan 22:00', '1-Jan 23:00'],
      data: [1, 0],
    })
  })

  it('answers zeros for an empty range, and no series for an empty breakdown', async () => {
    const empty = { date_from: '2023-06-01', date_to: '2023-06-03' }
    const r = await fx.query({ kind: 'TrendsQuery', series: [pageviews()], dateRange: empty })
    expect(r.body.results[0]).toMatchObject({ data: [0, 0, 0], count: 0 })
    const bd = await fx.query({
      kind: 'TrendsQuery',
      series: [pageviews()],
      dateRange: empty,
      breakdownFilter: { breakdown: '$browser' },
    })
    expect(bd.body.results).toEqual([])
  })

  it('refuses unknown math and bad dates with 400', async () => {
    expect((await trends({ series: [pageviews({ math: 'nope' })] })).status).toBe(400)
    expect(
      (await fx.query({ kind: 'TrendsQuery', series: [pageviews()], dateRange: { date_from: 'soon' } }))
        .status,
    ).toBe(400)
  })

  it('filters and breaks down by group properties, and counts unique groups', async () => {
    // Feb 1 (New York): one event of group acme (plan big), one of group beta (no stored group), one without.
    const t = fx.project.id
    const at = (groups: string[]) => ({
      team: t,
      uuid: uuidv4(),
      event: 'grouped',
      distinctId: 'u1',
      personId: '00000000-0000-4000-8000-00000000000a',
      timestamp: '2024-02-01 15:00:00.000',
      groups,
    })
    const ch = clickhouse()
    await insertEvents(ch, [at(['acme']), at(['beta']), at([])])
    await insertGroups(ch, [
      {
        team: t,
        index: 0,
        key: 'acme',
        createdAt: '2024-01-01 00:00:00',
        properties: { plan: 'big' },
        version: 1,
      },
    ])
    const feb1 = { date_from: '2024-02-01', date_to: '2024-02-01' }
    const series = [{ event: 'grouped' }]
    const big = { key: 'plan', value: 'big', operator: 'exact', type: 'group', group_type_index: 0 }
    const q = (extra: Record<string, unknown>) =>
      fx.query({ kind: 'TrendsQuery', dateRange: feb1, series, ...extra })
    expect((await q({ properties: [big] })).body.results[0].data).toEqual([1])
    expect((await q({ properties: [{ ...big, operator: 'is_not' }] })).body.results[0].data).toEqual([2])
    const unique = await q({ series: [{ event: 'grouped', math: 'unique_group', math_group_type_index: 0 }] })
    expect(unique.body.results[0].data).toEqual([2])
    const bd = await q({
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'group', breakdown_group_type_index: 0 },
    })
    expect(bd.body.results.map((r: any) => [r.breakdown_value, r.data])).toEqual([
      ['big', [1]],
      ['$$_posthog_breakdown_null_$$', [2]],
    ])
  })
})

import { beforeAll, describe, expect, it } from 'vitest'
import { type InsightsFixture, LAST_PAGEVIEW_UUID, setupInsightsFixture } from './insights/trends-fixture.ts'

let fx: InsightsFixture
beforeAll(async () => {
  fx = await setupInsightsFixture('events query')
})

describe('EventsQuery', () => {
  it('lists events newest first in the project time zone, with hasMore', async () => {
    const r = await fx.query({
      kind: 'EventsQuery',
      select: ['event', 'distinct_id', 'timestamp'],
      event: '$pageview',
      after: '2024-01-01',
      before: '2024-01-03',
      limit: 3,
    })
    expect(r.status).toBe(200)
    // In (Jan 1 00:00, Jan 3 00:00) New York: #4, #2, #3, #1 — three fit, one more exists.
    expect(r.body.results).toEqual([
      ['$pageview', 'u2', '2024-01-02 11:00:00.000000'],
      ['$pageview', 'u1', '2024-01-01 22:00:00.000000'],
      ['$pageview', 'u3', '2024-01-01 13:00:00.000000'],
    ])
    expect(r.body.hasMore).toBe(true)
    expect(r.body.limit).toBe(3)
    expect(r.body.offset).toBe(0)
    expect(r.body.columns).toEqual(['event', 'distinct_id', 'timestamp'])
  })

  it('groups by the plain columns when the select list aggregates', async () => {
    const r = await fx.query({
      kind: 'EventsQuery',
      select: ['properties.$browser', 'count()'],
      event: '$pageview',
      after: 'all',
      orderBy: ['count() DESC', 'properties.$browser ASC'],
    })
    expect(r.body.results).toEqual([
      ['Chrome', 4],
      ['Safari', 4],
      ['Edge', 1],
      ['Firefox', 1],
    ])
    expect(r.body.hasMore).toBe(false)
  })

  it('returns * as the event object, and applies where and offset', async () => {
    const r = await fx.query({
      kind: 'EventsQuery',
      select: ['*', 'event'],
      where: ["properties.$browser = 'Safari'"],
      after: 'all',
      limit: 1,
    })
    const [[star, event]] = r.body.results
    expect(event).toBe('$pageview')
    expect(star).toMatchObject({
      uuid: LAST_PAGEVIEW_UUID,
      event: '$pageview',
      distinct_id: 'u2',
      team_id: fx.project.id,
      properties: { $browser: 'Safari' },
      timestamp: '2024-01-08T00:00:00.000-05:00',
    })
    const next = await fx.query({
      kind: 'EventsQuery',
      select: ['timestamp'],
      where: ["properties.$browser = 'Safari'"],
      after: 'all',
      limit: 1,
      offset: 1,
    })
    expect(next.body.results).toEqual([['2024-01-07 23:59:00.000000']])
    expect([next.body.limit, next.body.offset]).toEqual([1, 1])
  })

  it('refuses a select item that is not one expression', async () => {
    const r = await fx.query({
      kind: 'EventsQuery',
      select: ['1 FROM events UNION ALL SELECT 2'],
      after: 'all',
    })
    expect(r.status).toBe(400)
  })
})

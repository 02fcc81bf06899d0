// Trends answered from stored values of closed days (src/queries/day-cache.ts): a second request
// computes only today's bucket, while an insert into a closed day (for this project), a mutation of
// `events` and a person merge make the days they touch computed again. Expected values are counted
// by hand from the events each test writes. The file has a database of its own (it mutates
// `events`) and an api-only Burrow (no projector writes to it).
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../../src/accounts/documents.ts'
import { type ClickHouseClient } from '../../../../src/clickhouse/client.ts'
import {
  api,
  createTestKey,
  createTestProject,
  mutationsDone,
  ownDatabase,
  startTestBurrow,
} from '../../../harness/index.ts'
import { afterEventsSwap } from '../../../../src/queries/day-cache.ts'
import { insertEvents } from '../../hogql/fixtures.ts'

let ch: ClickHouseClient
let project: Project
let call: ReturnType<typeof api>

const DAY = 86_400_000
// The days of the charts below, in UTC (the project's zone): today and the four before it.
const today = new Date(Math.floor(Date.now() / DAY) * DAY)
const day = (back: number) => new Date(today.getTime() - back * DAY).toISOString().slice(0, 10)

const person = (n: number) => `00000000-0000-4000-8000-0000000d${String(n).padStart(4, '0')}`
const pageview = (back: number, p: number, team = project.id, at = '12:00:00') => ({
  team,
  uuid: randomUUID(),
  event: '$pageview',
  distinctId: person(p),
  personId: person(p),
  timestamp: `${day(back)} ${back === 0 ? '00:00:01' : at}`,
})

// The markers of inserts have whole seconds: a request in the same second as an insert stores
// values that the next request cannot tell from that insert's, so each insert is a second apart.
const nextSecond = () => new Promise((r) => setTimeout(r, 1100))

let probe = 0
interface Answer {
  results: { data: number[]; label: string }[]
  clickhouse: string
  bucket_cache?: { cached: number; computed: number }
}
/** A trends request; `trendsFilter` differs each time so the whole-result cache never answers. */
async function ask(series: object[], extra: object = {}, refresh = 'blocking'): Promise<Answer> {
  const query = {
    kind: 'TrendsQuery',
    series,
    interval: 'day',
    dateRange: { date_from: '-4d' },
    trendsFilter: { probe: ++probe },
    ...extra,
  }
  const r = await call('POST', `/api/environments/${project.id}/query/`, { query, refresh })
  expect(r.status, r.text).toBe(200)
  return r.body as Answer
}

beforeAll(async () => {
  const own = await ownDatabase('burrow_daycache')
  ch = own.client
  const burrow = await startTestBurrow({
    API_RATE_LIMIT_PER_MINUTE: '100000',
    ROLE: 'api',
    CLICKHOUSE_DATABASE: own.database,
  })
  project = await createTestProject('day cache')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
})

describe('trends over closed days', () => {
  const pageviews = [{ kind: 'EventsNode', event: '$pageview' }]

  it('computes only today again, counts a late event, and drops deleted rows', async () => {
    // day-3: person 1; day-2: persons 1 and 2; day-1: person 2
    await insertEvents(ch, [pageview(3, 1), pageview(2, 1), pageview(2, 2), pageview(1, 2)])
    await nextSecond()
    const first = await ask(pageviews)
    expect(first.results[0]!.data).toEqual([0, 1, 2, 1, 0])
    expect(first.bucket_cache).toEqual({ cached: 0, computed: 5 })

    // an event today, and one on a closed day of another project
    await insertEvents(ch, [pageview(0, 1), pageview(2, 1, project.id + 1_000_000)])
    await nextSecond()
    const second = await ask(pageviews)
    expect(second.results[0]!.data).toEqual([0, 1, 2, 1, 1])
    expect(second.bucket_cache).toEqual({ cached: 4, computed: 1 })
    // the statement read today only
    expect(second.clickhouse).toContain(`${day(0)} 00:00:00`)
    for (const back of [1, 2, 3, 4]) expect(second.clickhouse).not.toContain(day(back))

    // a late event for day-2, which the store holds
    await insertEvents(ch, [pageview(2, 3)])
    await nextSecond()
    const late = await ask(pageviews)
    expect(late.results[0]!.data).toEqual([0, 1, 3, 1, 1])
    expect(late.bucket_cache).toEqual({ cached: 3, computed: 2 })

    // person 1's events deleted by a mutation (as person deletion with events does)
    await ch.command({
      query: `ALTER TABLE events DELETE WHERE team_id = ${project.id} AND person_id = '${person(1)}'`,
    })
    await mutationsDone(ch, 'events')
    const deleted = await ask(pageviews)
    expect(deleted.results[0]!.data).toEqual([0, 0, 2, 1, 0])
    expect(deleted.bucket_cache).toEqual({ cached: 0, computed: 5 })
    const again = await ask(pageviews)
    expect(again.results[0]!.data).toEqual([0, 0, 2, 1, 0])
    expect(again.bucket_cache).toEqual({ cached: 4, computed: 1 })

    // force_blocking computes every bucket
    const forced = await ask(pageviews, {}, 'force_blocking')
    expect(forced.results[0]!.data).toEqual([0, 0, 2, 1, 0])
    expect(forced.bucket_cache).toEqual({ cached: 0, computed: 5 })
  })

  it('counts a person merge in a stored unique-users bucket', async () => {
    const dau = [{ kind: 'EventsNode', event: 'signed_up', math: 'dau' }]
    const signup = (back: number, p: number) => ({ ...pageview(back, p), event: 'signed_up' })
    // day-1: persons 21 and 22
    await insertEvents(ch, [signup(1, 21), signup(1, 22)])
    await nextSecond()
    expect((await ask(dau)).results[0]!.data).toEqual([0, 0, 0, 2, 0])
    const stored = await ask(dau)
    expect(stored.results[0]!.data).toEqual([0, 0, 0, 2, 0])
    expect(stored.bucket_cache).toEqual({ cached: 4, computed: 1 })

    // person 22 merged into person 21: one person on day-1
    await ch.insert({
      table: 'person_overrides',
      format: 'JSONEachRow',
      values: [
        { team_id: project.id, old_person_id: person(22), override_person_id: person(21), version: 1 },
      ],
    })
    const merged = await ask(dau)
    expect(merged.results[0]!.data).toEqual([0, 0, 0, 1, 0])
    expect(merged.bucket_cache?.cached).toBe(0)
  })

  it('leaves breakdowns and weekly active users to the whole-range statement', async () => {
    const visit = (back: number, p: number, browser: string) => ({
      ...pageview(back, p),
      event: 'visit',
      properties: { $browser: browser },
    })
    // day-2: person 31 (Firefox); day-1: persons 31 (Firefox) and 32 (Chrome)
    await insertEvents(ch, [visit(2, 31, 'Firefox'), visit(1, 31, 'Firefox'), visit(1, 32, 'Chrome')])
    await nextSecond()
    const series = [{ kind: 'EventsNode', event: 'visit' }]
    const breakdown = { breakdownFilter: { breakdown: '$browser', breakdown_type: 'event' } }
    for (let i = 0; i < 2; i++) {
      const r = await ask(series, breakdown)
      expect(r.bucket_cache).toBeUndefined()
      const by = Object.fromEntries(r.results.map((x) => [x.label, x.data]))
      expect(by).toEqual({ Firefox: [0, 0, 1, 1, 0], Chrome: [0, 0, 0, 1, 0] })
    }
    for (let i = 0; i < 2; i++) {
      const r = await ask([{ kind: 'EventsNode', event: 'visit', math: 'weekly_active' }])
      expect(r.bucket_cache).toBeUndefined()
      // a person counts on each of the 7 days from their visit
      expect(r.results[0]!.data).toEqual([0, 0, 1, 2, 2])
    }
  })

  it('computes again after a partition is dropped (retention)', async () => {
    const old = (d: string, p: number) => ({
      ...pageview(1, p),
      event: 'old',
      timestamp: `2024-03-${d} 12:00:00`,
    })
    await insertEvents(ch, [old('01', 51), old('02', 51), old('02', 52)])
    await nextSecond()
    const range = { dateRange: { date_from: '2024-03-01', date_to: '2024-03-03' } }
    const series = [{ kind: 'EventsNode', event: 'old' }]
    expect((await ask(series, range)).results[0]!.data).toEqual([1, 2, 0])
    expect((await ask(series, range)).bucket_cache).toEqual({ cached: 3, computed: 0 })
    await ch.command({ query: "ALTER TABLE events DROP PARTITION ID '202403'" })
    const dropped = await ask(series, range)
    expect(dropped.results[0]!.data).toEqual([0, 0, 0])
    expect(dropped.bucket_cache).toEqual({ cached: 0, computed: 3 })

    // dropped again, and rows for one of its days before the next request: the partition is back
    // under its old id, but the other days' stored values are stale all the same
    await insertEvents(ch, [old('01', 51), old('02', 51), old('02', 52)])
    await nextSecond()
    expect((await ask(series, range)).results[0]!.data).toEqual([1, 2, 0])
    expect((await ask(series, range)).bucket_cache).toEqual({ cached: 3, computed: 0 })
    await ch.command({ query: "ALTER TABLE events DROP PARTITION ID '202403'" })
    await insertEvents(ch, [old('01', 53)])
    await nextSecond()
    const refilled = await ask(series, range)
    expect(refilled.results[0]!.data).toEqual([1, 0, 0])
    expect(refilled.bucket_cache).toEqual({ cached: 0, computed: 3 })
  })

  it("keeps a month's values when another month's first rows arrive (its partition appears)", async () => {
    const at = (d: string, p: number, month: string) => ({
      ...pageview(1, p),
      event: 'monthly',
      timestamp: `2023-${month}-${d} 12:00:00`,
    })
    await insertEvents(ch, [at('01', 61, '05'), at('02', 62, '05')])
    await nextSecond()
    const range = { dateRange: { date_from: '2023-05-01', date_to: '2023-05-03' } }
    const series = [{ kind: 'EventsNode', event: 'monthly' }]
    expect((await ask(series, range)).results[0]!.data).toEqual([1, 1, 0])
    expect((await ask(series, range)).bucket_cache).toEqual({ cached: 3, computed: 0 })
    // 2023-09 had no rows: this insert makes its partition (as the first event of every month does)
    await insertEvents(ch, [at('01', 61, '09')])
    await nextSecond()
    const after = await ask(series, range)
    expect(after.results[0]!.data).toEqual([1, 1, 0])
    expect(after.bucket_cache).toEqual({ cached: 3, computed: 0 })
  })

  // last: it replaces the events table
  it('computes again after a table swap (a replay), and still sees late events after it', async () => {
    const swapped = [{ kind: 'EventsNode', event: 'swapped' }]
    const ev = (back: number, p: number) => ({ ...pageview(back, p), event: 'swapped' })
    // day-2: persons 41 and 42; day-1: person 41
    await insertEvents(ch, [ev(2, 41), ev(2, 42), ev(1, 41)])
    await nextSecond()
    expect((await ask(swapped)).results[0]!.data).toEqual([0, 0, 2, 1, 0])
    expect((await ask(swapped)).bucket_cache).toEqual({ cached: 4, computed: 1 })

    // the rebuilt table lacks person 42's event, as a replay's could; swapped in as replay.ts does
    await ch.command({ query: 'CREATE TABLE events_rebuilt AS events' })
    await ch.command({
      query: `INSERT INTO events_rebuilt SELECT * FROM events WHERE person_id != '${person(42)}'`,
    })
    await ch.command({ query: 'RENAME TABLE events TO events_before, events_rebuilt TO events' })
    await afterEventsSwap(ch)
    await ch.command({ query: 'DROP TABLE events_before' })
    await nextSecond()
    const after = await ask(swapped)
    expect(after.results[0]!.data).toEqual([0, 0, 1, 1, 0])
    expect(after.bucket_cache).toEqual({ cached: 0, computed: 5 })

    // the changed-days view follows the new table: a late event for day-1 is counted
    expect((await ask(swapped)).bucket_cache).toEqual({ cached: 4, computed: 1 })
    await insertEvents(ch, [ev(1, 43)])
    await nextSecond()
    const late = await ask(swapped)
    expect(late.results[0]!.data).toEqual([0, 0, 1, 2, 0])
    expect(late.bucket_cache).toEqual({ cached: 3, computed: 2 })
  })
})

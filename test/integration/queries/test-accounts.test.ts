/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// filterTestAccounts applies the project's test_account_filters (PATCH /api/projects/:id/) to every
// query kind that takes it, through POST /query/ and the legacy person lists. The cases follow
// PostHog's: test_trends.py test_filter_test_accounts (a person filter; with a breakdown) and
// test_filter_test_accounts_cohorts (a cohort filter keeps its members), test_funnel.py
// test_funnel_filter_test_accounts (PostHog's test team filters out emails containing
// @posthog.com), and posthog/hogql/test/test_filters.py for HogQLQuery filters. Expected values are
// worked out by hand from the data below (all UTC; persons created 2020-01-02):
//   alice (alice@example.com)  signup 01-02 10:00 ($host app.com); $pageview /home 01-03 10:05
//                              ($host app.com), /pricing 01-03 10:06, /home 01-04 11:00
//   tess  (tess@posthog.com)   signup 01-02 11:00 ($host app.com); $pageview /home 01-03 11:05
//                              ($host app.com), /admin 01-03 11:06
//   bob   (bob@example.com)    signup 01-03 10:00 ($host localhost:8000); $pageview /home 01-04
//                              10:00 ($host localhost:8000)
// EMAIL drops tess's events (3 of 9); HOST drops bob's two ($host is_not matches a missing $host).
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertDistinctIds, insertEvents, insertPersons } from '../hogql/fixtures.ts'

const EMAIL = [{ key: 'email', value: '@posthog.com', operator: 'not_icontains', type: 'person' }]
const HOST = [{ key: '$host', value: 'localhost:8000', operator: 'is_not', type: 'event' }]

let project: Project
let call: ReturnType<typeof api>
const ids: Record<string, string> = {}
const names = () => new Map(Object.entries(ids).map(([n, id]) => [id, n]))

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('test accounts')
  call = api(burrow.url, await createTestKey(['*'], [project.id]))
  const ch = clickhouse()
  const people = { alice: 'alice@example.com', tess: 'tess@posthog.com', bob: 'bob@example.com' }
  for (const [name, email] of Object.entries(people)) {
    ids[name] = randomUUID()
    await insertPersons(ch, [
      {
        team: project.id,
        id: ids[name]!,
        createdAt: '2020-01-02 00:00:00.000',
        properties: { email, name },
        version: 1,
      },
    ])
    await insertDistinctIds(ch, [{ team: project.id, distinctId: name, personId: ids[name]!, version: 1 }])
  }
  const ev = (who: string, event: string, ts: string, properties: Record<string, unknown> = {}) => ({
    team: project.id,
    uuid: randomUUID(),
    event,
    distinctId: who,
    personId: ids[who]!,
    timestamp: `2020-${ts}.000`,
    properties,
  })
  const pv = (who: string, ts: string, path: string, host?: string) =>
    ev(who, '$pageview', ts, { $current_url: `https://app.com${path}`, ...(host ? { $host: host } : {}) })
  await insertEvents(ch, [
    ev('alice', 'user signed up', '01-02 10:00:00', { $host: 'app.com' }),
    ev('tess', 'user signed up', '01-02 11:00:00', { $host: 'app.com' }),
    ev('bob', 'user signed up', '01-03 10:00:00', { $host: 'localhost:8000' }),
    pv('alice', '01-03 10:05:00', '/home', 'app.com'),
    pv('alice', '01-03 10:06:00', '/pricing'),
    pv('alice', '01-04 11:00:00', '/home'),
    pv('tess', '01-03 11:05:00', '/home', 'app.com'),
    pv('tess', '01-03 11:06:00', '/admin'),
    pv('bob', '01-04 10:00:00', '/home', 'localhost:8000'),
  ])
})

async function useFilters(filters: unknown[]) {
  const r = await call('PATCH', `/api/projects/${project.id}/`, { test_account_filters: filters })
  expect(r.status, r.text).toBe(200)
}

async function query(q: Record<string, unknown>, refresh = 'force_blocking') {
  const r = await call('POST', `/api/projects/${project.id}/query/`, { query: q, refresh })
  expect(r.status, r.text).toBe(200)
  return r.body
}

const signups = { kind: 'EventsNode', event: 'user signed up' }
const pageviews = { kind: 'EventsNode', event: '$pageview' }
const trends = (extra: Record<string, unknown> = {}) => ({
  kind: 'TrendsQuery',
  series: [signups],
  interval: 'day',
  dateRange: { date_from: '2020-01-01', date_to: '2020-01-04' },
  ...extra,
})
/** A daily insight of one series over the days given, with or without the filters. */
const daily =
  (kind: string, series: unknown, date_from: string, date_to: string) => (filterTestAccounts: boolean) => ({
    kind,
    series: [series],
    interval: 'day',
    dateRange: { date_from, date_to },
    filterTestAccounts,
  })
const trendsData = async (q: Record<string, unknown>) =>
  (await query(q)).results.map((s: any) => [s.breakdown_value ?? null, s.data])

describe('filterTestAccounts: TrendsQuery', () => {
  it("AND's the project's person filter (PostHog test_filter_test_accounts)", async () => {
    await useFilters(EMAIL)
    expect(await trendsData(trends({ filterTestAccounts: true }))).toEqual([[null, [0, 1, 1, 0]]])
    expect(await trendsData(trends({ filterTestAccounts: false }))).toEqual([[null, [0, 2, 1, 0]]])
    expect(await trendsData(trends())).toEqual([[null, [0, 2, 1, 0]]])
    // with a breakdown the values are those of the filtered events
    const broken = await trendsData(
      trends({ filterTestAccounts: true, breakdownFilter: { breakdown: '$host', breakdown_type: 'event' } }),
    )
    expect(broken.sort()).toEqual([
      ['app.com', [0, 1, 0, 0]],
      ['localhost:8000', [0, 0, 1, 0]],
    ])
  })

  it('takes event filters too, beside the query properties', async () => {
    await useFilters(HOST)
    expect(await trendsData(trends({ filterTestAccounts: true }))).toEqual([[null, [0, 2, 0, 0]]])
    const both = trends({
      filterTestAccounts: true,
      properties: [{ key: 'email', value: 'tess', operator: 'icontains', type: 'person' }],
    })
    expect(await trendsData(both)).toEqual([[null, [0, 1, 0, 0]]])
  })

  it('adds nothing when the project has no filters', async () => {
    await useFilters([])
    expect(await trendsData(trends({ filterTestAccounts: true }))).toEqual([[null, [0, 2, 1, 0]]])
  })

  it('keeps the members of a cohort filter (PostHog test_filter_test_accounts_cohorts)', async () => {
    const created = await call('POST', `/api/projects/${project.id}/cohorts/`, {
      name: 'bob only',
      filters: { properties: { type: 'AND', values: [{ key: 'name', value: 'bob', type: 'person' }] } },
    })
    expect(created.status, created.text).toBe(201)
    const id = created.body.id
    const end = Date.now() + 30_000
    while ((await call('GET', `/api/projects/${project.id}/cohorts/${id}/`)).body.is_calculating) {
      if (Date.now() > end) throw new Error('cohort not calculated')
      await new Promise((r) => setTimeout(r, 100))
    }
    await useFilters([{ key: 'id', value: id, type: 'cohort' }])
    expect(await trendsData(trends({ filterTestAccounts: true }))).toEqual([[null, [0, 0, 1, 0]]])
  })

  it('the persons of a point are those it counts (ActorsQuery)', async () => {
    await useFilters(EMAIL)
    const actors = async (filterTestAccounts: boolean) => {
      const source = trends({ filterTestAccounts })
      const body = await query({
        kind: 'ActorsQuery',
        source: { kind: 'InsightActorsQuery', source, day: '2020-01-02', series: 0 },
      })
      return body.results.map((r: any[]) => names().get(r[1])).sort()
    }
    expect(await actors(true)).toEqual(['alice'])
    expect(await actors(false)).toEqual(['alice', 'tess'])
  })

  it('keys the results cache on the filters: a change answers afresh', async () => {
    await useFilters(HOST)
    const q = trends({ filterTestAccounts: true })
    expect((await query(q, 'blocking')).results[0].data).toEqual([0, 2, 0, 0])
    await useFilters([])
    const after = await query(q, 'blocking')
    expect(after.results[0].data).toEqual([0, 2, 1, 0])
    await useFilters(EMAIL)
    expect((await query(q, 'blocking')).results[0].data).toEqual([0, 1, 1, 0])
  })
})

describe('filterTestAccounts: the other insights', () => {
  it('FunnelsQuery (PostHog test_funnel_filter_test_accounts), its actors', async () => {
    await useFilters(EMAIL)
    const funnel = (filterTestAccounts: boolean) => ({
      kind: 'FunnelsQuery',
      series: [signups, pageviews],
      dateRange: { date_from: '2020-01-01', date_to: '2020-01-14' },
      filterTestAccounts,
    })
    const counts = async (q: unknown) => (await query(q as any)).results.map((s: any) => s.count)
    expect(await counts(funnel(true))).toEqual([2, 2])
    expect(await counts(funnel(false))).toEqual([3, 3])
    await useFilters(HOST)
    expect(await counts(funnel(true))).toEqual([2, 2])
    const body = await query({
      kind: 'ActorsQuery',
      source: { kind: 'InsightActorsQuery', source: funnel(true), funnelStep: 2 },
    })
    expect(body.results.map((r: any[]) => names().get(r[1])).sort()).toEqual(['alice', 'tess'])
  })

  it('LifecycleQuery', async () => {
    await useFilters(EMAIL)
    const lifecycle = daily('LifecycleQuery', signups, '2020-01-02', '2020-01-04')
    const rows = async (q: unknown) => (await query(q as any)).results.map((s: any) => [s.status, s.data])
    // alice and tess are new on 01-02 (created then), dormant on 01-03; bob, created 01-02 and
    // first active 01-03, is resurrecting then and dormant on 01-04
    expect(await rows(lifecycle(false))).toEqual([
      ['new', [2, 0, 0]],
      ['returning', [0, 0, 0]],
      ['resurrecting', [0, 1, 0]],
      ['dormant', [0, -2, -1]],
    ])
    expect(await rows(lifecycle(true))).toEqual([
      ['new', [1, 0, 0]],
      ['returning', [0, 0, 0]],
      ['resurrecting', [0, 1, 0]],
      ['dormant', [0, -1, -1]],
    ])
  })

  it('StickinessQuery', async () => {
    const stickiness = daily('StickinessQuery', pageviews, '2020-01-01', '2020-01-05')
    const data = async (q: unknown) => (await query(q as any)).results[0].data
    // pageview days: alice 2 (01-03, 01-04), tess 1, bob 1
    await useFilters(EMAIL)
    expect(await data(stickiness(false))).toEqual([2, 1, 0, 0, 0])
    expect(await data(stickiness(true))).toEqual([1, 1, 0, 0, 0])
    await useFilters(HOST)
    expect(await data(stickiness(true))).toEqual([1, 1, 0, 0, 0])
  })

  it('RetentionQuery: the cohorts and the returning events', async () => {
    const retention = (filterTestAccounts: boolean) => ({
      kind: 'RetentionQuery',
      dateRange: { date_to: '2020-01-04' },
      filterTestAccounts,
      retentionFilter: {
        retentionType: 'retention_first_time',
        period: 'Day',
        totalIntervals: 3,
        targetEntity: { id: 'user signed up', type: 'events' },
        returningEntity: { id: '$pageview', type: 'events' },
      },
    })
    const grid = async (q: unknown) =>
      (await query(q as any)).results.map((r: any) => r.values.map((v: any) => v.count))
    await useFilters(EMAIL)
    // 01-02: alice, tess (both back 01-03, alice 01-04); 01-03: bob (back 01-04)
    expect(await grid(retention(false))).toEqual([[2, 2, 1], [1, 1], [0]])
    expect(await grid(retention(true))).toEqual([[1, 1, 1], [1, 1], [0]])
    await useFilters(HOST)
    expect(await grid(retention(true))).toEqual([[2, 2, 1], [0, 0], [0]])
  })

  it('PathsQuery', async () => {
    await useFilters(EMAIL)
    const paths = (filterTestAccounts: boolean) => ({
      kind: 'PathsQuery',
      dateRange: { date_from: '2020-01-01', date_to: '2020-01-05' },
      pathsFilter: { includeEventTypes: ['$pageview'] },
      filterTestAccounts,
    })
    const edges = async (q: unknown) =>
      (await query(q as any)).results.map((e: any) => [e.source, e.target, e.value]).sort()
    expect(await edges(paths(false))).toEqual([
      ['1_https://app.com/home', '2_https://app.com/admin', 1],
      ['1_https://app.com/home', '2_https://app.com/pricing', 1],
    ])
    expect(await edges(paths(true))).toEqual([['1_https://app.com/home', '2_https://app.com/pricing', 1]])
  })
})

describe('filterTestAccounts: HogQLQuery filters, EventsQuery and the legacy person list', () => {
  it('HogQL {filters} takes them (posthog/hogql/filters.py)', async () => {
    const count = async (filters: unknown) =>
      (await query({ kind: 'HogQLQuery', query: 'SELECT count() FROM events WHERE {filters}', filters }))
        .results[0][0]
    await useFilters(EMAIL)
    expect(await count({ filterTestAccounts: true })).toBe(6)
    expect(await count({ filterTestAccounts: false })).toBe(9)
    await useFilters(HOST)
    expect(await count({ filterTestAccounts: true })).toBe(7)
  })

  it('EventsQuery takes them (events_query_runner)', async () => {
    const count = async (filterTestAccounts: boolean) =>
      (
        await query({
          kind: 'EventsQuery',
          select: ['count()'],
          after: '2020-01-01',
          before: '2020-01-05',
          filterTestAccounts,
        })
      ).results[0][0]
    await useFilters(EMAIL)
    expect(await count(true)).toBe(6)
    expect(await count(false)).toBe(9)
  })

  it('GET /persons/trends/ with filter_test_accounts=true', async () => {
    await useFilters(EMAIL)
    const list = async (flag: string) => {
      const qs = new URLSearchParams({
        entity_id: 'user signed up',
        entity_type: 'events',
        date_from: '2020-01-02',
        interval: 'day',
        filter_test_accounts: flag,
      })
      const r = await call('GET', `/api/projects/${project.id}/persons/trends/?${qs}`)
      expect(r.status, r.text).toBe(200)
      return r.body.results[0].people.map((p: any) => names().get(p.id)).sort()
    }
    expect(await list('true')).toEqual(['alice'])
    expect(await list('false')).toEqual(['alice', 'tess'])
  })
})

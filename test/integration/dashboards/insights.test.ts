// Saved insights and dashboards with PostHog's serializers' fields, their results from the query
// endpoint's runner and cache, dashboard filters over every tile, soft delete and scopes.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'

let burrow: RunningBurrow
let project: Project
let other: Project
let call: ReturnType<typeof api>

const DAY = 86_400_000
const midnight = Math.floor(Date.now() / DAY) * DAY
const at = (daysAgo: number, time: string) =>
  new Date(midnight - daysAgo * DAY).toISOString().slice(0, 10) + `T${time}.000Z`

// by hand: $pageview 3 days ago (2: alice Chrome, bob Safari), 1 day ago (1: alice Chrome), 20 days
// ago (1: carol Chrome); signed up 1 day ago (alice)
const DATASET = [
  {
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: at(3, '10:00:00'),
    properties: { $browser: 'Chrome' },
  },
  {
    event: '$pageview',
    distinct_id: 'bob',
    timestamp: at(3, '11:00:00'),
    properties: { $browser: 'Safari' },
  },
  {
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: at(1, '09:00:00'),
    properties: { $browser: 'Chrome' },
  },
  {
    event: '$pageview',
    distinct_id: 'carol',
    timestamp: at(20, '09:00:00'),
    properties: { $browser: 'Chrome' },
  },
  { event: 'signed up', distinct_id: 'alice', timestamp: at(1, '09:05:00') },
]

const INSIGHT_FIELDS = [
  'cache_target_age',
  'columns',
  'created_at',
  'created_by',
  'dashboard_tiles',
  'dashboards',
  'deleted',
  'derived_name',
  'description',
  'effective_privilege_level',
  'effective_restriction_level',
  'favorited',
  'filters',
  'filters_hash',
  'hasMore',
  'hogql',
  'id',
  'is_cached',
  'is_sample',
  'last_modified_at',
  'last_modified_by',
  'last_refresh',
  'name',
  'next_allowed_client_refresh',
  'order',
  'query',
  'query_status',
  'result',
  'saved',
  'short_id',
  'tags',
  'timezone',
  'types',
  'updated_at',
]

const trends = (extra: object = {}) => ({
  kind: 'InsightVizNode',
  source: {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: '$pageview' }],
    interval: 'day',
    dateRange: { date_from: '-7d' },
    ...extra,
  },
})
const base = () => `/api/projects/${project.id}`

async function capture(batch: object[]) {
  const res = await fetch(`${burrow.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.api_token, batch }),
  })
  expect(res.status).toBe(200)
}

const total = (result: { count: number }[] | null) => result?.[0]?.count

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('dashboards')
  other = await createTestProject('dashboards other')
  call = api(burrow.url, await createTestKey(['*']))
  await capture(DATASET)
  const deadline = Date.now() + 30_000
  for (;;) {
    const r = await call('POST', `${base()}/query/`, {
      query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' },
      refresh: 'force_blocking',
    })
    if (Number(r.body.results?.[0]?.[0]) === DATASET.length || Date.now() > deadline) break
    await new Promise((r) => setTimeout(r, 200))
  }
})

describe('saved insights', () => {
  it("creates (201) with PostHog's fields and no result until one is calculated", async () => {
    const r = await call('POST', `${base()}/insights/`, {
      name: 'Pageviews',
      query: trends(),
      saved: true,
      tags: ['web'],
    })
    expect(r.status).toBe(201)
    expect(Object.keys(r.body).sort()).toEqual(INSIGHT_FIELDS)
    expect(r.body).toMatchObject({
      name: 'Pageviews',
      derived_name: null,
      description: null,
      saved: true,
      favorited: false,
      deleted: false,
      tags: ['web'],
      dashboards: [],
      dashboard_tiles: [],
      filters: {},
      result: null,
      last_refresh: null,
      is_cached: false,
      timezone: project.timezone,
      effective_privilege_level: 37,
    })
    expect(r.body.short_id).toMatch(/^[A-Za-z0-9]{8}$/)
    expect(r.body.created_by).toMatchObject({ id: 1 })
    expect(r.body.query).toEqual(trends())
  })

  it('?refresh=blocking gives what POST /query/ gives for its source; the default then reads the cache', async () => {
    const created = await call('POST', `${base()}/insights/`, {
      name: 'Chrome',
      query: trends({ properties: [{ key: '$browser', value: 'Chrome', type: 'event' }] }),
    })
    const id = created.body.id
    const viaInsight = await call('GET', `${base()}/insights/${id}/?refresh=blocking`)
    expect(viaInsight.status).toBe(200)
    const viaQuery = await call('POST', `${base()}/query/`, {
      query: trends({ properties: [{ key: '$browser', value: 'Chrome', type: 'event' }] }).source,
      refresh: 'blocking',
    })
    expect(viaQuery.status).toBe(200)
    expect(viaInsight.body.result).toEqual(viaQuery.body.results)
    expect(viaInsight.body.filters_hash).toBe(viaQuery.body.cache_key)
    // by hand: Chrome pageviews in the last 7 days: 3 days ago and 1 day ago
    expect(total(viaInsight.body.result)).toBe(2)
    const cached = await call('GET', `${base()}/insights/${id}/`)
    expect(cached.body).toMatchObject({ is_cached: true, last_refresh: viaInsight.body.last_refresh })
    expect(cached.body.result).toEqual(viaInsight.body.result)
    // refresh=true is force_blocking: calculated again
    const forced = await call('GET', `${base()}/insights/${id}/?refresh=true`)
    expect(forced.body.is_cached).toBe(false)
    expect(forced.body.result).toEqual(viaQuery.body.results)
  })

  it('runs a DataVisualizationNode around HogQL, and refuses a query that cannot run (400)', async () => {
    const hogql = {
      kind: 'DataVisualizationNode',
      source: { kind: 'HogQLQuery', query: "SELECT count() FROM events WHERE event = 'signed up'" },
    }
    const r = await call('POST', `${base()}/insights/`, { name: 'Signups', query: hogql })
    expect(r.status).toBe(201)
    const got = await call('GET', `${base()}/insights/${r.body.id}/?refresh=force_blocking`)
    expect(got.body.result).toEqual([[1]])
    expect(got.body.columns).toEqual(['count()'])
    const bad = await call('POST', `${base()}/insights/`, {
      query: { kind: 'InsightVizNode', source: { kind: 'NopeQuery' } },
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ type: 'validation_error', attr: 'query.kind' })
    const badSql = await call('POST', `${base()}/insights/`, {
      query: { kind: 'DataVisualizationNode', source: { kind: 'HogQLQuery', query: 'SELEC 1' } },
    })
    expect(badSql.status).toBe(400)
    const noKind = await call('POST', `${base()}/insights/`, { query: { kind: 'InsightVizNode' } })
    expect(noKind.status).toBe(400)
    expect(noKind.body.attr).toBe('query')
  })

  it('lists with short_id, search, favorited, saved and created_by filters, and pages', async () => {
    const fav = await call('POST', `${base()}/insights/`, {
      name: 'Favourite funnel',
      description: 'the checkout',
      query: trends(),
      favorited: true,
      tags: ['checkout'],
    })
    const list = (q: string) => call('GET', `${base()}/insights/?basic=true&${q}`)
    const names = (r: { body: { results: { name: string }[] } }) => r.body.results.map((i) => i.name).sort()
    expect(names(await list(`short_id=${fav.body.short_id}`))).toEqual(['Favourite funnel'])
    expect(names(await list('search=CHECKOUT'))).toEqual(['Favourite funnel'])
    expect(names(await list('search=favourite'))).toEqual(['Favourite funnel'])
    expect(names(await list('favorited=true'))).toEqual(['Favourite funnel'])
    expect(names(await list('saved=true'))).toEqual(['Pageviews'])
    expect(names(await list('created_by=1'))).toContain('Favourite funnel')
    expect(names(await list('created_by=999'))).toEqual([])
    const page = await list('limit=2')
    expect(page.body.results).toHaveLength(2)
    expect(page.body.count).toBeGreaterThanOrEqual(4)
    expect(page.body.next).toContain('offset=2')
    expect(Object.keys(page.body.results[0]).sort()).toEqual(
      [
        'created_at',
        'created_by',
        'dashboard_tiles',
        'dashboards',
        'derived_name',
        'description',
        'favorited',
        'filters',
        'id',
        'last_modified_at',
        'last_refresh',
        'name',
        'query',
        'refreshing',
        'saved',
        'short_id',
        'tags',
        'updated_at',
      ].sort(),
    )
    // another project sees none of them
    expect((await call('GET', `/api/projects/${other.id}/insights/`)).body.count).toBe(0)
    expect((await call('GET', `/api/projects/${other.id}/insights/${fav.body.id}/`)).status).toBe(404)
  })

  it('soft delete: PATCH deleted hides it, false brings it back; DELETE is a 405', async () => {
    const r = await call('POST', `${base()}/insights/`, { name: 'Doomed', query: trends() })
    const id = r.body.id
    expect((await call('DELETE', `${base()}/insights/${id}/`)).status).toBe(405)
    const del = await call('PATCH', `${base()}/insights/${id}/`, { deleted: true })
    expect(del.status).toBe(200)
    expect(del.body.deleted).toBe(true)
    expect((await call('GET', `${base()}/insights/${id}/`)).status).toBe(404)
    expect((await call('PATCH', `${base()}/insights/${id}/`, { name: 'x' })).status).toBe(404)
    expect((await call('GET', `${base()}/insights/?short_id=${r.body.short_id}`)).body.count).toBe(0)
    const back = await call('PATCH', `${base()}/insights/${id}/`, { deleted: false })
    expect(back.status).toBe(200)
    expect((await call('GET', `${base()}/insights/${id}/`)).status).toBe(200)
  })

  it('scopes: insight:read cannot write, dashboard scopes do not reach insights', async () => {
    const reader = api(burrow.url, await createTestKey(['insight:read']))
    expect((await reader('GET', `${base()}/insights/`)).status).toBe(200)
    expect((await reader('POST', `${base()}/insights/`, { name: 'x' })).status).toBe(403)
    const dash = api(burrow.url, await createTestKey(['dashboard:write']))
    expect((await dash('GET', `${base()}/insights/`)).status).toBe(403)
    expect((await dash('GET', `${base()}/dashboards/`)).status).toBe(200)
    const insightOnly = api(burrow.url, await createTestKey(['insight:write']))
    expect((await insightOnly('POST', `${base()}/dashboards/`, { name: 'x' })).status).toBe(403)
  })
})

describe('dashboards', () => {
  it('builds a dashboard from saved insights (their dashboards list) and a text card, with layouts', async () => {
    const d = await call('POST', `${base()}/dashboards/`, {
      name: 'Morning',
      description: 'what we open first',
    })
    expect(d.status).toBe(201)
    expect(d.body).toMatchObject({
      name: 'Morning',
      tiles: [],
      filters: {},
      is_shared: false,
      deleted: false,
      creation_mode: 'default',
    })
    const a = await call('POST', `${base()}/insights/`, {
      name: 'All pageviews',
      query: trends(),
      dashboards: [d.body.id],
    })
    expect(a.body.dashboards).toEqual([d.body.id])
    const b = await call('POST', `${base()}/insights/`, {
      name: 'Signups',
      query: trends({ series: [{ kind: 'EventsNode', event: 'signed up' }] }),
    })
    const added = await call('PATCH', `${base()}/insights/${b.body.id}/`, { dashboards: [d.body.id] })
    expect(added.body.dashboards).toEqual([d.body.id])
    expect(added.body.dashboard_tiles).toEqual([
      { id: expect.any(Number), dashboard_id: d.body.id, deleted: false },
    ])
    const text = await call('PATCH', `${base()}/dashboards/${d.body.id}/`, {
      tiles: [{ text: { body: '# Good morning' }, layouts: { sm: { x: 0, y: 20, w: 12, h: 2 } } }],
    })
    expect(text.status).toBe(200)
    const tiles = text.body.tiles
    expect(tiles).toHaveLength(3)
    const textTile = tiles.find((t: { text: unknown }) => t.text)
    expect(textTile.text).toMatchObject({ body: '# Good morning', team: project.id })
    expect(textTile.insight).toBeNull()
    expect(textTile.layouts).toEqual({ sm: { x: 0, y: 20, w: 12, h: 2 } })
    const tile = tiles.find((t: { insight: { id: number } | null }) => t.insight?.id === a.body.id)
    expect(Object.keys(tile).sort()).toEqual(
      [
        'button_tile',
        'color',
        'filters_overrides',
        'id',
        'insight',
        'is_cached',
        'last_refresh',
        'layouts',
        'order',
        'show_description',
        'text',
        'transparent_background',
      ].sort(),
    )
    // a tile's layout changes through the dashboard
    const moved = await call('PATCH', `${base()}/dashboards/${d.body.id}/`, {
      tiles: [{ id: tile.id, layouts: { sm: { x: 6, y: 0, w: 6, h: 5 } } }],
    })
    expect(moved.body.tiles.find((t: { id: number }) => t.id === tile.id).layouts).toEqual({
      sm: { x: 6, y: 0, w: 6, h: 5 },
    })
    // removing the insight from the dashboard through its list
    const removed = await call('PATCH', `${base()}/insights/${b.body.id}/`, { dashboards: [] })
    expect(removed.body.dashboards).toEqual([])
    const after = await call('GET', `${base()}/dashboards/${d.body.id}/`)
    expect(
      after.body.tiles.map((t: { insight: { id: number } | null }) => t.insight?.id ?? null).sort(),
    ).toEqual([a.body.id, null].sort())
    // another project's dashboard cannot be named
    const foreign = await call('POST', `/api/projects/${other.id}/dashboards/`, { name: 'theirs' })
    const refused = await call('PATCH', `${base()}/insights/${b.body.id}/`, { dashboards: [foreign.body.id] })
    expect(refused.status).toBe(400)
    expect(refused.body.attr).toBe('dashboards')
  })

  it('refreshes every tile at once with the cache, and its filters override every tile', async () => {
    const d = await call('POST', `${base()}/dashboards/`, { name: 'Filtered' })
    const ids: number[] = []
    for (const q of [trends(), trends({ series: [{ kind: 'EventsNode', event: 'signed up' }] })]) {
      ids.push((await call('POST', `${base()}/insights/`, { query: q, dashboards: [d.body.id] })).body.id)
    }
    const cached = await call('GET', `${base()}/dashboards/${d.body.id}/`)
    const fresh = await call('GET', `${base()}/dashboards/${d.body.id}/?refresh=force_blocking`)
    expect(fresh.status).toBe(200)
    const byInsight = (
      body: {
        tiles: {
          insight: {
            id: number
            result: { count: number }[] | null
            query: { source: { dateRange: object } }
          }
        }[]
      },
      id: number,
    ) => body.tiles.find((t) => t.insight?.id === id)!.insight
    // by hand, last 7 days: 3 pageviews, 1 signup
    expect(total(byInsight(fresh.body, ids[0]!).result!)).toBe(3)
    expect(total(byInsight(fresh.body, ids[1]!).result!)).toBe(1)
    expect(fresh.body.last_refresh).toEqual(expect.any(String))
    void cached
    // the cache: the next plain view takes those results
    const again = await call('GET', `${base()}/dashboards/${d.body.id}/`)
    expect(again.body.tiles.every((t: { is_cached: boolean }) => t.is_cached)).toBe(true)
    // a date filter over all: the last 30 days (the pageview of 20 days ago counts)
    const wide = await call('PATCH', `${base()}/dashboards/${d.body.id}/`, { filters: { date_from: '-30d' } })
    expect(wide.body.filters).toEqual({ date_from: '-30d' })
    const thirty = await call('GET', `${base()}/dashboards/${d.body.id}/?refresh=blocking`)
    expect(byInsight(thirty.body, ids[0]!).query.source.dateRange).toMatchObject({
      date_from: '-30d',
      date_to: null,
    })
    expect(total(byInsight(thirty.body, ids[0]!).result!)).toBe(4)
    // the same as the insight with the filter in its own query, on the query endpoint
    const direct = await call('POST', `${base()}/query/`, {
      query: { ...trends().source, dateRange: { date_from: '-30d', date_to: null } },
      refresh: 'blocking',
    })
    expect(byInsight(thirty.body, ids[0]!).result).toEqual(direct.body.results)
    // property filters AND the tile's own
    const safari = await call(
      'GET',
      `${base()}/dashboards/${d.body.id}/?refresh=blocking&filters_override=${encodeURIComponent(JSON.stringify({ properties: [{ key: '$browser', value: 'Safari', type: 'event' }] }))}`,
    )
    expect(total(byInsight(safari.body, ids[0]!).result!)).toBe(1)
    expect(total(byInsight(safari.body, ids[1]!).result!)).toBe(0)
    // the insight on its own is unchanged
    expect((await call('GET', `${base()}/insights/${ids[0]}/`)).body.query).toEqual(trends())
    // from_dashboard applies that dashboard's filters
    const fromDash = await call(
      'GET',
      `${base()}/insights/${ids[0]}/?refresh=blocking&from_dashboard=${d.body.id}`,
    )
    expect(total(fromDash.body.result)).toBe(4)
    expect(fromDash.body.layouts).toEqual(expect.any(Object))
  })

  it('a tile of an insight without a query (a legacy filters insight) loads with no result', async () => {
    const d = await call('POST', `${base()}/dashboards/`, { name: 'Legacy tile' })
    await call('POST', `${base()}/insights/`, { query: trends(), dashboards: [d.body.id] })
    const legacy = await call('POST', `${base()}/insights/`, {
      filters: { insight: 'TRENDS' },
      dashboards: [d.body.id],
    })
    expect(legacy.status).toBe(201)
    const r = await call('GET', `${base()}/dashboards/${d.body.id}/?refresh=blocking`)
    expect(r.status).toBe(200)
    const results = r.body.tiles.map((t: { insight: { id: number; result: unknown } }) => [
      t.insight.id === legacy.body.id,
      t.insight.result === null,
    ])
    expect(results.sort()).toEqual([
      [false, false],
      [true, true],
    ])
  })

  it('lists pinned first then by name; soft delete with delete_insights; DELETE is a 405', async () => {
    const z = await call('POST', `${base()}/dashboards/`, { name: 'zz pinned', pinned: true })
    const list = await call('GET', `${base()}/dashboards/`)
    expect(list.body.results[0].name).toBe('zz pinned')
    expect(list.body.results[0].tiles).toBeUndefined()
    expect(Object.keys(list.body.results[0]).sort()).toEqual(
      [
        'access_control_version',
        'created_at',
        'created_by',
        'creation_mode',
        'deleted',
        'description',
        'effective_privilege_level',
        'effective_restriction_level',
        'id',
        'is_shared',
        'last_accessed_at',
        'last_refresh',
        'last_viewed_at',
        'name',
        'pinned',
        'restriction_level',
        'tags',
        'team_id',
        'user_access_level',
      ].sort(),
    )
    const only = await call('POST', `${base()}/insights/`, {
      name: 'Only here',
      query: trends(),
      dashboards: [z.body.id],
    })
    expect((await call('DELETE', `${base()}/dashboards/${z.body.id}/`)).status).toBe(405)
    const del = await call('PATCH', `${base()}/dashboards/${z.body.id}/`, {
      deleted: true,
      delete_insights: true,
    })
    expect(del.status).toBe(200)
    expect((await call('GET', `${base()}/dashboards/${z.body.id}/`)).status).toBe(404)
    expect((await call('GET', `${base()}/insights/${only.body.id}/`)).status).toBe(404)
    expect(
      (await call('GET', `${base()}/dashboards/`)).body.results.map((d: { id: number }) => d.id),
    ).not.toContain(z.body.id)
    // undeleted: back with its insight
    const back = await call('PATCH', `${base()}/dashboards/${z.body.id}/`, { deleted: false })
    expect(back.status).toBe(200)
    expect(back.body.tiles.map((t: { insight: { id: number } }) => t.insight.id)).toEqual([only.body.id])
    expect((await call('GET', `${base()}/insights/${only.body.id}/`)).status).toBe(200)
    // duplicate: a copy showing the same insights
    const copy = await call('POST', `${base()}/dashboards/`, { name: 'copy', use_dashboard: z.body.id })
    expect(copy.body.creation_mode).toBe('duplicate')
    expect(copy.body.tiles.map((t: { insight: { id: number } }) => t.insight.id)).toEqual([only.body.id])
  })
})

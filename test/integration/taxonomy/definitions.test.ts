// The taxonomy end to end: events captured over HTTP, projected, and listed by PostHog's
// /event_definitions/ and /property_definitions/ with its fields, types, filters and paging; never
// another project's names; and no write for names already recorded.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { until } from '../dashboards/helpers.ts'

let burrow: RunningBurrow
let a: Project
let b: Project
let call: ReturnType<typeof api>
const ch = () => clickhouse()

const EVENT_FIELDS = [
  'action_id',
  'created_at',
  'created_by',
  'id',
  'is_action',
  'is_calculating',
  'last_calculated_at',
  'last_seen_at',
  'last_updated_at',
  'name',
  'post_to_slack',
  'query_usage_30_day',
  'tags',
  'volume_30_day',
]
const PROPERTY_FIELDS = ['id', 'is_numerical', 'is_seen_on_filtered_events', 'name', 'property_type', 'tags']

async function capture(project: Project, batch: object[]) {
  const res = await fetch(`${burrow.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.api_token, batch }),
  })
  expect(res.status).toBe(200)
}

const events = (p: Project, q = '') => call('GET', `/api/projects/${p.id}/event_definitions/${q}`)
const props = (p: Project, q = '') => call('GET', `/api/projects/${p.id}/property_definitions/${q}`)
const names = (r: { body: { results: { name: string }[] } }) => r.body.results.map((x) => x.name)

beforeAll(async () => {
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  a = await createTestProject('taxonomy a')
  b = await createTestProject('taxonomy b')
  call = api(burrow.url, await createTestKey(['*']))
  await capture(a, [
    {
      event: '$pageview',
      distinct_id: 'u1',
      properties: { $browser: 'Chrome', $current_url: 'https://x.io/', first_visit: true },
    },
    { event: '$pageview', distinct_id: 'u2', properties: { $browser: 'Safari', app_rating: 5 } },
    {
      event: 'signed up',
      distinct_id: 'u1',
      properties: {
        plan: 'pro',
        $set: { email: 'u1@x.io' },
        $set_once: { signup_date: '2024-01-01T10:00:00Z' },
      },
    },
    {
      event: '$groupidentify',
      distinct_id: 'u1',
      properties: { $group_type: 'company', $group_key: 'c1', $group_set: { name: 'Acme', seats: 10 } },
    },
    {
      event: 'purchase',
      distinct_id: 'u2',
      properties: { purchase_value: 9.99, '$feature/beta': true, order_time: 1700000000, nested: { a: 1 } },
    },
  ])
  await capture(b, [
    { event: 'secret_event', distinct_id: 's', properties: { secret_prop: 1, $browser: 'Edge' } },
  ])
  await until(
    () => events(a),
    (r) => r.body?.count === 4,
  )
  await until(
    () => events(b),
    (r) => r.body?.count === 1,
  )
})

describe('event definitions', () => {
  it("lists the project's events with PostHog's fields, last seen and 30-day volume", async () => {
    // (the volume was counted while the events arrived: a count lacking a listed name is renewed)
    const r = await until(
      () => events(a, '?ordering=name'),
      (x) => x.body.results[1]?.volume_30_day === 2,
    )
    expect(r.status).toBe(200)
    expect(r.body.count).toBe(4)
    expect(names(r)).toEqual(['$groupidentify', '$pageview', 'purchase', 'signed up'])
    const pv = r.body.results[1]
    expect(Object.keys(pv).sort()).toEqual(EVENT_FIELDS)
    expect(pv).toMatchObject({
      name: '$pageview',
      volume_30_day: 2,
      query_usage_30_day: null,
      tags: [],
      is_action: false,
      action_id: null,
      post_to_slack: false,
    })
    expect(pv.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(Date.now() - Date.parse(pv.last_seen_at)).toBeLessThan(10 * 60_000)
    expect(Date.parse(pv.created_at)).toBeLessThanOrEqual(Date.parse(pv.last_seen_at))
    // the default order: last seen day (newest first), then name
    expect(names(await events(a))).toEqual(['$groupidentify', '$pageview', 'purchase', 'signed up'])
  })

  it('retrieves one by id, and another project cannot', async () => {
    const list = await events(a, '?names=purchase')
    expect(names(list)).toEqual(['purchase'])
    const one = await call('GET', `/api/projects/${a.id}/event_definitions/${list.body.results[0].id}/`)
    expect(one.status).toBe(200)
    expect(one.body).toEqual(list.body.results[0])
    expect(
      (await call('GET', `/api/projects/${b.id}/event_definitions/${list.body.results[0].id}/`)).status,
    ).toBe(404)
  })

  it('searches by every term, shortest match first, and filters $ names', async () => {
    expect(names(await events(a, '?search=p'))).toEqual([
      'purchase',
      '$pageview',
      'signed up',
      '$groupidentify',
    ])
    expect(names(await events(a, '?search=sign%20up'))).toEqual(['signed up'])
    expect(names(await events(a, '?search=PAGE'))).toEqual(['$pageview'])
    expect(names(await events(a, '?event_type=event_custom&ordering=name'))).toEqual([
      'purchase',
      'signed up',
    ])
    expect(names(await events(a, '?event_type=event_posthog&ordering=-name'))).toEqual([
      '$pageview',
      '$groupidentify',
    ])
    expect(names(await events(a, '?names=purchase,nope&names=$pageview&ordering=name'))).toEqual([
      '$pageview',
      'purchase',
    ])
  })

  it('pages with count, next and previous', async () => {
    const first = await events(a, '?ordering=name&limit=3')
    expect(first.body.count).toBe(4)
    expect(names(first)).toHaveLength(3)
    expect(first.body.previous).toBeNull()
    const next = await fetch(first.body.next, { headers: { authorization: await keyHeader() } })
    const body = await next.json()
    expect(body.results.map((x: { name: string }) => x.name)).toEqual(['signed up'])
    expect(body.next).toBeNull()
    const past = await events(a, '?offset=10')
    expect(past.body).toMatchObject({ count: 4, results: [] })
  })

  it("never shows another project's names, whatever the filter", async () => {
    for (const q of ['', '?search=secret', '?names=secret_event', '?event_type=event_custom']) {
      expect(names(await events(a, q))).not.toContain('secret_event')
    }
    expect(names(await events(b))).toEqual(['secret_event'])
    // a key limited to project a does not reach b's definitions
    const onlyA = api(burrow.url, await createTestKey(['event_definition:read'], [a.id]))
    expect((await onlyA('GET', `/api/projects/${b.id}/event_definitions/`)).status).toBe(404)
    expect((await onlyA('GET', `/api/projects/${a.id}/event_definitions/`)).status).toBe(200)
    // and a key without the scope is refused
    const noScope = api(burrow.url, await createTestKey(['insight:read']))
    expect((await noScope('GET', `/api/projects/${a.id}/event_definitions/`)).status).toBe(403)
  })
})

let header: string | undefined
async function keyHeader() {
  header ??= `Bearer ${await createTestKey(['*'])}`
  return header
}

describe('property definitions', () => {
  it('event properties with their inferred types, ingestion keys left out', async () => {
    const r = await props(a)
    expect(r.status).toBe(200)
    expect(Object.keys(r.body.results[0]).sort()).toEqual(PROPERTY_FIELDS)
    const byName = Object.fromEntries(
      r.body.results.map((p: { name: string; property_type: string }) => [p.name, p]),
    )
    expect(names(r)).toEqual([
      '$browser',
      '$current_url',
      '$feature/beta',
      'app_rating',
      'first_visit',
      'nested',
      'order_time',
      'plan',
      'purchase_value',
    ])
    expect(r.body.count).toBe(9)
    expect(byName.$browser).toMatchObject({
      property_type: 'String',
      is_numerical: false,
      is_seen_on_filtered_events: null,
    })
    expect(byName.app_rating).toMatchObject({ property_type: 'Numeric', is_numerical: true })
    expect(byName.first_visit).toMatchObject({ property_type: 'Boolean' })
    expect(byName['$feature/beta']).toMatchObject({ property_type: 'String' })
    expect(byName.order_time).toMatchObject({ property_type: 'DateTime' })
    expect(byName.purchase_value).toMatchObject({ property_type: 'Numeric' })
    expect(byName.nested).toMatchObject({ property_type: null, is_numerical: false })
  })

  it('person properties from $set / $set_once, group properties by group type index', async () => {
    const person = await props(a, '?type=person')
    // with the initial and current browser and URL that ingestion adds to an event's $set / $set_once
    expect(
      person.body.results.map((p: { name: string; property_type: string }) => [p.name, p.property_type]),
    ).toEqual([
      ['$browser', 'String'],
      ['$current_url', 'String'],
      ['$initial_browser', 'String'],
      ['$initial_current_url', 'String'],
      ['email', 'String'],
      ['signup_date', 'DateTime'],
    ])
    const group = await props(a, '?type=group&group_type_index=0')
    expect(
      group.body.results.map((p: { name: string; property_type: string }) => [p.name, p.property_type]),
    ).toEqual([
      ['name', 'String'],
      ['seats', 'Numeric'],
    ])
    expect((await props(a, '?type=group&group_type_index=1')).body.count).toBe(0)
    const missing = await props(a, '?type=group')
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ type: 'validation_error', attr: 'group_type_index' })
    expect((await props(a, '?type=person&group_type_index=0')).status).toBe(400)
    expect((await props(a, '?type=person&event_names=%5B%22x%22%5D')).status).toBe(400)
  })

  it('event_names marks (and sorts first) the properties seen on those events', async () => {
    const r = await props(a, `?event_names=${encodeURIComponent('["$pageview"]')}`)
    expect(
      r.body.results.map((p: { name: string; is_seen_on_filtered_events: boolean }) => [
        p.name,
        p.is_seen_on_filtered_events,
      ]),
    ).toEqual([
      ['$browser', true],
      ['$current_url', true],
      ['app_rating', true],
      ['first_visit', true],
      ['$feature/beta', false],
      ['nested', false],
      ['order_time', false],
      ['plan', false],
      ['purchase_value', false],
    ])
    const only = await props(
      a,
      `?event_names=${encodeURIComponent('["purchase"]')}&filter_by_event_names=true`,
    )
    // $feature/ keys get no (event, property) pair, as in PostHog
    expect(names(only)).toEqual(['nested', 'order_time', 'purchase_value'])
    const bad = await props(a, '?event_names=not-json')
    expect(bad.status).toBe(400)
    expect(bad.body.type).toBe('validation_error')
  })

  it('search, is_numerical, is_feature_flag, properties= and excluded_properties', async () => {
    expect(names(await props(a, '?search=p%20val'))).toEqual(['purchase_value'])
    expect(names(await props(a, '?is_numerical=true'))).toEqual(['app_rating', 'purchase_value'])
    expect(names(await props(a, '?is_feature_flag=true'))).toEqual(['$feature/beta'])
    expect(names(await props(a, '?properties=plan,$browser'))).toEqual(['$browser', 'plan'])
    expect(
      names(await props(a, `?excluded_properties=${encodeURIComponent('["plan","nested"]')}`)),
    ).not.toContain('plan')
    expect(names(await props(a, '?exclude_core_properties=true'))).toEqual([
      'app_rating',
      'first_visit',
      'nested',
      'order_time',
      'plan',
      'purchase_value',
    ])
  })

  it('retrieve, PATCH of property_type (and nothing else), seen_together', async () => {
    const list = await props(a, '?properties=plan')
    const id = list.body.results[0].id
    const one = await call('GET', `/api/projects/${a.id}/property_definitions/${id}`)
    expect(one.body).toEqual(list.body.results[0])
    const patched = await call('PATCH', `/api/projects/${a.id}/property_definitions/${id}/`, {
      property_type: 'Numeric',
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ name: 'plan', property_type: 'Numeric', is_numerical: true })
    expect((await call('GET', `/api/projects/${a.id}/property_definitions/${id}/`)).body.property_type).toBe(
      'Numeric',
    )
    const paid = await call('PATCH', `/api/projects/${a.id}/property_definitions/${id}/`, { verified: true })
    expect(paid.status).toBe(402)
    expect((await call('GET', `/api/projects/${b.id}/property_definitions/${id}/`)).status).toBe(404)
    const seen = await call(
      'GET',
      `/api/projects/${a.id}/property_definitions/seen_together/?event_names=$pageview&event_names=signed%20up&property_name=plan`,
    )
    expect(seen.body).toEqual({ $pageview: false, 'signed up': true })
  })

  it("never another project's properties", async () => {
    expect(names(await props(a, '?search=secret'))).toEqual([])
    expect(names(await props(b))).toEqual(['$browser', 'secret_prop'])
  })
})

describe('kept up to date cheaply', () => {
  it('writes no row for events whose names are all known, and adds the new ones', async () => {
    const c = ch()
    const rows = async () => {
      const rs = await c.query({
        query: `SELECT (SELECT count() FROM event_definitions WHERE team_id = ${a.id}) AS e,
          (SELECT count() FROM property_definitions WHERE team_id = ${a.id}) AS p,
          (SELECT count() FROM event_properties WHERE team_id = ${a.id}) AS ep,
          (SELECT count() FROM events WHERE team_id = ${a.id}) AS n`,
        format: 'JSONEachRow',
      })
      const [r] = await rs.json<{ e: string; p: string; ep: string; n: string }>()
      return { e: Number(r!.e), p: Number(r!.p), ep: Number(r!.ep), n: Number(r!.n) }
    }
    const before = await rows()
    // 300 events of known names and properties (an hour later would write last_seen_at once more)
    await capture(
      a,
      Array.from({ length: 300 }, (_, i) => ({
        event: '$pageview',
        distinct_id: `u${i % 7}`,
        properties: { $browser: i % 2 ? 'Chrome' : 'Safari', app_rating: i },
      })),
    )
    const after = await until(rows, (r) => r.n === before.n + 300)
    expect(after.n).toBe(before.n + 300)
    if (new Date().getUTCHours() === new Date(Date.now() - 60_000).getUTCHours()) {
      // (merges only ever fold rows: fewer, never more)
      expect(after.e).toBeLessThanOrEqual(before.e)
    }
    expect(after.p).toBeLessThanOrEqual(before.p)
    expect(after.ep).toBeLessThanOrEqual(before.ep)
    // a new name among known ones is recorded
    await capture(a, [
      { event: '$pageview', distinct_id: 'u1', properties: { $browser: 'Chrome', brand_new: 'x' } },
    ])
    const r = await until(
      () => props(a, '?properties=brand_new'),
      (x) => x.body.count === 1,
    )
    expect(r.body.results[0]).toMatchObject({ name: 'brand_new', property_type: 'String' })
  })
})

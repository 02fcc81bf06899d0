import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertEvents } from '../hogql/fixtures.ts'

let burrow: RunningBurrow
let project: Project
let other: Project
let call: ReturnType<typeof api>

const PERSON = '00000000-0000-4000-8000-000000000001'

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('query endpoint')
  other = await createTestProject('someone else')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  const ch = clickhouse()
  const ev = (team: number, event: string, ts: string, props: Record<string, unknown>) => ({
    team,
    uuid: uuidv4(),
    event,
    distinctId: 'd1',
    personId: PERSON,
    timestamp: ts,
    properties: props,
  })
  await insertEvents(ch, [
    ev(project.id, '$pageview', '2026-01-01 10:00:00.123', { $browser: 'Chrome' }),
    ev(project.id, '$pageview', '2026-01-01 11:00:00.000', { $browser: 'Firefox' }),
    ev(project.id, 'signup', '2026-01-02 09:30:00.000', { plan: 'pro' }),
    ev(other.id, '$pageview', '2026-01-01 10:00:00.000', { $browser: 'Chrome' }),
  ])
})

const hogql = (query: string) => ({ kind: 'HogQLQuery', query })
const q = (path: string) => `/api/projects/${project.id}${path}`
const envQ = (path: string) => `/api/environments/${project.id}${path}`

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (ok(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('POST /query/ with HogQLQuery', () => {
  it('runs synchronously and answers results, columns, types, hogql, clickhouse and cache fields', async () => {
    const r = await call('POST', envQ('/query/'), {
      query: hogql('SELECT event, count() AS c FROM events GROUP BY event ORDER BY event'),
    })
    expect(r.status).toBe(200)
    expect(r.body.results).toEqual([
      ['$pageview', 2],
      ['signup', 1],
    ])
    expect(r.body.columns).toEqual(['event', 'c'])
    expect(r.body.types).toHaveLength(2)
    expect(r.body.hogql).toContain('SELECT event')
    expect(r.body.clickhouse).toContain(`team_id = ${project.id}`)
    expect(r.body).toMatchObject({ is_cached: false, hasMore: false, limit: 100, offset: 0 })
    expect(r.body.cache_key).toEqual(expect.any(String))
    expect(Date.parse(r.body.last_refresh)).not.toBeNaN()
    expect(r.body.timings[0].t).toBeGreaterThanOrEqual(0)
  })

  it('serves very fresh results from the cache for blocking, recalculates for force_blocking', async () => {
    const body = { query: hogql("SELECT count() FROM events WHERE event = '$pageview'") }
    const first = await call('POST', q('/query/'), { ...body, refresh: 'force_blocking' })
    expect(first.body).toMatchObject({ is_cached: false, results: [[2]] })
    const second = await call('POST', q('/query/'), body)
    expect(second.body).toMatchObject({ is_cached: true, results: [[2]], cache_key: first.body.cache_key })
    const forced = await call('POST', q('/query/'), { ...body, refresh: 'force_blocking' })
    expect(forced.body.is_cached).toBe(false)
  })

  it('force_cache never calculates: a miss answers at once without results', async () => {
    const body = { query: hogql("SELECT count() FROM events WHERE event = 'signup'"), refresh: 'force_cache' }
    const miss = await call('POST', q('/query/'), body)
    expect(miss.status).toBe(200)
    expect(miss.body).toMatchObject({ is_cached: false, results: null })
    await call('POST', q('/query/'), { ...body, refresh: 'blocking' })
    const hit = await call('POST', q('/query/'), body)
    expect(hit.body).toMatchObject({ is_cached: true, results: [[1]] })
  })

  it('keeps millisecond timestamps and never returns another project’s rows', async () => {
    const r = await call('POST', q('/query/'), {
      query: hogql("SELECT timestamp FROM events WHERE properties.$browser = 'Chrome'"),
    })
    expect(r.body.results).toHaveLength(1)
    expect(String(r.body.results[0][0])).toContain('10:00:00.123')
  })

  it('answers 64-bit integers as numbers where they are exact, as exact text where they are not', async () => {
    const r = await call('POST', q('/query/'), {
      query: hogql(
        "SELECT count(), toUInt64(9007199254740991), toUInt64(18446744073709551615), toInt64('-9007199254740993') FROM events",
      ),
    })
    expect(r.status).toBe(200)
    expect(r.body.results).toEqual([[3, 9007199254740991, '18446744073709551615', '-9007199254740993']])
  })

  it('answers 400 in PostHog’s error shape with the position for syntax and resolution errors', async () => {
    const syntax = await call('POST', q('/query/'), { query: hogql('SELEC event FROM events') })
    expect(syntax.status).toBe(400)
    expect(syntax.body).toMatchObject({ type: 'validation_error', detail: expect.any(String) })
    expect(syntax.body.start).toEqual(expect.any(Number))
    const unknown = await call('POST', q('/query/'), { query: hogql('SELECT nope FROM events') })
    expect(unknown.status).toBe(400)
    const forbidden = await call('POST', q('/query/'), { query: hogql("SELECT * FROM url('http://x', CSV)") })
    expect(forbidden.status).toBe(400)
    const system = await call('POST', q('/query/'), { query: hogql('SELECT * FROM system.tables') })
    expect(system.status).toBe(400)
    expect(JSON.stringify(system.body)).not.toMatch(/person_distinct_id|burrow_test/)
    const badBody = await call('POST', q('/query/'), { query: { kind: 'HogQLQuery' } })
    expect(badBody.status).toBe(400)
    const badKind = await call('POST', q('/query/'), { query: { kind: 'NopeQuery' } })
    expect(badKind.status).toBe(400)
    const badRefresh = await call('POST', q('/query/'), { query: hogql('SELECT 1'), refresh: 'sometimes' })
    expect(badRefresh.status).toBe(400)
  })

  it('answers 400 without internal names when ClickHouse rejects the query', async () => {
    for (const text of [
      'SELECT event + 1 FROM events',
      'SELECT properties.$browser + 1 FROM events',
      'SELECT avg(event) FROM events',
    ]) {
      const r = await call('POST', q('/query/'), { query: hogql(text) })
      expect(r.status, text).toBe(400)
      expect(r.body).toMatchObject({ type: 'validation_error', code: 'query_error' })
      expect(r.body.detail, text).not.toMatch(/prop_values|prop_keys|burrow_test|Code: \d+/)
    }
  })

  it('needs query:read on the project', async () => {
    const noScope = api(burrow.url, await createTestKey(['person:read']))
    expect((await noScope('POST', q('/query/'), { query: hogql('SELECT 1') })).status).toBe(403)
    expect(
      (await call('POST', `/api/projects/${other.id}/query/`, { query: hogql('SELECT 1') })).status,
    ).toBe(404)
    expect((await api(burrow.url, null)('POST', q('/query/'), { query: hogql('SELECT 1') })).status).toBe(401)
  })

  it('answers the two helper endpoints with 200 and no body', async () => {
    const a = await call('POST', q('/query/check_auth_for_async/'))
    expect([a.status, a.text]).toEqual([200, ''])
    const b = await call('GET', q('/query/draft_sql/'))
    expect([b.status, b.text]).toEqual([200, ''])
  })
})

describe('async queries', () => {
  it('moves from running to complete with results, readable by id, under the client_query_id', async () => {
    const id = `client-${uuidv4()}`
    const r = await call('POST', q('/query/'), {
      query: hogql('SELECT count() FROM events'),
      refresh: 'force_async',
      client_query_id: id,
    })
    expect(r.status).toBe(200)
    expect(r.body.query_status).toMatchObject({
      id,
      complete: false,
      error: false,
      query_async: true,
      team_id: project.id,
    })
    expect(Date.parse(r.body.query_status.expiration_time)).toBeGreaterThan(Date.now())
    const done = await until(
      () => call('GET', q(`/query/${id}/`)),
      (s) => s.body.query_status.complete === true,
    )
    expect(done.body.query_status).toMatchObject({ complete: true, error: false })
    expect(done.body.query_status.results.results).toEqual([[3]])
    expect(done.body.query_status.pickup_time).not.toBeNull()
    expect(done.body.query_status.end_time).not.toBeNull()
    // not visible from another project, even with the same id
    const elsewhere = api(burrow.url, await createTestKey(['query:read'], [other.id]))
    expect((await elsewhere('GET', `/api/projects/${other.id}/query/${id}/`)).status).toBe(404)
  })

  it('streams status changes as server-sent events until the query ends', async () => {
    const id = `sse-${uuidv4()}`
    await call('POST', q('/query/'), {
      query: hogql('SELECT event FROM events'),
      refresh: 'force_async',
      client_query_id: id,
    })
    const key = await createTestKey(['query:read'], [project.id])
    const res = await fetch(`${burrow.url}${q(`/query/${id}/`)}`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const text = await res.text()
    const events = text
      .split('\n\n')
      .filter((b) => b.startsWith('event: status'))
      .map((b) => JSON.parse(b.split('\ndata: ')[1]!).query_status)
    expect(events.length).toBeGreaterThanOrEqual(1)
    expect(events.at(-1)).toMatchObject({ id, complete: true })
  })

  it('unknown query ids are 404 and malformed ones 400', async () => {
    expect((await call('GET', q('/query/does-not-exist/'))).status).toBe(404)
    expect((await call('DELETE', q('/query/does-not-exist/'))).status).toBe(404)
    expect((await call('GET', q('/query/bad%20id/'))).status).toBe(400)
  })
})

import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { clickhouseQueryId } from '../../../src/queries/runner.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertManyMonths, running as runningIn, until } from './processes.ts'

// Query admission (issue 22): concurrency caps per key and per project, ClickHouse's per-query
// memory limit, a cancel that stops the query in ClickHouse, and HogQL that is too much to parse
// refused without the event loop stalling. Limits are set low so the tests stay small.

let burrow: RunningBurrow
/** the same project behind a 50 MB per-query memory limit (the memory-limit test) */
let lowMemory: RunningBurrow
let project: Project
const ch = () => clickhouse()

// A query that runs far longer than these tests wait (see cancel.test.ts).
const LONG = 'SELECT count() FROM events a CROSS JOIN events b CROSS JOIN events c'

beforeAll(async () => {
  burrow = await startTestBurrow({
    QUERY_MAX_CONCURRENT_PER_KEY: '1',
    QUERY_MAX_CONCURRENT_PER_PROJECT: '2',
    // LONG's cross join grows toward a few hundred MB: under a low limit it could end by itself
    // while a test counts it as running
    QUERY_MAX_MEMORY_BYTES: String(2 * 1024 * 1024 * 1024),
    // well below the heavy query's parse (below), well above a loaded machine's ordinary compile
    QUERY_COMPILE_TIMEOUT_MS: '4000',
    API_RATE_LIMIT_PER_MINUTE: '100000',
  })
  lowMemory = await startTestBurrow({
    QUERY_MAX_MEMORY_BYTES: String(50 * 1024 * 1024),
    API_RATE_LIMIT_PER_MINUTE: '100000',
  })
  project = await createTestProject('admission')
  await insertManyMonths(ch(), project.id)
})

const keyFor = () => createTestKey(['query:read'], [project.id])
const path = () => `/api/projects/${project.id}/query/`

const running = (queryId: string) => runningIn(ch(), queryId)

/** Starts LONG in the background with `call` and waits until ClickHouse runs it. */
async function startLong(call: ReturnType<typeof api>): Promise<string> {
  const id = `long-${uuidv4()}`
  const r = await call('POST', path(), {
    query: { kind: 'HogQLQuery', query: LONG },
    refresh: 'force_async',
    client_query_id: id,
  })
  expect(r.status, r.text).toBe(200)
  expect(await until(() => running(clickhouseQueryId(project.id, id)))).toBe(true)
  return id
}

const quick = { query: { kind: 'HogQLQuery', query: 'SELECT 1' }, refresh: 'force_blocking' }

describe('concurrency caps', () => {
  it('refuses a key’s query over its cap with 429, then a project’s, and lets them in once one ends', async () => {
    const a = api(burrow.url, await keyFor())
    const b = api(burrow.url, await keyFor())
    const c = api(burrow.url, await keyFor())
    const first = await startLong(a)
    const refused = await a('POST', path(), quick)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('1')
    expect(refused.body).toMatchObject({ type: 'throttled_error', code: 'concurrency_limit' })
    expect(refused.body.detail).toContain('personal API key')
    // another key of the project may still run
    expect((await b('POST', path(), quick)).status).toBe(200)
    const second = await startLong(b)
    const projectFull = await c('POST', path(), quick)
    expect(projectFull.status).toBe(429)
    expect(projectFull.body.detail).toContain('project')
    expect((await a('DELETE', `${path()}${first}/`)).status).toBe(204)
    expect((await b('DELETE', `${path()}${second}/`)).status).toBe(204)
    // the slots came back with the cancelled queries
    expect(await until(async () => (await a('POST', path(), quick)).status === 200, 5_000)).toBe(true)
    expect((await c('POST', path(), quick)).status).toBe(200)
  })
})

describe('cancel', () => {
  it('answers 204 only once ClickHouse no longer runs the query', async () => {
    const call = api(burrow.url, await keyFor())
    const id = await startLong(call)
    const del = await call('DELETE', `${path()}${id}/`)
    expect(del.status).toBe(204)
    // no waiting here: the DELETE itself waited for system.processes
    expect(await running(clickhouseQueryId(project.id, id))).toBe(false)
  })

  it('stops a blocking query in ClickHouse when its client goes away', async () => {
    const key = await keyFor()
    const id = `blocking-${uuidv4()}`
    const left = new AbortController()
    const pending = fetch(`${burrow.url}${path()}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query: LONG }, client_query_id: id }),
      signal: left.signal,
    }).catch(() => undefined)
    const chId = clickhouseQueryId(project.id, id)
    expect(await until(() => running(chId))).toBe(true)
    left.abort()
    await pending
    expect(await until(async () => !(await running(chId)), 15_000)).toBe(true)
    // and its slot is free again
    expect(
      await until(async () => (await api(burrow.url, key)('POST', path(), quick)).status === 200, 5_000),
    ).toBe(true)
  })
})

describe('memory limit', () => {
  it('stops a query at QUERY_MAX_MEMORY_BYTES with a typed 400 that quotes no data', async () => {
    const call = api(lowMemory.url, await keyFor())
    const r = await call('POST', path(), {
      query: {
        kind: 'HogQLQuery',
        query: 'SELECT groupArray(concat(a.distinct_id, b.distinct_id)) FROM events a CROSS JOIN events b',
      },
      refresh: 'force_blocking',
    })
    expect(r.status, r.text).toBe(400)
    expect(r.body).toMatchObject({ type: 'validation_error', code: 'query_memory_limit', attr: 'query' })
    expect(r.text).not.toMatch(/d\d+/)
  })
})

describe('HogQL parse bounds', () => {
  it('refuses nesting past the bound at once, before any parser sees it', async () => {
    const call = api(burrow.url, await keyFor())
    const deep = `SELECT ${'('.repeat(40)}1${')'.repeat(40)}`
    const r = await call('POST', path(), { query: { kind: 'HogQLQuery', query: deep } })
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ code: 'query_too_complex', attr: 'query' })
    const trends = await call('POST', path(), {
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: 'e' }],
        properties: [{ type: 'hogql', key: `${'('.repeat(40)}1${')'.repeat(40)}` }],
      },
    })
    expect(trends.status).toBe(400)
    expect(trends.body.code).toBe('query_too_complex')
  })

  it('refuses a query the parser cannot finish within the budget, while /_health keeps answering', async () => {
    const call = api(burrow.url, await keyFor())
    // 10,000 select items (under the cheap bound of 20,000): the grammar's parser needs ~3 s for
    // 3,000 on a quiet machine and more than linear time beyond. OFFSET is outside the fast parser's
    // subset (src/hogql/fast-parse.ts), so the statement goes to the grammar's parser.
    const heavy = `SELECT ${Array.from({ length: 10_000 }, (_, i) => `e${i}`).join(', ')} FROM events LIMIT 1 OFFSET 1`
    const answer = call('POST', path(), { query: { kind: 'HogQLQuery', query: heavy } })
    const latencies: number[] = []
    for (let i = 0; i < 10; i++) {
      const t0 = performance.now()
      const h = await fetch(`${burrow.url}/_health`)
      latencies.push(performance.now() - t0)
      expect(h.status).toBe(200)
      await new Promise((r) => setTimeout(r, 100))
    }
    const r = await answer
    expect(r.status).toBe(400)
    expect(r.body).toMatchObject({ code: 'query_too_complex' })
    console.log(`/_health during the heavy parse: max ${Math.round(Math.max(...latencies))} ms`)
    // the replacement worker compiles the next query
    expect((await call('POST', path(), quick)).status).toBe(200)
  })
})

// Person endpoints over HTTP against the real ClickHouse. Data: dataset.ts. Persons A..F were created
// 2024-02-01..06 08:00:00.250 UTC (A first), with email <name>@example.com, rank 1..6 and plan
// pro/free/pro/free/pro/free; F also holds the distinct id `frank-anon`.
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { api, createTestKey, createTestProject, ownDatabase, startTestBurrow } from '../../harness/index.ts'
import { insertFunnelDataset, P } from './dataset.ts'

let project: Project
let doomed: Project
let other: Project
let call: ReturnType<typeof api>
let noScope: ReturnType<typeof api>
let ch: ClickHouseClient

beforeAll(async () => {
  // a database of its own: delete_events mutates `events`, which rewrites every part of the table
  const own = await ownDatabase('burrow_persons')
  ch = own.client
  const burrow = await startTestBurrow({
    API_RATE_LIMIT_PER_MINUTE: '100000',
    CLICKHOUSE_DATABASE: own.database,
  })
  project = await createTestProject('persons')
  doomed = await createTestProject('persons delete')
  other = await createTestProject('persons other')
  call = api(burrow.url, await createTestKey(['person:write'], [project.id, doomed.id, other.id]))
  noScope = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  await insertFunnelDataset(ch, project.id)
  await insertFunnelDataset(ch, doomed.id)
})

const url = (path: string, id = project.id) => `/api/environments/${id}${path}`
const uuids = (people: { id: string }[]) => people.map((p) => p.id)

describe('GET /persons/', () => {
  it('lists persons newest first in the paged envelope with PostHog person fields', async () => {
    const r = await call('GET', url('/persons/'))
    expect(r.status, r.text).toBe(200)
    expect(r.body.count).toBe(6)
    expect(uuids(r.body.results)).toEqual([P.F, P.E, P.D, P.C, P.B, P.A])
    expect(r.body.results[5]).toEqual({
      id: P.A,
      uuid: P.A,
      name: 'alice@example.com',
      distinct_ids: ['alice'],
      properties: { email: 'alice@example.com', rank: 1, plan: 'pro' },
      created_at: '2024-02-01T08:00:00.250Z',
      is_identified: true,
    })
    expect(r.body.next).toBeNull()
  })

  it('pages with limit/offset', async () => {
    const r = await call('GET', url('/persons/?limit=2&offset=2'))
    expect(uuids(r.body.results)).toEqual([P.D, P.C])
    expect(r.body.count).toBe(6)
    expect(r.body.next).toContain('offset=4')
    expect(r.body.previous).toContain('offset=0')
  })

  it('searches by distinct id, email, property and uuid', async () => {
    const q = async (qs: string) => uuids((await call('GET', url(`/persons/?${qs}`))).body.results).sort()
    expect(await q('search=ALI')).toEqual([P.A])
    expect(await q('search=frank-anon')).toEqual([P.F])
    expect(await q(`search=${P.C}`)).toEqual([P.C])
    expect(await q('distinct_id=frank-anon')).toEqual([P.F])
    expect(await q('email=bob%40example.com')).toEqual([P.B])
    const props = (f: unknown) => `properties=${encodeURIComponent(JSON.stringify(f))}`
    expect(await q(props([{ key: 'plan', value: 'free' }]))).toEqual([P.B, P.D, P.F].sort())
    expect(await q(props([{ key: 'rank', value: 4, operator: 'gt' }]))).toEqual([P.E, P.F].sort())
    expect(await q(props([{ key: 'email', value: 'ERIN', operator: 'icontains' }]))).toEqual([P.E])
    expect(await q('search=nobody-like-this')).toEqual([])
  })

  it('needs person:read and stays inside the project', async () => {
    expect((await noScope('GET', url('/persons/'))).status).toBe(403)
    const r = await call('GET', url('/persons/', other.id))
    expect(r.body).toMatchObject({ count: 0, results: [] })
    expect((await call('GET', url(`/persons/${P.A}/`, other.id))).status).toBe(404)
  })
})

describe('GET /persons/{id}/', () => {
  it('retrieves by uuid, 404 otherwise', async () => {
    const r = await call('GET', url(`/persons/${P.F}/`))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      id: P.F,
      name: 'frank@example.com',
      distinct_ids: ['frank', 'frank-anon'],
    })
    expect((await call('GET', url(`/persons/${randomUUID()}/`))).status).toBe(404)
    expect((await call('GET', url('/persons/not-a-uuid/'))).status).toBe(404)
  })
})

describe('GET /persons/values/', () => {
  it('returns property values with counts, most common first', async () => {
    const r = await call('GET', url('/persons/values/?key=plan'))
    expect(r.status).toBe(200)
    expect(r.body).toEqual([
      { name: 'free', count: 3 },
      { name: 'pro', count: 3 },
    ])
    expect((await call('GET', url('/persons/values/?key=plan&value=FR'))).body).toEqual([
      { name: 'free', count: 3 },
    ])
    // numbers come back as numbers, as PostHog converts them
    const ranks = (await call('GET', url('/persons/values/?key=rank'))).body
    expect(ranks).toHaveLength(6)
    expect(ranks[0]).toEqual({ name: 1, count: 1 })
    expect((await noScope('GET', url('/persons/values/?key=plan'))).status).toBe(403)
  })
})

describe('DELETE /persons/{id}/', () => {
  async function eventCount(personIds: string[]): Promise<number> {
    const rs = await ch.query({
      query: `SELECT count() AS c FROM events WHERE team_id = ${doomed.id}
              AND person_id IN (${personIds.map((p) => `toUUID('${p}')`).join(', ')})`,
      format: 'JSONEachRow',
    })
    return Number((await rs.json<{ c: string }>())[0]!.c)
  }

  it('deletes the person (version + 100 delete rows) and keeps the events by default', async () => {
    const r = await call('DELETE', url(`/persons/${P.B}/`, doomed.id))
    expect(r.status).toBe(202)
    expect((await call('GET', url(`/persons/${P.B}/`, doomed.id))).status).toBe(404)
    expect((await call('GET', url('/persons/?distinct_id=bob', doomed.id))).body.count).toBe(0)
    const rs = await ch.query({
      query: `SELECT max(version) AS v FROM person WHERE team_id = ${doomed.id} AND id = toUUID('${P.B}')`,
      format: 'JSONEachRow',
    })
    expect(Number((await rs.json<{ v: string }>())[0]!.v)).toBe(101)
    expect(await eventCount([P.B])).toBe(3)
    expect((await call('DELETE', url(`/persons/${P.B}/`, doomed.id))).status).toBe(404)
  })

  it('with delete_events=true also deletes events, those stamped with merged ids included', async () => {
    expect(await eventCount([P.F, P.OLD_F])).toBe(2)
    const r = await call('DELETE', url(`/persons/${P.F}/?delete_events=true`, doomed.id))
    expect(r.status).toBe(202)
    // the mutation runs in the background
    const deadline = Date.now() + 15_000
    while ((await eventCount([P.F, P.OLD_F])) > 0 && Date.now() < deadline)
      await new Promise((res) => setTimeout(res, 200))
    expect(await eventCount([P.F, P.OLD_F])).toBe(0)
    expect(await eventCount([P.A])).toBe(3)
  })

  it('needs person:write and cannot touch another project', async () => {
    const readOnly = noScope
    expect((await readOnly('DELETE', url(`/persons/${P.A}/`))).status).toBe(403)
    expect((await call('DELETE', url(`/persons/${P.A}/`, other.id))).status).toBe(404)
    expect((await call('GET', url(`/persons/${P.A}/`))).status).toBe(200)
  })
})

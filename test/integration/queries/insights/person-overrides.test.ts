/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// The override-free fast path (src/queries/person-overrides.ts): a project without merged persons gets
// SQL without the person_overrides join, and the first query after a merge goes through it again.
//
//   person   UTC time              event
//   A (u1)   2024-01-01 10:00      $pageview
//   C (u3)   2024-01-01 11:00      $pageview
//   A (u1)   2024-01-02 10:00      $pageview
//   C (u3)   2024-01-02 11:00      $pageview
//   C (u3)   2024-01-02 12:00      signup
//
// Before the merge A and C are two persons; after "C merged into A" they are one.
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../../harness/index.ts'
import { insertEvents, insertOverrides } from '../../hogql/fixtures.ts'

const A = '00000000-0000-4000-8000-0000000000a1'
const C = '00000000-0000-4000-8000-0000000000c1'
const RANGE = { date_from: '2024-01-01', date_to: '2024-01-02' }

let query: (q: Record<string, unknown>) => Promise<{ status: number; body: any }>
let team: number
let otherTeam: number

beforeAll(async () => {
  const burrow = await startTestBurrow()
  const project = await createTestProject('person overrides fast path')
  const other = await createTestProject('person overrides fast path (other)')
  team = project.id
  otherTeam = other.id
  const call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  query = (q) => call('POST', `/api/projects/${project.id}/query/`, { query: q, refresh: 'force_blocking' })
  const ev = (person: string, distinctId: string, event: string, timestamp: string) => ({
    team,
    uuid: uuidv4(),
    event,
    distinctId,
    personId: person,
    timestamp,
    properties: {},
  })
  await insertEvents(clickhouse(), [
    ev(A, 'u1', '$pageview', '2024-01-01 10:00:00.000'),
    ev(C, 'u3', '$pageview', '2024-01-01 11:00:00.000'),
    ev(A, 'u1', '$pageview', '2024-01-02 10:00:00.000'),
    ev(C, 'u3', '$pageview', '2024-01-02 11:00:00.000'),
    ev(C, 'u3', 'signup', '2024-01-02 12:00:00.000'),
  ])
  // another project's merge says nothing about this one
  await insertOverrides(clickhouse(), [{ team: otherTeam, oldPersonId: C, overridePersonId: A, version: 1 }])
})

const dau = { kind: 'TrendsQuery', series: [{ event: '$pageview', math: 'dau' }], dateRange: RANGE }
const stickiness = { kind: 'StickinessQuery', series: [{ event: '$pageview' }], dateRange: RANGE }
const funnel = {
  kind: 'FunnelsQuery',
  series: [
    { kind: 'EventsNode', event: '$pageview' },
    { kind: 'EventsNode', event: 'signup' },
  ],
  dateRange: RANGE,
}
const persons = { kind: 'HogQLQuery', query: 'SELECT count(DISTINCT person_id) FROM events' }

async function answers() {
  const out: Record<string, { results: any; sql: string }> = {}
  for (const [name, q] of Object.entries({ dau, stickiness, funnel, persons })) {
    const r = await query(q)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    out[name] = { results: r.body.results, sql: r.body.clickhouse }
  }
  return out
}

describe('person_id without overrides', () => {
  it('leaves the override join out while the project has no merges, and takes it again after one', async () => {
    const before = await answers()
    expect(before.dau!.results[0].data).toEqual([2, 2])
    expect(before.stickiness!.results[0].data).toEqual([0, 2])
    expect(before.funnel!.results.map((s: any) => s.count)).toEqual([2, 1])
    expect(before.persons!.results).toEqual([[2]])
    for (const { sql } of Object.values(before)) expect(sql).not.toContain('person_overrides')

    await insertOverrides(clickhouse(), [{ team, oldPersonId: C, overridePersonId: A, version: 1 }])

    const after = await answers()
    expect(after.dau!.results[0].data).toEqual([1, 1])
    expect(after.stickiness!.results[0].data).toEqual([0, 1])
    expect(after.funnel!.results.map((s: any) => s.count)).toEqual([1, 1])
    expect(after.persons!.results).toEqual([[1]])
    for (const { sql } of Object.values(after)) expect(sql).toContain('person_overrides')
  })
})

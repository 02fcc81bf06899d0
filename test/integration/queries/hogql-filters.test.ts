// HogQLQuery `filters` (PostHog's HogQLFilters) replace the query's `{filters}` placeholder, through
// the HTTP query endpoint. Cases and expected counts from PostHog's posthog/hogql/test/test_query.py
// (test_hogql_query_filters, test_hogql_query_filters_alias, ..._double_error, ..._empty_true).
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertEvents } from '../hogql/fixtures.ts'

let project: Project
let call: ReturnType<typeof api>
const RANDOM = `RANDOM_TEST_ID::${uuidv4()}`
const PERSON = '00000000-0000-4000-8000-000000000001'
const DAY = 86_400_000
const text = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

beforeAll(async () => {
  const burrow = await startTestBurrow()
  project = await createTestProject('hogql filters')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  const ev = (distinctId: string, ts: string, properties: Record<string, unknown>) => ({
    team: project.id,
    uuid: uuidv4(),
    event: 'random event',
    distinctId,
    personId: PERSON,
    timestamp: ts,
    properties,
  })
  await insertEvents(clickhouse(), [
    // PostHog's _create_random_events: two events of 'bla' carrying the random id
    ev('bla', '2020-01-10 00:00:00', { random_prop: "don't include", random_uuid: RANDOM, index: 0 }),
    ev('bla', '2020-01-10 00:00:00', { random_prop: "don't include", random_uuid: RANDOM, index: 1 }),
    // and ten of the random id as distinct id, indexes 0-9
    ...Array.from({ length: 10 }, (_, i) =>
      ev(RANDOM, '2020-01-10 00:00:00', { index: i, user_key: RANDOM }),
    ),
    // for relative dates: one a day ago, one a month ago
    ev('recent', text(Date.now() - DAY), {}),
    ev('recent', text(Date.now() - 30 * DAY), {}),
  ])
})

const run = (query: string, filters?: unknown, values?: Record<string, unknown>) =>
  call('POST', `/api/projects/${project.id}/query/`, {
    query: { kind: 'HogQLQuery', query, filters, values },
    refresh: 'force_blocking',
  })

describe('HogQLQuery filters replace {filters}', () => {
  const query = 'SELECT event, distinct_id from events WHERE distinct_id={distinct_id} and {filters}'
  const properties = [{ key: 'index', operator: 'exact', value: '4', type: 'event' }]

  it('applies property filters and the date range (PostHog test_hogql_query_filters)', async () => {
    const values = { distinct_id: RANDOM }
    const props = await run(query, { properties }, values)
    expect(props.status).toBe(200)
    expect(props.body.results).toHaveLength(1)
    const outside = await run(
      query,
      { properties, dateRange: { date_from: '2020-01-01', date_to: '2020-01-02' } },
      values,
    )
    expect(outside.body.results).toHaveLength(0)
    const inside = await run(
      query,
      { properties, dateRange: { date_from: '2020-01-01', date_to: '2020-02-02' } },
      values,
    )
    expect(inside.body.results).toHaveLength(1)
  })

  it('reads the fields of an aliased events table (test_hogql_query_filters_alias)', async () => {
    const r = await run('SELECT event, distinct_id from events e WHERE {filters}', {
      properties: [{ key: 'random_uuid', operator: 'exact', value: RANDOM, type: 'event' }],
    })
    expect(r.status).toBe(200)
    expect(r.body.results).toHaveLength(2)
  })

  it('counts relative dates back from now: date_from -7d keeps the event of a day ago', async () => {
    const r = await run("SELECT count() FROM events WHERE distinct_id = 'recent' AND {filters}", {
      dateRange: { date_from: '-7d' },
    })
    expect(r.body.results).toEqual([[1]])
    const all = await run("SELECT count() FROM events WHERE distinct_id = 'recent' AND {filters}", {
      dateRange: { date_from: 'all' },
      filterTestAccounts: true,
    })
    expect(all.body.results).toEqual([[2]])
  })

  it('reads {filters} as true without filters (test_hogql_query_filters_empty_true)', async () => {
    const r = await run("SELECT count() FROM events WHERE distinct_id = 'recent' AND {filters}", {})
    expect(r.body.results).toEqual([[2]])
  })

  it('refuses filters given both ways, and {filters} outside a SELECT from events', async () => {
    const both = await run('SELECT event FROM events WHERE {filters}', { properties }, { filters: true })
    expect(both.status).toBe(400)
    expect(both.body.detail).toMatch(/'filters' both as a placeholder value and as filters/)
    const persons = await run('SELECT id FROM persons WHERE {filters}', { properties })
    expect(persons.status).toBe(400)
    expect(persons.body.detail).toMatch(/does not select from the events table/)
  })
})

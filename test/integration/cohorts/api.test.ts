import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { clickhouse, createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'
import { ago, People } from './helpers.ts'

// The cohort API (PostHog's posthog/api/test/test_cohort.py cases where it has them): refusals
// that name the field, person lists, static members, and cohorts in HogQL, insights and persons.

let env: Env
let project: Project
let people: People
const ch = clickhouse()
const base = () => `/api/projects/${project.id}/cohorts/`

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const calculated = (id: number) =>
  until(`cohort ${id}`, async () => {
    const r = await env.call('GET', `${base()}${id}/`)
    return r.body.is_calculating ? undefined : r.body
  })

async function create(body: Record<string, unknown>) {
  const r = await env.call('POST', base(), body)
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return calculated(r.body.id)
}

const chrome = {
  properties: { type: 'OR', values: [{ key: '$os', value: 'Chrome', type: 'person', operator: 'exact' }] },
}

beforeAll(async () => {
  env = await managementEnv()
  project = await createTestProject('cohort api')
  people = new People(ch, project.id)
  await people.person('fake', {})
  for (let i = 0; i < 150; i++)
    await people.person(`person_${i}`, { $os: 'Chrome', email: `p${i}@example.com` })
  await people.person('target', { $os: 'Chrome', $browser: 'Safari' })
  people.event('person_1', '$pageview', ago({ days: 1 }))
  people.event('person_2', '$pageview', ago({ days: 1 }))
  people.event('target', '$pageview', ago({ days: 1 }))
  await people.flush()
})

describe('cohort API', () => {
  it('creates, lists and retrieves with PostHog fields, and refuses DELETE', async () => {
    const c = await create({ name: 'chrome', filters: chrome })
    expect(c).toMatchObject({
      name: 'chrome',
      is_static: false,
      deleted: false,
      errors_calculating: 0,
      count: 151,
    })
    expect(c.last_calculation).toEqual(expect.any(String))
    expect(c.created_by.id).toBe(1)
    const list = await env.call('GET', base())
    expect(list.body.results.map((x: { id: number }) => x.id)).toContain(c.id)
    expect((await env.call('DELETE', `${base()}${c.id}/`)).status).toBe(405)
  })

  it('pages its persons, filters them and exports them as CSV (PostHog test_filter_by_cohort*)', async () => {
    const c = await create({ name: 'chrome again', filters: chrome })
    const first = await env.call('GET', `${base()}${c.id}/persons/`)
    expect(first.body.results).toHaveLength(100)
    const second = await fetch(first.body.next, { headers: { authorization: `Bearer ${await keyOf()}` } })
    expect(((await second.json()) as { results: unknown[] }).results).toHaveLength(51)
    const props = encodeURIComponent(JSON.stringify([{ key: '$browser', value: 'Safari', type: 'person' }]))
    expect(
      (await env.call('GET', `${base()}${c.id}/persons/?properties=${props}`)).body.results,
    ).toHaveLength(1)
    expect((await env.call('GET', `${base()}${c.id}/persons/?search=target`)).body.results).toHaveLength(1)
    const csv = await env.call('GET', `${base()}${c.id}/persons/?format=csv`)
    expect(csv.headers.get('content-type')).toContain('text/csv')
    expect(csv.text.trim().split('\n')).toHaveLength(152)
  })

  it('refuses loops, naming the field (PostHog test_creating_update_and_calculating_with_cycle)', async () => {
    const a = await create({ name: 'A', groups: [{ properties: { team_id: 5 } }] })
    const b = await create({
      name: 'B',
      groups: [{ properties: [{ type: 'cohort', value: a.id, key: 'id' }] }],
    })
    const c = await create({
      name: 'C',
      groups: [{ properties: [{ type: 'cohort', value: b.id, key: 'id' }] }],
    })
    for (const target of [c.id, a.id]) {
      const r = await env.call('PATCH', `${base()}${a.id}/`, {
        name: 'A, reloaded',
        groups: [{ properties: [{ type: 'cohort', value: target, key: 'id' }] }],
      })
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({
        type: 'validation_error',
        detail: 'Cohorts cannot reference other cohorts in a loop.',
        attr: 'filters',
      })
    }
    // C → B → A and C → A is not a loop (PostHog test_creating_update_with_non_directed_cycle)
    const ok = await env.call('PATCH', `${base()}${c.id}/`, {
      filters: {
        properties: {
          type: 'AND',
          values: [
            { key: 'id', value: b.id, type: 'cohort' },
            { key: 'id', value: a.id, type: 'cohort' },
          ],
        },
      },
    })
    expect(ok.status, JSON.stringify(ok.body)).toBe(200)
  })

  it('refuses a reference to a missing, deleted or other project’s cohort', async () => {
    const other = await createTestProject('someone else')
    const foreign = await env.call('POST', `/api/projects/${other.id}/cohorts/`, {
      name: 'theirs',
      filters: chrome,
    })
    const gone = await create({ name: 'gone', filters: chrome })
    expect((await env.call('PATCH', `${base()}${gone.id}/`, { deleted: true })).status).toBe(200)
    for (const id of [99_999_999, foreign.body.id, gone.id]) {
      const r = await env.call('POST', base(), {
        name: 'bad ref',
        filters: { properties: { type: 'AND', values: [{ key: 'id', value: id, type: 'cohort' }] } },
      })
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ detail: 'Invalid Cohort ID in filter', attr: 'filters' })
    }
  })

  it('refuses malformed filters, bad regexes and a negation alone', async () => {
    const cases: [unknown, string][] = [
      ['[Slkasd=lkxcn]', "Filters must be a dictionary with a 'properties' key."],
      [{ nope: 1 }, "Must contain a 'properties' key with type and values"],
      [
        {
          properties: {
            type: 'AND',
            values: [{ key: 'email', type: 'person', operator: 'regex', value: '(a' }],
          },
        },
        'invalid regex',
      ],
      [
        { properties: { type: 'AND', values: [{ key: 'email', type: 'person', operator: 'exact' }] } },
        'Missing required keys for person filter: value',
      ],
      [
        { properties: { type: 'AND', values: [{ key: 'x', type: 'person', value: 'y', negation: true }] } },
        'top level condition cannot be negated',
      ],
      [
        {
          properties: {
            type: 'AND',
            values: [
              {
                key: '$pageview',
                type: 'behavioral',
                value: 'performed_event_multiple',
                event_type: 'events',
                time_value: 1,
                time_interval: 'week',
                operator_value: 0,
              },
            ],
          },
        },
        'operator_value must be greater than 0',
      ],
      [
        {
          properties: {
            type: 'AND',
            values: [
              {
                key: '$pageview',
                type: 'behavioral',
                value: 'stopped_performing_event',
                event_type: 'events',
                time_value: 1,
                time_interval: 'day',
                seq_time_value: 2,
                seq_time_interval: 'day',
              },
            ],
          },
        },
        'seq_time_value must be a shorter time than time_value',
      ],
      [
        {
          properties: {
            type: 'AND',
            values: [
              {
                key: 424242,
                type: 'behavioral',
                value: 'performed_event',
                event_type: 'actions',
                time_value: 1,
                time_interval: 'day',
              },
            ],
          },
        },
        'Action 424242',
      ],
    ]
    for (const [filters, detail] of cases) {
      const r = await env.call('POST', base(), { name: 'bad', filters })
      expect(r.status, JSON.stringify(filters)).toBe(400)
      expect(r.body.attr).toBe('filters')
      expect(String(r.body.detail)).toContain(detail)
    }
  })

  it('keeps a person filter with is_set and no value (PostHog test_cohort_with_is_set_filter_missing_value)', async () => {
    const c = await create({
      name: 'has os',
      filters: {
        properties: { type: 'OR', values: [{ key: '$browser', type: 'person', operator: 'is_set' }] },
      },
    })
    expect(c.count).toBe(1)
  })

  it('makes static cohorts from person ids, adds and removes persons, and copies a dynamic one', async () => {
    const ids = ['person_1', 'person_2'].map((d) => people.ids.get(d)!)
    const s = await create({ name: 'static', is_static: true, _create_static_person_ids: ids })
    expect(s).toMatchObject({ is_static: true, count: 2 })
    const add = await env.call('PATCH', `${base()}${s.id}/add_persons_to_static_cohort/`, {
      person_ids: [people.ids.get('target')],
    })
    expect(add.body).toEqual({ success: true })
    expect((await calculated(s.id)).count).toBe(3)
    const remove = await env.call('PATCH', `${base()}${s.id}/remove_person_from_static_cohort/`, {
      person_id: ids[0],
    })
    expect(remove.status).toBe(200)
    expect((await calculated(s.id)).count).toBe(2)
    const again = await env.call('PATCH', `${base()}${s.id}/remove_person_from_static_cohort/`, {
      person_id: ids[0],
    })
    expect(again.status).toBe(404)
    const dyn = await env.call('PATCH', `${base()}${s.id}/add_persons_to_static_cohort/`, {
      person_ids: ['not-a-uuid'],
    })
    expect(dyn.body.attr).toBe('person_ids')
    // duplicate_as_static_cohort of a dynamic cohort (PostHog test_duplicating_dynamic_cohort_as_static)
    const viewed = await create({
      name: 'viewed',
      filters: {
        properties: {
          type: 'OR',
          values: [
            {
              key: '$pageview',
              event_type: 'events',
              time_value: 3,
              time_interval: 'day',
              value: 'performed_event',
              type: 'behavioral',
            },
          ],
        },
      },
    })
    expect(viewed.count).toBe(3)
    const copy = await env.call('GET', `${base()}${viewed.id}/duplicate_as_static_cohort/`)
    expect(copy.body.name).toBe('viewed (static copy)')
    expect(await calculated(copy.body.id)).toMatchObject({ is_static: true, count: 3, errors_calculating: 0 })
  })

  it('recalculates when the definition changes', async () => {
    const c = await create({ name: 'safari', filters: chrome })
    expect(c.count).toBe(151)
    const r = await env.call('PATCH', `${base()}${c.id}/`, {
      filters: {
        properties: { type: 'AND', values: [{ key: '$browser', value: 'Safari', type: 'person' }] },
      },
    })
    expect(r.body.is_calculating).toBe(true)
    expect((await calculated(c.id)).count).toBe(1)
  })

  it('is named by HogQL IN COHORT (id and name), insights, persons and breakdowns', async () => {
    const c = await create({
      name: 'safari users',
      filters: {
        properties: { type: 'AND', values: [{ key: '$browser', value: 'Safari', type: 'person' }] },
      },
    })
    const hogql = async (query: string) => {
      const r = await env.call('POST', `/api/projects/${project.id}/query/`, {
        query: { kind: 'HogQLQuery', query },
        refresh: 'force_blocking',
      })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return r.body.results
    }
    expect(await hogql(`SELECT count() FROM events WHERE person_id IN COHORT ${c.id}`)).toEqual([[1]])
    expect(await hogql(`SELECT count() FROM events WHERE person_id IN COHORT 'safari users'`)).toEqual([[1]])
    expect(await hogql(`SELECT count() FROM events WHERE person_id NOT IN COHORT ${c.id}`)).toEqual([[2]])
    const missing = await env.call('POST', `/api/projects/${project.id}/query/`, {
      query: { kind: 'HogQLQuery', query: "SELECT 1 FROM events WHERE person_id IN COHORT 'blabla'" },
    })
    expect(missing.status).toBe(400)
    expect(missing.body.detail).toContain("Could not find a cohort with the name 'blabla'")

    const trends = await env.call('POST', `/api/projects/${project.id}/query/`, {
      refresh: 'force_blocking',
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        dateRange: { date_from: '-7d' },
        trendsFilter: { display: 'ActionsBarValue' },
        properties: [{ key: 'id', value: c.id, type: 'cohort' }],
      },
    })
    expect(trends.body.results[0].aggregated_value).toBe(1)

    const broken = await env.call('POST', `/api/projects/${project.id}/query/`, {
      refresh: 'force_blocking',
      query: {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        dateRange: { date_from: '-7d' },
        trendsFilter: { display: 'ActionsBarValue' },
        breakdownFilter: { breakdown_type: 'cohort', breakdown: [c.id, 'all'] },
      },
    })
    expect(broken.status, JSON.stringify(broken.body)).toBe(200)
    const byValue = Object.fromEntries(
      broken.body.results.map((r: { breakdown_value: unknown; aggregated_value: number; label: string }) => [
        String(r.breakdown_value),
        [r.aggregated_value, r.label],
      ]),
    )
    expect(byValue).toEqual({ [String(c.id)]: [1, 'safari users'], all: [3, 'all users'] })

    const persons = await env.call('GET', `/api/projects/${project.id}/persons/?cohort=${c.id}`)
    expect(persons.body.results.map((p: { distinct_ids: string[] }) => p.distinct_ids)).toEqual([['target']])
  })

  it('refuses deleting a cohort that active flags use', async () => {
    const c = await create({ name: 'flagged', filters: chrome })
    const flag = await env.call('POST', `/api/projects/${project.id}/feature_flags/`, {
      key: `cohort-flag-${c.id}`,
      filters: { groups: [{ properties: [{ key: 'id', value: c.id, type: 'cohort' }] }] },
    })
    expect(flag.status, JSON.stringify(flag.body)).toBe(201)
    const r = await env.call('PATCH', `${base()}${c.id}/`, { deleted: true })
    expect(r.status).toBe(400)
    expect(r.body.detail).toContain('This cohort is used in 1 active feature flag(s)')
    const bad = await env.call('POST', `/api/projects/${project.id}/feature_flags/`, {
      key: `cohort-flag-missing-${c.id}`,
      filters: { groups: [{ properties: [{ key: 'id', value: 77_777_777, type: 'cohort' }] }] },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.attr).toBe('filters.groups.0.properties.0.value')
  })
})

let key: string | undefined
async function keyOf(): Promise<string> {
  const { createTestKey } = await import('../../harness/index.ts')
  key ??= await createTestKey(['*'])
  return key
}

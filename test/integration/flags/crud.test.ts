import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject } from '../../harness/index.ts'
import { flagInput, startFlagsBurrow, stopFlagsBurrows } from './helpers.ts'

let burrow: RunningBurrow
let project: Project
let other: Project
let key: string
let call: ReturnType<typeof api>
let base: string

const simple = (rollout = 100) => ({ groups: [{ properties: [], rollout_percentage: rollout }] })

beforeAll(async () => {
  burrow = await startFlagsBurrow()
  project = await createTestProject('flags crud')
  other = await createTestProject('flags crud other')
  key = await createTestKey(['feature_flag:write'])
  call = api(burrow.url, key)
  base = `/api/projects/${project.id}/feature_flags`
})
afterAll(stopFlagsBurrows)

describe('feature flag definitions API', () => {
  it('creates a flag (201) with numeric id, version 1 and the creator', async () => {
    const r = await call('POST', `${base}/`, flagInput('crud-create', simple(40), { name: 'Create me' }))
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      id: expect.any(Number),
      key: 'crud-create',
      name: 'Create me',
      active: true,
      deleted: false,
      version: 1,
      is_simple_flag: true,
      rollout_percentage: 40,
      ensure_experience_continuity: false,
      created_by: { id: 1 },
      filters: { groups: [{ properties: [], rollout_percentage: 40 }] },
    })
    const again = await call('GET', `${base}/${r.body.id}/`)
    expect(again.status).toBe(200)
    expect(again.body).toEqual(r.body)
    // the other prefix and no trailing slash reach the same flag
    const env = await call('GET', `/api/environments/${project.id}/feature_flags/${r.body.id}`)
    expect(env.body.key).toBe('crud-create')
  })

  it('numbers flags per project', async () => {
    const a = await call('POST', `${base}/`, flagInput('crud-seq-a', simple()))
    const b = await call('POST', `${base}/`, flagInput('crud-seq-b', simple()))
    expect(b.body.id).toBe(a.body.id + 1)
    const fresh = await createTestProject('flags numbering')
    const first = await call(
      'POST',
      `/api/projects/${fresh.id}/feature_flags/`,
      flagInput('crud-seq-a', simple()),
    )
    expect(first.status).toBe(201)
    expect(first.body.id).toBe(1)
  })

  it('refuses a duplicate key in the project (400 unique), allows it in another project', async () => {
    expect((await call('POST', `${base}/`, flagInput('crud-dup', simple()))).status).toBe(201)
    const dup = await call('POST', `${base}/`, flagInput('crud-dup', simple()))
    expect(dup.status).toBe(400)
    expect(dup.body).toEqual({
      type: 'validation_error',
      code: 'unique',
      detail: 'There is already a feature flag with this key.',
      attr: 'key',
    })
    const elsewhere = await call(
      'POST',
      `/api/projects/${other.id}/feature_flags/`,
      flagInput('crud-dup', simple()),
    )
    expect(elsewhere.status).toBe(201)
  })

  it('refuses concurrent creates of one key except one', async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => call('POST', `${base}/`, flagInput('crud-race', simple()))),
    )
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400])
  })

  it('answers 400 for invalid definitions', async () => {
    const variants = (a: number, b: number) => ({
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: a },
          { key: 'b', rollout_percentage: b },
        ],
      },
    })
    const sum = await call('POST', `${base}/`, flagInput('crud-bad-sum', variants(50, 40)))
    expect(sum.status).toBe(400)
    expect(sum.body.type).toBe('validation_error')
    expect(sum.body.attr).toMatch(/^filters\.multivariate/)
    expect(sum.body.detail).toContain('sum to 100')
    expect((await call('POST', `${base}/`, flagInput('crud-ok-sum', variants(50, 50)))).status).toBe(201)

    const cases: [string, unknown][] = [
      ['bad key', flagInput('foo bar', simple())],
      ['no key', { name: 'x', filters: simple() }],
      ['rollout over 100', flagInput('crud-bad-rollout', simple(120))],
      [
        'unknown operator',
        flagInput('crud-bad-op', { groups: [{ properties: [{ key: 'a', operator: 'nope', value: 1 }] }] }),
      ],
      [
        'gt needs a string',
        flagInput('crud-bad-gt', { groups: [{ properties: [{ key: 'a', operator: 'gt', value: 5 }] }] }),
      ],
      [
        'variant override unknown',
        flagInput('crud-bad-override', { groups: [{ properties: [], variant: 'zzz' }] }),
      ],
      ['no condition set', flagInput('crud-no-groups', { groups: [] })],
    ]
    for (const [name, body] of cases) {
      const r = await call('POST', `${base}/`, body)
      expect(r.status, name).toBe(400)
      expect(r.body.type, name).toBe('validation_error')
    }
  })

  it('patches fields, bumps the version, keeps keys unique', async () => {
    const created = (await call('POST', `${base}/`, flagInput('crud-patch', simple(10)))).body
    const renamed = await call('PATCH', `${base}/${created.id}/`, { name: 'Renamed', active: false })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: 'Renamed', active: false, version: 2, key: 'crud-patch' })
    const refiltered = await call('PATCH', `${base}/${created.id}/`, { filters: simple(75) })
    expect(refiltered.body).toMatchObject({ version: 3, rollout_percentage: 75, name: 'Renamed' })
    // PostHog keeps the stored filters when a PATCH's filters has no groups
    const noGroups = await call('PATCH', `${base}/${created.id}/`, { filters: { payloads: { true: 'x' } } })
    expect(noGroups.body.filters.groups).toEqual([{ properties: [], rollout_percentage: 75 }])

    await call('POST', `${base}/`, flagInput('crud-taken', simple()))
    const clash = await call('PATCH', `${base}/${created.id}/`, { key: 'crud-taken' })
    expect(clash.status).toBe(400)
    expect(clash.body.code).toBe('unique')
    const rekeyed = await call('PATCH', `${base}/${created.id}/`, { key: 'crud-patch-2' })
    expect(rekeyed.body.key).toBe('crud-patch-2')
    // the old key is free again
    expect((await call('POST', `${base}/`, flagInput('crud-patch', simple()))).status).toBe(201)
    const bad = await call('PATCH', `${base}/${created.id}/`, {
      filters: { groups: [{ rollout_percentage: 101 }] },
    })
    expect(bad.status).toBe(400)
    expect((await call('PATCH', `${base}/999999/`, { name: 'x' })).status).toBe(404)
    // PUT replaces the whole definition: fields left out go back to their defaults
    const put = await call('PUT', `${base}/${created.id}/`, flagInput('crud-patch-2', simple(5)))
    expect(put.body).toMatchObject({ name: 'crud-patch-2', active: true, rollout_percentage: 5 })
    expect(put.body.version).toBe(rekeyed.body.version + 1)
  })

  it('soft deletes with PATCH deleted:true, answers 405 to DELETE', async () => {
    const created = (await call('POST', `${base}/`, flagInput('crud-delete', simple()))).body
    const del = await call('DELETE', `${base}/${created.id}/`)
    expect(del.status).toBe(405)
    expect((await call('GET', `${base}/${created.id}/`)).body.deleted).toBe(false)

    const soft = await call('PATCH', `${base}/${created.id}/`, { deleted: true })
    expect(soft.body).toMatchObject({ deleted: true, version: 2 })
    const list = await call('GET', `${base}/?limit=1000`)
    expect(list.body.results.map((f: { key: string }) => f.key)).not.toContain('crud-delete')
    // a deleted flag's key may be used again, and the deleted flag cannot be restored over it
    const reuse = await call('POST', `${base}/`, flagInput('crud-delete', simple()))
    expect(reuse.status).toBe(201)
    const restore = await call('PATCH', `${base}/${created.id}/`, { deleted: false })
    expect(restore.status).toBe(400)
    expect(restore.body.code).toBe('unique')
  })

  it('lists non-deleted flags newest first with the paging envelope', async () => {
    const fresh = await createTestProject('flags list')
    const listBase = `/api/projects/${fresh.id}/feature_flags`
    for (const k of ['l-one', 'l-two', 'l-three']) await call('POST', `${listBase}/`, flagInput(k, simple()))
    const page1 = await call('GET', `${listBase}/?limit=2`)
    expect(page1.body).toMatchObject({ count: 3, previous: null })
    expect(page1.body.results.map((f: { key: string }) => f.key)).toEqual(['l-three', 'l-two'])
    const next = new URL(page1.body.next)
    const page2 = await call('GET', `${next.pathname}${next.search}`)
    expect(page2.body.results.map((f: { key: string }) => f.key)).toEqual(['l-one'])
    const searched = await call('GET', `${listBase}/?search=TWO`)
    expect(searched.body.results.map((f: { key: string }) => f.key)).toEqual(['l-two'])
    expect((await call('GET', `${listBase}/?limit=0`)).status).toBe(400)
  })

  it('checks scopes and project access', async () => {
    const reader = api(burrow.url, await createTestKey(['feature_flag:read']))
    expect((await reader('GET', `${base}/`)).status).toBe(200)
    const denied = await reader('POST', `${base}/`, flagInput('crud-scope', simple()))
    expect(denied.status).toBe(403)
    expect(denied.body.detail).toContain('feature_flag:write')
    expect((await api(burrow.url, null)('GET', `${base}/`)).status).toBe(401)
    const wrongScope = api(burrow.url, await createTestKey(['query:read']))
    expect((await wrongScope('GET', `${base}/`)).status).toBe(403)
    const otherOnly = api(burrow.url, await createTestKey(['feature_flag:read'], [other.id]))
    expect((await otherOnly('GET', `${base}/`)).status).toBe(404)
  })

  it('serves definitions for local evaluation by project token, with an ETag', async () => {
    const fresh = await createTestProject('flags local eval')
    const localBase = `/api/projects/${fresh.id}/feature_flags`
    await call(
      'POST',
      `${localBase}/`,
      flagInput('le-on', simple(30), { filters: { ...simple(30), payloads: { true: { a: 1 } } } }),
    )
    await call('POST', `${localBase}/`, flagInput('le-off', simple(), { active: false }))
    const gone = (await call('POST', `${localBase}/`, flagInput('le-gone', simple()))).body
    await call('PATCH', `${localBase}/${gone.id}/`, { deleted: true })

    const reader = await createTestKey(['feature_flag:read'])
    const r = await api(burrow.url, reader)('GET', `/flags/definitions?token=${fresh.api_token}&send_cohorts`)
    expect(r.status).toBe(200)
    expect(r.body.flags.map((f: { key: string }) => f.key).sort()).toEqual(['le-off', 'le-on'])
    const on = r.body.flags.find((f: { key: string }) => f.key === 'le-on')
    expect(on.filters.payloads).toEqual({ true: '{"a":1}' })
    expect(r.body).toMatchObject({ group_type_mapping: {}, cohorts: {} })

    const etag = r.headers.get('etag')
    expect(etag).toBeTruthy()
    const same = await api(burrow.url, reader)(
      'GET',
      `/flags/definitions?token=${fresh.api_token}`,
      undefined,
      {
        'if-none-match': etag!,
      },
    )
    expect(same.status).toBe(304)
    const legacy = await api(burrow.url, reader)(
      'GET',
      `/api/feature_flag/local_evaluation?token=${fresh.api_token}`,
    )
    expect(legacy.body.flags).toHaveLength(2)
    const scoped = await api(burrow.url, reader)('GET', `${localBase}/local_evaluation/`)
    expect(scoped.body.flags).toHaveLength(2)

    expect((await api(burrow.url, reader)('GET', '/flags/definitions?token=phc_nope')).status).toBe(401)
    expect((await api(burrow.url, null)('GET', `/flags/definitions?token=${fresh.api_token}`)).status).toBe(
      401,
    )
    const noScope = await createTestKey(['query:read'])
    expect(
      (await api(burrow.url, noScope)('GET', `/flags/definitions?token=${fresh.api_token}`)).status,
    ).toBe(403)
    // Another project's valid token and an invalid one get the same answer: no token oracle.
    const elsewhere = await createTestKey(['feature_flag:read'], [other.id])
    const notYours = await api(burrow.url, elsewhere)('GET', `/flags/definitions?token=${fresh.api_token}`)
    const notValid = await api(burrow.url, elsewhere)('GET', '/flags/definitions?token=phc_nope')
    expect(notYours.status).toBe(401)
    expect(notYours.text).toBe(notValid.text)
    expect(notYours.body).toEqual({
      type: 'authentication_error',
      code: 'invalid_api_key',
      detail: 'Project API key invalid.',
      attr: null,
    })
  })

  it('summarizes usage from $feature_flag_called events and $feature/ properties', async () => {
    const ch = clickhouse()
    const created = (await call('POST', `${base}/`, flagInput('crud-usage', simple()))).body
    const now = Date.now()
    const ts = new Date(now).toISOString().replace('T', ' ').slice(0, 19)
    const persons = [randomUUID(), randomUUID()]
    const event = (name: string, props: Record<string, string>, person: string) => ({
      team_id: project.id,
      uuid: randomUUID(),
      event: name,
      distinct_id: person,
      person_id: person,
      timestamp: ts,
      properties: JSON.stringify(props),
    })
    const called = (response: string, person: string) =>
      event('$feature_flag_called', { $feature_flag: 'crud-usage', $feature_flag_response: response }, person)
    await ch.insert({
      table: 'events',
      format: 'JSONEachRow',
      values: [
        called('true', persons[0]!),
        called('true', persons[0]!),
        called('false', persons[1]!),
        called('true', persons[1]!),
        event(
          '$feature_flag_called',
          { $feature_flag: 'another-flag', $feature_flag_response: 'true' },
          persons[0]!,
        ),
        event('$pageview', { '$feature/crud-usage': 'true' }, persons[0]!),
      ],
    })
    const r = await call('GET', `${base}/${created.id}/usage/?days=7`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      flag_id: created.id,
      key: 'crud-usage',
      called: { calls: 4, by_variant: { true: 3, false: 1 } },
      property: { calls: 1, by_variant: { true: 1 } },
    })
    const today = new Date(now).toISOString().slice(0, 10)
    expect(r.body.daily).toContainEqual({
      day: today,
      source: 'called',
      variant: 'true',
      calls: 3,
      unique_persons: 2,
    })
    expect((await call('GET', `${base}/${created.id}/usage/?days=0`)).status).toBe(400)
  })
})

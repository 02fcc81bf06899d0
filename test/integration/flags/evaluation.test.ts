import { randomUUID } from 'node:crypto'
import LZString from 'lz-string'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { flagDefinitionSchema } from '../../../src/flags/definition.ts'
import { FlagStore } from '../../../src/flags/definition-store.ts'
import { api, clickhouse, createTestKey, createTestProject, nats } from '../../harness/index.ts'
import {
  DECIDE_REMOTE_CONFIG,
  flagInput,
  insertGroup,
  insertPerson,
  post,
  startFlagsBurrow,
  stopFlagsBurrows,
} from './helpers.ts'

let burrow: RunningBurrow
let call: ReturnType<typeof api>
const ch = clickhouse()

beforeAll(async () => {
  burrow = await startFlagsBurrow()
  call = api(burrow.url, await createTestKey(['feature_flag:write']))
})
afterAll(stopFlagsBurrows)

async function projectWith(name: string, flags: Record<string, unknown>[]): Promise<Project> {
  const project = await createTestProject(name)
  for (const f of flags) {
    const r = await call('POST', `/api/projects/${project.id}/feature_flags/`, f)
    if (r.status !== 201) throw new Error(`flag ${JSON.stringify(f)}: ${r.status} ${JSON.stringify(r.body)}`)
  }
  return project
}

const always = (properties: unknown[] = []) => ({ groups: [{ properties, rollout_percentage: 100 }] })

describe('response shapes', () => {
  let project: Project
  beforeAll(async () => {
    project = await projectWith('flags shapes', [
      flagInput('shape-on', { ...always(), payloads: { true: { a: 1 } } }),
      flagInput('shape-variant', {
        ...always(),
        multivariate: { variants: [{ key: 'blue', rollout_percentage: 100 }] },
        payloads: { blue: 'plain text' },
      }),
      flagInput('shape-off', { groups: [{ properties: [], rollout_percentage: 0 }] }),
      flagInput('shape-inactive', always(), { active: false }),
    ])
  })

  const v3 = {
    ...DECIDE_REMOTE_CONFIG,
    config: { enable_collect_everything: true },
    toolbarParams: {},
    errorsWhileComputingFlags: false,
    isAuthenticated: false,
    supportedCompression: ['gzip', 'lz64'],
    featureFlags: { 'shape-on': true, 'shape-variant': 'blue', 'shape-off': false },
    featureFlagPayloads: { 'shape-on': '{"a":1}', 'shape-variant': 'plain text' },
  }

  it('answers /decide?v=3 exactly as the spec table, with and without trailing slash', async () => {
    for (const path of ['/decide?v=3', '/decide/?v=3']) {
      const r = await post(burrow.url, path, { api_key: project.api_token, distinct_id: 'shape-user' })
      expect(r.status, path).toBe(200)
      expect(r.body, path).toEqual(v3)
    }
    const token = await post(burrow.url, '/decide/?v=3', {
      token: project.api_token,
      distinct_id: 'shape-user',
    })
    expect(token.body).toEqual(v3)
  })

  it('answers /decide?v=4 and /flags?v=2 with flag details', async () => {
    const details = {
      'shape-on': {
        key: 'shape-on',
        enabled: true,
        variant: null,
        reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
        metadata: { id: expect.any(Number), version: 1, description: null, payload: '{"a":1}' },
      },
      'shape-variant': {
        key: 'shape-variant',
        enabled: true,
        variant: 'blue',
        reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
        metadata: { id: expect.any(Number), version: 1, description: null, payload: 'plain text' },
      },
      'shape-off': {
        key: 'shape-off',
        enabled: false,
        variant: null,
        reason: { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' },
        metadata: { id: expect.any(Number), version: 1, description: null, payload: null },
      },
    }
    const body = { api_key: project.api_token, distinct_id: 'shape-user' }
    const v4 = await post(burrow.url, '/decide?v=4', body)
    expect(v4.body).toEqual({
      ...DECIDE_REMOTE_CONFIG,
      config: v3.config,
      toolbarParams: {},
      isAuthenticated: false,
      supportedCompression: ['gzip', 'lz64'],
      errorsWhileComputingFlags: false,
      flags: details,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      evaluatedAt: expect.any(Number),
    })
    for (const path of ['/flags?v=2', '/flags/?v=2']) {
      const r = await post(burrow.url, path, body)
      expect(r.body, path).toEqual({
        flags: details,
        errorsWhileComputingFlags: false,
        requestId: expect.any(String),
        evaluatedAt: expect.any(Number),
      })
    }
    const withConfig = await post(burrow.url, '/flags/?v=2&config=true', body)
    expect(withConfig.body).toMatchObject({ config: v3.config, supportedCompression: ['gzip', 'lz64'] })
    const plain = await post(burrow.url, '/flags', body)
    expect(plain.body).toEqual({
      featureFlags: v3.featureFlags,
      featureFlagPayloads: v3.featureFlagPayloads,
      errorsWhileComputingFlags: false,
      requestId: expect.any(String),
    })
  })

  it('evaluates only flag_keys_to_evaluate when given', async () => {
    const r = await post(burrow.url, '/flags/?v=2', {
      token: project.api_token,
      distinct_id: 'shape-user',
      flag_keys_to_evaluate: ['shape-variant', 'no-such-flag'],
    })
    expect(Object.keys(r.body.flags)).toEqual(['shape-variant'])
  })

  it('accepts gzip, lz64 and base64 form bodies like capture', async () => {
    const body = { api_key: project.api_token, distinct_id: 'shape-user' }
    expect((await post(burrow.url, '/decide/?v=3', body, { gzip: true })).body).toEqual(v3)
    const lz = await fetch(`${burrow.url}/decide/?v=3&compression=lz64`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ data: LZString.compressToBase64(JSON.stringify(body)) }).toString(),
    })
    expect(await lz.json()).toEqual(v3)
    const b64 = await fetch(`${burrow.url}/decide/?v=3`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ data: Buffer.from(JSON.stringify(body)).toString('base64') }).toString(),
    })
    expect(await b64.json()).toEqual(v3)
  })

  it('rejects a missing or unknown key (401) and a missing distinct_id or bad JSON (400)', async () => {
    expect((await post(burrow.url, '/decide?v=3', { distinct_id: 'x' })).status).toBe(401)
    const unknown = await post(burrow.url, '/flags?v=2', { api_key: 'phc_unknown', distinct_id: 'x' })
    expect(unknown.status).toBe(401)
    expect(unknown.body.type).toBe('authentication_error')
    expect((await post(burrow.url, '/flags?v=2', { api_key: project.api_token })).status).toBe(400)
    expect(
      (await post(burrow.url, '/flags?v=2', { api_key: project.api_token, distinct_id: '  ' })).status,
    ).toBe(400)
    const bad = await fetch(`${burrow.url}/flags?v=2`, { method: 'POST', body: '{"api_key": ' })
    expect(bad.status).toBe(400)
    // a numeric distinct_id is taken as its text
    const numeric = await post(burrow.url, '/flags?v=2', { api_key: project.api_token, distinct_id: 42 })
    expect(numeric.status).toBe(200)
  })
})

describe('property operators through HTTP', () => {
  const DAY = 86_400_000
  const prop = (key: string, operator: string, value?: unknown) => ({ key, operator, value, type: 'person' })
  const flags: [string, unknown][] = [
    ['op-exact', prop('country', 'exact', 'US')],
    ['op-exact-list', prop('country', 'exact', ['US', 'CA'])],
    ['op-is-not', prop('country', 'is_not', 'US')],
    ['op-icontains', prop('email', 'icontains', 'corp')],
    ['op-not-icontains', prop('email', 'not_icontains', 'corp')],
    ['op-regex', prop('email', 'regex', '^a\\d+@')],
    ['op-not-regex', prop('email', 'not_regex', '^a\\d+@')],
    ['op-gt', prop('n', 'gt', '10')],
    ['op-gte', prop('n', 'gte', '10')],
    ['op-lt', prop('n', 'lt', '10')],
    ['op-lte', prop('n', 'lte', '10')],
    ['op-is-set', prop('x', 'is_set', 'is_set')],
    ['op-is-not-set', prop('x', 'is_not_set', 'is_not_set')],
    ['op-date-before', prop('d', 'is_date_before', '2024-01-01')],
    ['op-date-after', prop('d', 'is_date_after', '2024-01-01')],
    ['op-date-after-relative', prop('d', 'is_date_after', '-7d')],
    ['op-bool', prop('beta', 'exact', ['true'])],
  ]
  // [flag, person properties, expected], worked out from PostHog's operator rules
  const cases: [string, Record<string, unknown>, boolean][] = [
    ['op-exact', { country: 'us' }, true],
    ['op-exact', { country: 'DE' }, false],
    ['op-exact', {}, false],
    ['op-exact-list', { country: 'CA' }, true],
    ['op-exact-list', { country: 'MX' }, false],
    ['op-is-not', { country: 'DE' }, true],
    ['op-is-not', { country: 'US' }, false],
    ['op-is-not', {}, true],
    ['op-icontains', { email: 'a@CORP.com' }, true],
    ['op-icontains', { email: 'a@x.com' }, false],
    ['op-not-icontains', { email: 'a@x.com' }, true],
    ['op-not-icontains', { email: 'a@Corp.com' }, false],
    ['op-regex', { email: 'a12@x.com' }, true],
    ['op-regex', { email: 'b1@x.com' }, false],
    ['op-not-regex', { email: 'b1@x.com' }, true],
    ['op-not-regex', { email: 'a1@x.com' }, false],
    ['op-gt', { n: 11 }, true],
    ['op-gt', { n: '10' }, false],
    ['op-gt', { n: 'abc' }, false],
    ['op-gte', { n: 10 }, true],
    ['op-gte', { n: 9.99 }, false],
    ['op-lt', { n: 9.5 }, true],
    ['op-lt', { n: 10 }, false],
    ['op-lte', { n: '10' }, true],
    ['op-lte', { n: '10.5' }, false],
    ['op-is-set', { x: 'a' }, true],
    ['op-is-set', {}, false],
    ['op-is-not-set', {}, true],
    ['op-is-not-set', { x: 1 }, false],
    ['op-date-before', { d: '2023-12-31' }, true],
    ['op-date-before', { d: '2024-06-01' }, false],
    ['op-date-after', { d: '2024-06-01T10:00:00Z' }, true],
    ['op-date-after', { d: '2023-06-01' }, false],
    ['op-date-after-relative', { d: new Date(Date.now() - DAY).toISOString() }, true],
    ['op-date-after-relative', { d: new Date(Date.now() - 30 * DAY).toISOString() }, false],
    ['op-bool', { beta: true }, true],
    ['op-bool', { beta: 'TRUE' }, true],
    ['op-bool', { beta: 'false' }, false],
  ]
  let project: Project
  beforeAll(async () => {
    project = await projectWith(
      'flags operators',
      flags.map(([key, filter]) => flagInput(key, always([filter]))),
    )
  })

  it('matches every operator as PostHog does', async () => {
    expect(new Set(cases.map(([k]) => k))).toEqual(new Set(flags.map(([k]) => k)))
    for (const [key, props, expected] of cases) {
      const r = await post(burrow.url, '/decide?v=3', {
        api_key: project.api_token,
        distinct_id: `op-${randomUUID()}`,
        person_properties: props,
      })
      expect(r.body.featureFlags[key], `${key} with ${JSON.stringify(props)}`).toBe(expected)
      expect(r.body.errorsWhileComputingFlags).toBe(false)
    }
  })
})

describe('stored properties', () => {
  let project: Project
  beforeAll(async () => {
    project = await projectWith('flags stored', [
      flagInput('stored-pro', always([{ key: 'plan', operator: 'exact', value: 'pro', type: 'person' }])),
      flagInput('big-company', {
        aggregation_group_type_index: 0,
        groups: [
          {
            properties: [
              { key: 'employees', operator: 'gt', value: '100', type: 'group', group_type_index: 0 },
            ],
            rollout_percentage: 100,
          },
        ],
      }),
      flagInput('company-half', {
        aggregation_group_type_index: 0,
        groups: [{ properties: [], rollout_percentage: 50 }],
      }),
    ])
    const person = randomUUID()
    await insertPerson(ch, project.id, person, ['sp-main', 'sp-alias'], { plan: 'pro', country: 'DE' })
    await insertGroup(ch, project.id, 0, 'company', 'acme', { employees: 500 })
  })

  const ask = (body: Record<string, unknown>) =>
    post(burrow.url, '/flags?v=2', { api_key: project.api_token, ...body })

  it('reads person properties from ClickHouse through any of the distinct ids', async () => {
    expect((await ask({ distinct_id: 'sp-alias' })).body.flags['stored-pro'].enabled).toBe(true)
    expect((await ask({ distinct_id: 'sp-main' })).body.flags['stored-pro'].enabled).toBe(true)
    expect((await ask({ distinct_id: 'sp-stranger' })).body.flags['stored-pro'].enabled).toBe(false)
  })

  it('lets request person_properties override stored ones', async () => {
    const r = await ask({ distinct_id: 'sp-main', person_properties: { plan: 'free' } })
    expect(r.body.flags['stored-pro'].enabled).toBe(false)
    const other = await ask({ distinct_id: 'sp-stranger', person_properties: { plan: 'pro' } })
    expect(other.body.flags['stored-pro'].enabled).toBe(true)
  })

  it('follows the latest person version', async () => {
    const person = randomUUID()
    const enabled = async () => (await ask({ distinct_id: 'sp-versioned' })).body.flags['stored-pro'].enabled
    // the change feed reaches the flags process asynchronously (milliseconds)
    await insertPerson(ch, project.id, person, ['sp-versioned'], { plan: 'pro' }, 1)
    await expect.poll(enabled, { timeout: 5000 }).toBe(true)
    await insertPerson(ch, project.id, person, ['sp-versioned'], { plan: 'free' }, 2)
    await expect.poll(enabled, { timeout: 5000 }).toBe(false)
  })

  it('evaluates group flags with stored group properties, request overrides winning', async () => {
    const acme = await ask({ distinct_id: 'g-user', groups: { company: 'acme' } })
    expect(acme.body.flags['big-company'].enabled).toBe(true)
    const tiny = await ask({ distinct_id: 'g-user', groups: { company: 'tiny' } })
    expect(tiny.body.flags['big-company'].enabled).toBe(false)
    const overridden = await ask({
      distinct_id: 'g-user',
      groups: { company: 'acme' },
      group_properties: { company: { employees: 5 } },
    })
    expect(overridden.body.flags['big-company'].enabled).toBe(false)
    const bySent = await ask({
      distinct_id: 'g-user',
      groups: { company: 'tiny' },
      group_properties: { company: { employees: 101 } },
    })
    expect(bySent.body.flags['big-company'].enabled).toBe(true)
    const none = await ask({ distinct_id: 'g-user' })
    expect(none.body.flags['big-company']).toMatchObject({
      enabled: false,
      reason: { code: 'no_group_type' },
    })
  })

  it('buckets group flags by group key, whoever asks', async () => {
    const seen = new Map<string, Set<boolean>>()
    for (let company = 0; company < 20; company++) {
      for (let user = 0; user < 3; user++) {
        const r = await ask({ distinct_id: `u-${user}-${company}`, groups: { company: `c-${company}` } })
        const set = seen.get(`c-${company}`) ?? new Set()
        set.add(r.body.flags['company-half'].enabled)
        seen.set(`c-${company}`, set)
      }
    }
    for (const values of seen.values()) expect(values.size).toBe(1)
    const on = [...seen.values()].filter((v) => v.has(true)).length
    expect(on).toBeGreaterThan(0)
    expect(on).toBeLessThan(20)
  })
})

describe('GeoIP', () => {
  let project: Project
  beforeAll(async () => {
    project = await projectWith('flags geoip', [
      flagInput(
        'geo-us',
        always([{ key: '$geoip_country_code', operator: 'exact', value: 'US', type: 'person' }]),
      ),
      flagInput(
        'geo-uk',
        always([{ key: '$geoip_country_name', operator: 'exact', value: 'United Kingdom', type: 'person' }]),
      ),
      flagInput(
        'geo-mv',
        always([{ key: '$geoip_city_name', operator: 'exact', value: 'Mountain View', type: 'person' }]),
      ),
      flagInput(
        'geo-na',
        always([{ key: '$geoip_continent_name', operator: 'exact', value: 'North America', type: 'person' }]),
      ),
      flagInput('geo-none', always([{ key: '$geoip_country_code', operator: 'is_not_set', type: 'person' }])),
    ])
  })

  const ask = (headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
    post(
      burrow.url,
      '/decide?v=3',
      { api_key: project.api_token, distinct_id: 'geo-user', ...extra },
      { headers },
    )

  it('derives $geoip_* from X-Forwarded-For (8.8.8.8 is Mountain View, US in DB-IP lite)', async () => {
    const r = await ask({ 'x-forwarded-for': '8.8.8.8' })
    expect(r.body.featureFlags).toEqual({
      'geo-us': true,
      'geo-uk': false,
      'geo-mv': true,
      'geo-na': true,
      'geo-none': false,
    })
    // the first address of the header is the client; 81.2.69.142 is London, GB
    const uk = await ask({ 'x-forwarded-for': '81.2.69.142, 10.0.0.1' })
    expect(uk.body.featureFlags).toMatchObject({ 'geo-us': false, 'geo-uk': true, 'geo-na': false })
  })

  it('uses the request address without the header, and request properties win', async () => {
    // the test client connects from loopback, which has no location
    expect((await ask({})).body.featureFlags).toMatchObject({ 'geo-us': false, 'geo-none': true })
    const overridden = await ask(
      { 'x-forwarded-for': '8.8.8.8' },
      { person_properties: { $geoip_country_code: 'GB' } },
    )
    expect(overridden.body.featureFlags).toMatchObject({ 'geo-us': false, 'geo-mv': true })
    const disabled = await ask({ 'x-forwarded-for': '8.8.8.8' }, { geoip_disable: true })
    expect(disabled.body.featureFlags).toMatchObject({ 'geo-us': false, 'geo-none': true })
  })
})

describe('error isolation', () => {
  it('leaves out a flag that cannot be evaluated and flags the response', async () => {
    const project = await projectWith('flags errors', [
      flagInput('err-good', always()),
      flagInput('err-variant', {
        ...always(),
        multivariate: { variants: [{ key: 'only', rollout_percentage: 100 }] },
      }),
    ])
    // The API refuses such a pattern now; a flag stored before that rule is written directly.
    const badRegex = flagInput(
      'err-bad-regex',
      always([{ key: 'email', operator: 'regex', value: '(unclosed', type: 'person' }]),
    )
    const refused = await call('POST', `/api/projects/${project.id}/feature_flags/`, badRegex)
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({
      type: 'validation_error',
      attr: 'filters.groups.0.properties.0.value',
    })
    const stored = flagDefinitionSchema.omit({ id: true, version: true }).parse(badRegex)
    await (await FlagStore.open(await nats())).create(project.id, stored, null)
    const body = {
      api_key: project.api_token,
      distinct_id: 'err-user',
      person_properties: { email: 'a@b.c' },
    }
    const v3 = await post(burrow.url, '/decide?v=3', body)
    expect(v3.body.errorsWhileComputingFlags).toBe(true)
    expect(v3.body.featureFlags).toEqual({ 'err-good': true, 'err-variant': 'only' })
    const v2 = await post(burrow.url, '/flags?v=2', body)
    expect(v2.body.errorsWhileComputingFlags).toBe(true)
    expect(Object.keys(v2.body.flags).sort()).toEqual(['err-good', 'err-variant'])
  })
})

describe('regexes in linear time', () => {
  it('answers ^(a+)+$ against a…a! at once while /_health keeps answering', async () => {
    const project = await projectWith('flags redos', [
      flagInput('redos', always([{ key: 'email', operator: 'regex', value: '^(a+)+$', type: 'person' }])),
    ])
    // A backtracking engine needs 2^n steps here: 31 characters took 41 s (issue 22).
    const email = `${'a'.repeat(9_999)}!`
    const body = { api_key: project.api_token, distinct_id: 'redos-user', person_properties: { email } }
    const evaluations = Array.from({ length: 5 }, () => post(burrow.url, '/flags?v=2', body))
    const health = await fetch(`${burrow.url}/_health`)
    expect(health.status).toBe(200)
    for (const r of await Promise.all(evaluations)) {
      expect(r.status).toBe(200)
      expect(r.body.flags.redos).toMatchObject({ enabled: false })
    }
  })
})

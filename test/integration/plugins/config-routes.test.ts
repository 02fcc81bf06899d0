import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import { clickhouse, createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'

let env: Env
let base: string

beforeAll(async () => {
  env = await managementEnv()
  base = `/api/environments/${env.project.id}/plugin_configs/`
})

const CONFIG_FIELDS = [
  'id',
  'plugin',
  'plugin_info',
  'name',
  'enabled',
  'order',
  'config',
  'log_level',
  'team_id',
  'deleted',
  'created_at',
  'updated_at',
].sort()

const LOG_FIELDS = [
  'id',
  'team_id',
  'plugin_id',
  'plugin_config_id',
  'timestamp',
  'source',
  'type',
  'message',
  'instance_id',
].sort()

describe('plugin configs', () => {
  it('creates (201) by plugin id or name, filling the plugin defaults', async () => {
    const geo = await env.call('POST', base, { plugin: 'geoip' })
    expect(geo.status).toBe(201)
    expect(Object.keys(geo.body).sort()).toEqual(CONFIG_FIELDS)
    expect(geo.body).toMatchObject({
      plugin: 1,
      plugin_info: { id: 1, name: 'geoip' },
      enabled: true,
      config: { set_person_properties: true },
      log_level: 'INFO',
      team_id: env.project.id,
      deleted: false,
    })
    const hook = await env.call('POST', base, {
      plugin: 3,
      name: 'to my server',
      config: { url: 'http://127.0.0.1:9/hook', events: ['signup'] },
    })
    expect(hook.status).toBe(201)
    expect(hook.body.config).toEqual({
      url: 'http://127.0.0.1:9/hook',
      events: ['signup'],
      headers: {},
      max_attempts: 5,
      initial_backoff_ms: 1000,
      timeout_ms: 10_000,
    })
    // Appended after the last step.
    expect(hook.body.order).toBeGreaterThan(geo.body.order)
    const filter = await env.call('POST', base, {
      plugin: 'property-filter',
      config: { properties: '$ip, secret' },
    })
    expect(filter.body.config).toEqual({ properties: ['$ip', 'secret'] })
  })

  it('refuses unknown plugins and invalid settings with 400 naming the field', async () => {
    const unknown = await env.call('POST', base, { plugin: 'nope' })
    expect(unknown.status).toBe(400)
    expect(unknown.body).toMatchObject({ type: 'validation_error', attr: 'plugin' })
    expect((await env.call('POST', base, { plugin: 99 })).status).toBe(400)
    const badUrl = await env.call('POST', base, { plugin: 'webhook', config: { url: 'ftp://example.com/x' } })
    expect(badUrl.status).toBe(400)
    expect(badUrl.body.attr).toBe('config.url')
    const noProps = await env.call('POST', base, { plugin: 'property-filter', config: {} })
    expect(noProps.status).toBe(400)
    expect(noProps.body.attr).toBe('config.properties')
    expect((await env.call('POST', base, { plugin: 'geoip', log_level: 'LOUD' })).status).toBe(400)
  })

  it('lists in pipeline order with paging', async () => {
    const project = (await createTestProject('plugin list')).id
    const listBase = `/api/environments/${project}/plugin_configs/`
    const made = []
    for (const order of [5, 1, 3]) {
      made.push((await env.call('POST', listBase, { plugin: 'geoip', order })).body)
    }
    const page1 = await env.call('GET', `${listBase}?limit=2`)
    expect(page1.status).toBe(200)
    expect(page1.body.count).toBe(3)
    expect(page1.body.previous).toBeNull()
    expect(page1.body.results.map((c: { order: number }) => c.order)).toEqual([1, 3])
    const next = new URL(page1.body.next)
    const page2 = await env.call('GET', `${next.pathname}${next.search}`)
    expect(page2.body.results.map((c: { order: number }) => c.order)).toEqual([5])
    expect(page2.body.next).toBeNull()
    expect(new URL(page2.body.previous).searchParams.get('offset')).toBe('0')
    expect((await env.call('GET', `${listBase}?offset=-1`)).status).toBe(400)
    // Same under /api/projects/.
    const viaProjects = await env.call('GET', `/api/projects/${project}/plugin_configs/`)
    expect(viaProjects.body.count).toBe(3)
    expect(made).toHaveLength(3)
  })

  it('retrieves, PATCHes (config validated and replaced), deletes (204) softly', async () => {
    const c = (await env.call('POST', base, { plugin: 'property-filter', config: { properties: ['a'] } }))
      .body
    const got = await env.call('GET', `${base}${c.id}/`)
    expect(got.status).toBe(200)
    expect(got.body).toEqual(c)

    const patched = await env.call('PATCH', `${base}${c.id}/`, {
      enabled: false,
      config: { properties: ['b', 'c'] },
      log_level: 'DEBUG',
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({
      enabled: false,
      config: { properties: ['b', 'c'] },
      log_level: 'DEBUG',
    })
    expect(patched.body.updated_at >= c.updated_at).toBe(true)
    const invalid = await env.call('PATCH', `${base}${c.id}/`, { config: { properties: [] } })
    expect(invalid.status).toBe(400)
    expect(invalid.body.attr).toBe('config.properties')

    const del = await env.call('DELETE', `${base}${c.id}/`)
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    expect((await env.call('GET', `${base}${c.id}/`)).status).toBe(404)
    expect((await env.call('PATCH', `${base}${c.id}/`, { enabled: true })).status).toBe(404)
    expect((await env.call('DELETE', `${base}${c.id}/`)).status).toBe(404)
    const list = await env.call('GET', `${base}?limit=1000`)
    expect(list.body.results.map((x: { id: number }) => x.id)).not.toContain(c.id)

    // Every change was logged as a SYSTEM line, and the log outlives the config.
    const logs = await env.call('GET', `${base}${c.id}/logs/`)
    expect(logs.status).toBe(200)
    expect(logs.body.results.map((l: { message: string }) => l.message)).toEqual([
      'Plugin config deleted',
      'Plugin config disabled',
      'Plugin config updated: enabled, config, log_level',
      'Plugin config created (property-filter, enabled)',
    ])
    for (const l of logs.body.results) {
      expect(Object.keys(l).sort()).toEqual(LOG_FIELDS)
      expect(l).toMatchObject({
        source: 'SYSTEM',
        type: 'INFO',
        team_id: env.project.id,
        plugin_id: 2,
        plugin_config_id: c.id,
      })
      expect(l.id).toMatch(/^[0-9a-f-]{36}$/)
      expect(l.instance_id).toMatch(/^[0-9a-f-]{36}$/)
    }
    expect((await env.call('GET', `${base}abc/`)).status).toBe(404)
    expect((await env.call('GET', `${base}99999999/logs/`)).status).toBe(404)
  })

  it('enforces plugin scopes and project access', async () => {
    const c = (await env.call('POST', base, { plugin: 'geoip' })).body
    const reader = await env.as(['plugin:read'])
    expect((await reader('GET', base)).status).toBe(200)
    expect((await reader('GET', `${base}${c.id}/`)).status).toBe(200)
    expect((await reader('GET', `${base}${c.id}/logs/`)).status).toBe(200)
    for (const [method, path, body] of [
      ['POST', base, { plugin: 'geoip' }],
      ['PATCH', `${base}${c.id}/`, { enabled: false }],
      ['DELETE', `${base}${c.id}/`, undefined],
    ] as const) {
      const r = await reader(method, path, body)
      expect(r.status, method).toBe(403)
      expect(r.body.detail).toContain('plugin:write')
    }
    const none = await env.as(['session_recording_playlist:write'])
    const denied = await none('GET', `${base}${c.id}/logs/`)
    expect(denied.status).toBe(403)
    expect(denied.body.detail).toContain('plugin:read')
    const writer = await env.as(['plugin:write'])
    expect((await writer('GET', `${base}${c.id}/logs/`)).status).toBe(200)

    const elsewhere = await env.as(['*'], [env.other.id])
    expect((await elsewhere('GET', `${base}${c.id}/`)).status).toBe(404)
    expect((await elsewhere('GET', `${base}${c.id}/logs/`)).status).toBe(404)
    const otherBase = `/api/environments/${env.other.id}/plugin_configs/`
    expect((await env.call('GET', `${otherBase}${c.id}/`)).status).toBe(404)
    expect((await env.call('GET', `${otherBase}${c.id}/logs/`)).status).toBe(404)
  })
})

describe('plugin config logs', () => {
  let id: number
  let logs: string
  // Written straight into the table with known times; the config's own SYSTEM line is newer.
  const lines = [
    { at: '2024-05-01T10:00:00.100Z', type: 'DEBUG', message: 'first debug line' },
    { at: '2024-05-01T10:00:01.200Z', type: 'INFO', message: 'Processed event Alpha' },
    { at: '2024-05-01T10:00:02.300Z', type: 'WARN', message: 'retrying delivery' },
    { at: '2024-05-01T10:00:03.400Z', type: 'ERROR', message: 'Delivery FAILED for alpha' },
    { at: '2024-05-01T10:00:04.500Z', type: 'LOG', message: 'console says hi' },
  ]

  beforeAll(async () => {
    const c = (await env.call('POST', base, { plugin: 'geoip' })).body
    id = c.id
    logs = `${base}${id}/logs/`
    await clickhouse().insert({
      table: 'plugin_log_entries',
      format: 'JSONEachRow',
      values: lines.map((l) => ({
        id: uuidv4(),
        team_id: env.project.id,
        plugin_id: 1,
        plugin_config_id: id,
        timestamp: l.at.slice(0, 23).replace('T', ' '),
        source: 'PLUGIN',
        type: l.type,
        message: l.message,
        instance_id: uuidv4(),
      })),
    })
  })

  const messages = (r: { body: { results: { message: string }[] } }) => r.body.results.map((l) => l.message)

  it('pages newest first with limit/offset', async () => {
    const all = await env.call('GET', logs)
    expect(all.body.count).toBe(6)
    expect(messages(all)).toEqual([
      'Plugin config created (geoip, enabled)',
      'console says hi',
      'Delivery FAILED for alpha',
      'retrying delivery',
      'Processed event Alpha',
      'first debug line',
    ])
    expect(all.body.results[1]).toMatchObject({
      timestamp: '2024-05-01T10:00:04.500Z',
      type: 'LOG',
      source: 'PLUGIN',
    })
    const p2 = await env.call('GET', `${logs}?limit=2&offset=2`)
    expect(messages(p2)).toEqual(['Delivery FAILED for alpha', 'retrying delivery'])
    expect(p2.body.count).toBe(6)
    expect(new URL(p2.body.next).searchParams.get('offset')).toBe('4')
    expect(new URL(p2.body.previous).searchParams.get('offset')).toBe('0')
    const last = await env.call('GET', `${logs}?limit=2&offset=4`)
    expect(last.body.next).toBeNull()
  })

  it('filters by type_filter, search, after and before (exclusive)', async () => {
    const types = await env.call('GET', `${logs}?type_filter=WARN&type_filter=ERROR`)
    expect(messages(types)).toEqual(['Delivery FAILED for alpha', 'retrying delivery'])
    expect(types.body.count).toBe(2)
    const comma = await env.call('GET', `${logs}?type_filter=debug,log`)
    expect(messages(comma)).toEqual(['console says hi', 'first debug line'])

    const search = await env.call('GET', `${logs}?search=ALPHA`)
    expect(messages(search)).toEqual(['Delivery FAILED for alpha', 'Processed event Alpha'])

    const window = await env.call(
      'GET',
      `${logs}?after=2024-05-01T10:00:01.200Z&before=2024-05-01T10:00:04.500Z`,
    )
    expect(messages(window)).toEqual(['Delivery FAILED for alpha', 'retrying delivery'])
    const naiveUtc = await env.call('GET', `${logs}?before=2024-05-01T10:00:01`)
    expect(messages(naiveUtc)).toEqual(['first debug line'])
    const combined = await env.call(
      'GET',
      `${logs}?search=alpha&type_filter=INFO&before=2025-01-01T00:00:00Z`,
    )
    expect(messages(combined)).toEqual(['Processed event Alpha'])

    for (const bad of ['type_filter=LOUD', 'after=yesterday', 'limit=-1', 'offset=x']) {
      const r = await env.call('GET', `${logs}?${bad}`)
      expect(r.status, bad).toBe(400)
      expect(r.body.type).toBe('validation_error')
    }
  })
})

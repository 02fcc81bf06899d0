import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { v4 as uuidv4 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PluginLogWriter } from '../../../src/plugins/log-writer.ts'
import { runPlugins } from '../../../src/plugins/pipeline.ts'
import { PluginConfigCache, PluginConfigStore } from '../../../src/plugins/config-store.ts'
import type { PluginConfig, PluginEvent } from '../../../src/plugins/types.ts'
import { privateAddressOf, WebhookDispatcher } from '../../../src/plugins/webhook-dispatcher.ts'
import { clickhouse, nats } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'

let env: Env
let base: string
let store: PluginConfigStore
let writer: PluginLogWriter

beforeAll(async () => {
  env = await managementEnv()
  base = `/api/environments/${env.project.id}/plugin_configs/`
  store = await PluginConfigStore.open(await nats())
  writer = new PluginLogWriter(clickhouse(), { flushIntervalMs: 50 })
})

afterAll(async () => {
  await writer?.close()
})

async function config(body: Record<string, unknown>): Promise<PluginConfig> {
  const r = await env.call('POST', base, { log_level: 'DEBUG', ...body })
  expect(r.status).toBe(201)
  return (await store.get(env.project.id, r.body.id))!
}

function event(overrides: Partial<PluginEvent> = {}): PluginEvent {
  return {
    uuid: uuidv4(),
    event: '$pageview',
    distinct_id: 'user-1',
    team_id: env.project.id,
    timestamp: '2024-05-01T10:00:00.000Z',
    properties: { $current_url: 'https://example.com/' },
    ip: null,
    ...overrides,
  }
}

/** The config's PLUGIN lines as the API pages them, oldest first. */
async function pluginLines(c: PluginConfig) {
  await writer.flush()
  const r = await env.call('GET', `${base}${c.id}/logs/?limit=1000`)
  expect(r.status).toBe(200)
  return (r.body.results as { source: string; type: string; message: string; plugin_id: number }[])
    .filter((l) => l.source === 'PLUGIN')
    .reverse()
}

describe('geoip plugin', () => {
  it('adds $geoip_* for a known IP (8.8.8.8 is in the US) and logs it', async () => {
    const c = await config({ plugin: 'geoip' })
    const input = event({ ip: '8.8.8.8', properties: { $set: { email: 'a@example.com' } } })
    const out = await runPlugins([c], input, writer)
    expect(out?.properties).toMatchObject({
      $geoip_country_code: 'US',
      $geoip_country_name: 'United States',
      $geoip_continent_code: 'NA',
      $geoip_continent_name: 'North America',
      $set: { email: 'a@example.com', $geoip_country_code: 'US' },
      $set_once: { $initial_geoip_country_code: 'US' },
    })
    expect(input.properties).toEqual({ $set: { email: 'a@example.com' } })
    const lines = await pluginLines(c)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ type: 'DEBUG', plugin_id: 1 })
    expect(lines[0]?.message).toContain('8.8.8.8')
    expect(lines[0]?.message).toContain('US')
  })

  it('uses properties.$ip when capture stamped none, honours $geoip_disable and the log level', async () => {
    const c = await config({ plugin: 'geoip' })
    const fromProp = await runPlugins([c], event({ properties: { $ip: '8.8.8.8' } }), writer)
    expect(fromProp?.properties.$geoip_country_code).toBe('US')
    const disabled = await runPlugins(
      [c],
      event({ ip: '8.8.8.8', properties: { $geoip_disable: true } }),
      writer,
    )
    expect(disabled?.properties).toEqual({ $geoip_disable: true })
    const privateIp = await runPlugins([c], event({ ip: '10.1.2.3' }), writer)
    expect(privateIp?.properties).toEqual({ $current_url: 'https://example.com/' })
    expect((await pluginLines(c)).map((l) => l.type)).toEqual(['DEBUG', 'DEBUG', 'DEBUG'])

    const quiet = await config({ plugin: 'geoip', log_level: 'INFO' })
    await runPlugins([quiet], event({ ip: '8.8.8.8' }), writer)
    expect(await pluginLines(quiet)).toEqual([])
  })
})

describe('property-filter plugin', () => {
  it('removes top-level and nested properties without touching the input, and logs it', async () => {
    const c = await config({
      plugin: 'property-filter',
      config: { properties: ['$ip', 'secret', '$set.email', 'absent'] },
    })
    const input = event({
      properties: { $ip: '1.2.3.4', secret: 's3cr3t', keep: 1, $set: { email: 'a@b.c', name: 'A' } },
    })
    const out = await runPlugins([c], input, writer)
    expect(out?.properties).toEqual({ keep: 1, $set: { name: 'A' } })
    expect(input.properties).toEqual({
      $ip: '1.2.3.4',
      secret: 's3cr3t',
      keep: 1,
      $set: { email: 'a@b.c', name: 'A' },
    })
    const lines = await pluginLines(c)
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ type: 'DEBUG', plugin_id: 2 })
    expect(lines[0]?.message).toBe(`Removed $ip, secret, $set.email from event ${input.uuid}`)
  })

  it('runs in pipeline order: geoip first, then the filter sees its output', async () => {
    const geo = await config({ plugin: 'geoip', order: 10 })
    const filter = await config({
      plugin: 'property-filter',
      order: 20,
      config: { properties: '$geoip_latitude,$geoip_longitude' },
    })
    const out = await runPlugins([filter, geo], event({ ip: '8.8.8.8' }), writer)
    expect(out?.properties.$geoip_country_code).toBe('US')
    expect(out?.properties).not.toHaveProperty('$geoip_latitude')
    expect(out?.properties).not.toHaveProperty('$geoip_longitude')

    // Disabled configs, other teams' configs and invalid stored settings do not run the plugin.
    const off = { ...filter, enabled: false }
    const foreign = { ...filter, team_id: env.other.id }
    const broken = { ...filter, id: filter.id, config: { properties: 42 } }
    const untouched = await runPlugins([off, foreign], event({ properties: { $geoip_latitude: 1 } }), writer)
    expect(untouched?.properties).toEqual({ $geoip_latitude: 1 })
    const survived = await runPlugins([broken], event({ properties: { $geoip_latitude: 1 } }), writer)
    expect(survived?.properties).toEqual({ $geoip_latitude: 1 })
    const errors = (await pluginLines(filter)).filter((l) => l.type === 'ERROR')
    expect(errors).toHaveLength(1)
    expect(errors[0]?.message).toMatch(/^Invalid config/)
  })
})

describe('webhook plugin', () => {
  let server: Server
  let url: string
  const received: { path: string; body: Record<string, unknown>; headers: IncomingMessage['headers'] }[] = []
  const failuresLeft = new Map<string, number>()

  beforeAll(async () => {
    server = createServer((req, res) => {
      let data = ''
      req.on('data', (c) => (data += c))
      req.on('end', () => {
        const path = req.url ?? '/'
        received.push({ path, body: JSON.parse(data), headers: req.headers })
        if (path === '/bad-request') return res.writeHead(400).end()
        const left = failuresLeft.get(path) ?? 0
        if (left > 0) {
          failuresLeft.set(path, left - 1)
          return res.writeHead(503).end()
        }
        res.writeHead(200).end('ok')
      })
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })

  afterAll(async () => {
    await new Promise((r) => server.close(r))
  })

  it('POSTs matching events, retrying 5xx with backoff, and logs each attempt', async () => {
    // the receiving server is on loopback, which only an explicit setting allows
    const webhooks = new WebhookDispatcher(10_000, true)
    failuresLeft.set('/flaky', 2)
    const c = await config({
      plugin: 'webhook',
      config: {
        url: `${url}/flaky`,
        events: ['signup'],
        headers: { 'x-token': 'abc' },
        initial_backoff_ms: 20,
      },
    })
    const signup = event({ event: 'signup', properties: { plan: 'pro' } })
    const out = await runPlugins([c], signup, writer, { webhooks })
    expect(out).toEqual(signup)
    const skipped = await runPlugins([c], event({ event: '$pageview' }), writer, { webhooks })
    expect(skipped?.event).toBe('$pageview')
    await webhooks.idle()

    const hits = received.filter((r) => r.path === '/flaky')
    expect(hits).toHaveLength(3)
    expect(hits[2]?.body).toEqual({
      uuid: signup.uuid,
      event: 'signup',
      distinct_id: 'user-1',
      team_id: env.project.id,
      timestamp: '2024-05-01T10:00:00.000Z',
      properties: { plan: 'pro' },
    })
    expect(hits[0]?.headers['x-token']).toBe('abc')
    expect(hits[0]?.headers['content-type']).toBe('application/json')
    const lines = await pluginLines(c)
    expect(lines.map((l) => l.type)).toEqual(['WARN', 'WARN', 'DEBUG'])
    expect(lines.every((l) => l.plugin_id === 3)).toBe(true)
    expect(lines[0]?.message).toContain('HTTP 503')
    expect(lines[2]?.message).toContain('HTTP 200, attempt 3')
  })

  it('gives up at once on 4xx and after max_attempts on unreachable hosts, logging ERROR', async () => {
    // the receiving server is on loopback, which only an explicit setting allows
    const webhooks = new WebhookDispatcher(10_000, true)
    const bad = await config({
      plugin: 'webhook',
      config: { url: `${url}/bad-request`, initial_backoff_ms: 10 },
    })
    // A port nothing listens on: connection refused on every attempt.
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const deadPort = (closed.address() as AddressInfo).port
    await new Promise((r) => closed.close(r))
    const down = await config({
      plugin: 'webhook',
      config: { url: `http://127.0.0.1:${deadPort}/`, max_attempts: 2, initial_backoff_ms: 10 },
    })
    await runPlugins([bad, down], event(), writer, { webhooks })
    await webhooks.idle()
    expect(received.filter((r) => r.path === '/bad-request')).toHaveLength(1)
    const badLines = await pluginLines(bad)
    expect(badLines.map((l) => l.type)).toEqual(['ERROR'])
    expect(badLines[0]?.message).toContain('after 1 attempt(s): HTTP 400')
    const downLines = await pluginLines(down)
    expect(downLines.map((l) => l.type)).toEqual(['WARN', 'ERROR'])
    expect(downLines[1]?.message).toContain('after 2 attempt(s)')
  })

  it('refuses loopback, private and link-local addresses unless allowed', async () => {
    const webhooks = new WebhookDispatcher()
    const c = await config({ plugin: 'webhook', config: { url: `${url}/private`, max_attempts: 1 } })
    await runPlugins([c], event(), writer, { webhooks })
    await webhooks.idle()
    expect(received.filter((r) => r.path === '/private')).toHaveLength(0)
    const lines = await pluginLines(c)
    expect(lines.map((l) => l.type)).toEqual(['ERROR'])
    expect(lines[0]?.message).toContain('private address')
    for (const u of [
      'http://10.1.2.3/',
      'http://192.168.0.1/',
      'http://169.254.169.254/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://localhost/',
    ])
      expect(await privateAddressOf(u), u).toBeDefined()
    expect(await privateAddressOf('http://8.8.8.8/')).toBeUndefined()
  })
})

describe('config cache for the projector', () => {
  it('serves enabled configs in order and sees changes made through the API', async () => {
    const { createTestProject } = await import('../../harness/index.ts')
    const project = (await createTestProject('cache')).id
    const cache = new PluginConfigCache(store)
    await cache.start()
    try {
      const listBase = `/api/environments/${project}/plugin_configs/`
      const b = (await env.call('POST', listBase, { plugin: 'geoip', order: 2 })).body
      const a = (await env.call('POST', listBase, { plugin: 'geoip', order: 1 })).body
      expect((await cache.configsFor(project)).map((c) => c.id)).toEqual([a.id, b.id])
      await env.call('PATCH', `${listBase}${a.id}/`, { enabled: false })
      await expect.poll(async () => (await cache.configsFor(project)).map((c) => c.id)).toEqual([b.id])
      await env.call('DELETE', `${listBase}${b.id}/`)
      await expect.poll(async () => (await cache.configsFor(project)).length).toBe(0)
    } finally {
      cache.stop()
    }
  })
})

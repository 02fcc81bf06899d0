import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { connectNats } from '../../../src/jetstream/connection.ts'
import { defaultWebhooks } from '../../../src/plugins/pipeline.ts'
import { PluginConfigStore } from '../../../src/plugins/config-store.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { type ClickHouseClient } from '../../../src/clickhouse/client.ts'
import {
  api,
  createTestProject,
  mutationsDone,
  nats,
  ownDatabase,
  stack,
  startTestBurrow,
  tempDir,
} from '../../harness/index.ts'
import { ev, rows, runProjector, testLog, waitForRows, waitIdle, writerWithFault } from './helpers.ts'

// The plugin pipeline inside the projector: configured through the API, fed through capture, and
// exactly once across a crash (a redelivered batch writes each event once and re-sends only the
// webhooks of events whose rows had not been written).

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

describe('plugins configured through the API, events through capture', () => {
  // Own NATS server and database: the default durable consumers would be shared with other files.
  let burrow: RunningBurrow
  let natsStop: () => Promise<void>

  beforeAll(async () => {
    const server = await startNatsServer({
      bin: stack().bins.nats,
      dataDir: join(tempDir(), 'nats'),
      port: await freePort(),
    })
    natsStop = () => server.stop()
    const { database } = await ownDatabase('burrow_plugins')
    burrow = await startTestBurrow({
      NATS_URL: server.url,
      CLICKHOUSE_DATABASE: database,
      TRUSTED_PROXIES: '127.0.0.1',
    })
  })
  afterAll(async () => {
    await burrow?.stop()
    await natsStop?.()
  })

  it('runs geoip then property-filter before the rows are written, and logs each step', async () => {
    const { project_api_key: token, project_id: team, personal_api_key: key } = burrow.credentials
    const call = api(burrow.url, key)
    const base = `/api/projects/${team}/plugin_configs/`
    const geo = await call('POST', base, { plugin: 'geoip', order: 1, log_level: 'DEBUG' })
    expect(geo.status).toBe(201)
    const filter = await call('POST', base, {
      plugin: 'property-filter',
      order: 2,
      log_level: 'DEBUG',
      config: { properties: ['secret', '$set.email'] },
    })
    expect(filter.status).toBe(201)

    const batch = [
      {
        event: '$pageview',
        distinct_id: 'geo-user',
        uuid: '01890000-0000-7000-8000-000000000001',
        timestamp: '2024-06-01T10:00:00.000Z',
        properties: { secret: 's3cr3t', keep: 1, $set: { email: 'e@x.io', name: 'N' } },
      },
      {
        event: 'no-geo',
        distinct_id: 'geo-user',
        uuid: '01890000-0000-7000-8000-000000000002',
        timestamp: '2024-06-01T10:00:01.000Z',
        properties: { $geoip_disable: true, secret: 'again' },
      },
    ]
    const res = await fetch(`${burrow.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '8.8.8.8' },
      body: JSON.stringify({ api_key: token, batch }),
    })
    expect(res.status).toBe(200)

    const ch = burrow.runtime.ch
    const got = await waitForRows<{ event: string; properties: string; person_properties: string }>(
      ch,
      `SELECT event, properties, person_properties FROM events WHERE team_id = ${team} ORDER BY timestamp`,
      2,
    )
    const [first, second] = got.map((r) => ({
      event: r.event,
      properties: JSON.parse(r.properties) as Record<string, unknown>,
      person: JSON.parse(r.person_properties) as Record<string, unknown>,
    }))
    // DB-IP lite places 8.8.8.8 in the United States (North America).
    expect(first!.properties).toMatchObject({
      keep: 1,
      $geoip_country_code: 'US',
      $geoip_country_name: 'United States',
      $geoip_continent_code: 'NA',
    })
    expect(first!.properties).not.toHaveProperty('secret')
    expect(first!.properties.$set).toEqual(expect.not.objectContaining({ email: expect.anything() }))
    expect(first!.person).toMatchObject({ name: 'N', $geoip_country_code: 'US' })
    expect(first!.person).not.toHaveProperty('email')
    // $geoip_disable skips the geoip step only; the filter still runs.
    expect(second!.properties).not.toHaveProperty('$geoip_country_code')
    expect(second!.properties).not.toHaveProperty('secret')

    const [person] = await rows<{ properties: string }>(
      ch,
      `SELECT argMax(properties, version) AS properties FROM person WHERE team_id = ${team} GROUP BY id`,
    )
    expect(JSON.parse(person!.properties)).toMatchObject({
      name: 'N',
      $geoip_country_code: 'US',
      $initial_geoip_country_code: 'US',
    })

    // The plugin log is flushed in the background (about once a second).
    const lines = (id: number) =>
      until(`log lines of config ${id}`, async () => {
        const r = await call('GET', `${base}${id}/logs/`)
        expect(r.status).toBe(200)
        const plugin = (r.body.results as { source: string; message: string }[]).filter(
          (l) => l.source === 'PLUGIN',
        )
        return plugin.length >= 2 ? plugin.map((l) => l.message) : undefined
      })
    const geoLines = await lines(geo.body.id)
    expect(geoLines.some((m) => m.includes('8.8.8.8') && m.includes(batch[0]!.uuid))).toBe(true)
    expect(geoLines.some((m) => m.includes('$geoip_disable') && m.includes(batch[1]!.uuid))).toBe(true)
    const filterLines = await lines(filter.body.id)
    expect(filterLines).toEqual(
      expect.arrayContaining([
        `Removed secret, $set.email from event ${batch[0]!.uuid}`,
        `Removed secret from event ${batch[1]!.uuid}`,
      ]),
    )
  })
})

describe('plugins and exactly-once', () => {
  // a database of its own: the test mutates `events`, which rewrites every part of the table
  let ch: ClickHouseClient
  let hook: Server
  const delivered: string[] = []

  beforeAll(async () => {
    ch = (await ownDatabase('burrow_plugins_crash')).client
    // The receiver listens on loopback, which webhooks may reach only when allowed.
    defaultWebhooks.allowPrivate = true
    hook = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => {
        body += c
      })
      req.on('end', () => {
        delivered.push((JSON.parse(body) as { uuid: string }).uuid)
        res.writeHead(200).end()
      })
    })
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r))
  })
  afterAll(async () => {
    defaultWebhooks.allowPrivate = false
    await new Promise((r) => hook.close(r))
  })

  it('after a crash between insert and ack, re-sends only the webhooks of rows that were missing', async () => {
    const log = await testLog(await nats())
    const team = (await createTestProject('plugins exactly once')).id
    const configs = await PluginConfigStore.open(await nats())
    await configs.create(team, null, {
      plugin: 1,
      name: 'geo',
      enabled: true,
      config: { set_person_properties: true },
      log_level: 'INFO',
    })
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`
    await configs.create(team, null, {
      plugin: 3,
      name: 'hook',
      enabled: true,
      config: { url, events: [], headers: {}, max_attempts: 1, initial_backoff_ms: 1, timeout_ms: 5000 },
      log_level: 'INFO',
    })
    // Three months in one batch: the INSERT lands as three parts; one of them is then removed.
    const months = ['2023-11-20T10:00:00.000Z', '2023-12-20T10:00:00.000Z', '2024-01-20T10:00:00.000Z']
    const chunks = months.map((m, i) =>
      Array.from({ length: 4 }, (_, j) => ({
        ...ev(team, 'step', `user-${i}`, { i, j }, new Date(Date.parse(m) + j * 1000).toISOString()),
        ip: '8.8.8.8',
      })),
    )
    for (const c of chunks) await log.publish('live', c)
    const december = new Set(chunks[1]!.map((e) => e.uuid))
    const all = chunks.flat()

    const ncA = await connectNats(stack().natsUrl, 'projector-plugins-a')
    let crashed = false
    const a = await runProjector(log, ch, team, {
      nc: ncA,
      lanes: ['live'],
      maxWaitMs: 500,
      ackWaitMs: 5000,
      writer: writerWithFault(ch, async () => {
        if (crashed) return
        crashed = true
        await ch.command({
          query: `ALTER TABLE events DELETE WHERE team_id = ${team} AND toYYYYMM(timestamp) = 202312`,
        })
        await mutationsDone(ch, 'events')
        // The process dies: its connection is gone before anything is acknowledged.
        await ncA.close()
        throw new Error('simulated crash')
      }),
    })
    await until('the crash', async () => (crashed && ncA.isClosed() ? true : undefined))
    await a.stop()
    await until('the first webhooks', async () => (delivered.length >= all.length ? true : undefined))
    expect([...delivered].sort()).toEqual(all.map((e) => e.uuid).sort())

    const b = await runProjector(log, ch, team, { lanes: ['live'], ackWaitMs: 5000 })
    try {
      await waitIdle(log, b)
      const got = await rows<{ uuid: string; n: string; country: string }>(
        ch,
        `SELECT toString(uuid) AS uuid, count() AS n,
                any(visitParamExtractString(properties, '$geoip_country_code')) AS country
         FROM events WHERE team_id = ${team} GROUP BY uuid`,
      )
      expect(got).toHaveLength(all.length)
      expect(got.every((r) => Number(r.n) === 1 && r.country === 'US')).toBe(true)
      await until('the re-sent webhooks', async () =>
        delivered.length >= all.length + december.size ? true : undefined,
      )
      await new Promise((r) => setTimeout(r, 300))
      // Only the events whose rows were missing went through the webhook again.
      expect([...delivered.slice(all.length)].sort()).toEqual([...december].sort())
    } finally {
      await b.stop()
    }
  })
})

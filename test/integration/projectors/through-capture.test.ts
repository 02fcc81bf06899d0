import { join } from 'node:path'
import { PostHog } from 'posthog-node'
import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { ownDatabase, stack, startTestBurrow, tempDir } from '../../harness/index.ts'
import { PERSON_NAMESPACE, rows, waitForRows } from './helpers.ts'

// The whole path, HTTP capture -> JetStream -> projector -> ClickHouse, inside one Burrow. It gets a NATS
// server and a database of its own: the default durable consumers would otherwise be shared with every
// other test file that starts a Burrow.
let burrow: RunningBurrow
let natsStop: () => Promise<void>

beforeAll(async () => {
  const nats = await startNatsServer({
    bin: stack().bins.nats,
    dataDir: join(tempDir(), 'nats'),
    port: await freePort(),
  })
  natsStop = () => nats.stop()
  const { database } = await ownDatabase('burrow_e2e')
  burrow = await startTestBurrow({ NATS_URL: nats.url, CLICKHOUSE_DATABASE: database })
})
afterAll(async () => {
  await burrow?.stop()
  await natsStop?.()
})

describe('through capture', () => {
  it('projects events posted to /batch/ with their persons', async () => {
    const { project_api_key: token, project_id: team } = burrow.credentials
    const batch = [
      {
        event: '$pageview',
        distinct_id: 'web-anon',
        timestamp: '2024-06-01T10:00:00.000Z',
        properties: { $current_url: 'https://x.io/a' },
      },
      {
        event: '$identify',
        distinct_id: 'web-user',
        timestamp: '2024-06-01T10:00:01.000Z',
        properties: { $anon_distinct_id: 'web-anon', $set: { email: 'w@x.io' } },
      },
      {
        event: '$feature_flag_called',
        distinct_id: 'web-user',
        timestamp: '2024-06-01T10:00:02.000Z',
        properties: { $feature_flag: 'f', $feature_flag_response: 'v1' },
      },
    ]
    const res = await fetch(`${burrow.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: token, batch }),
    })
    expect(res.status).toBe(200)
    const ch = burrow.runtime.ch
    const got = await waitForRows<{ event: string; distinct_id: string; person_id: string }>(
      ch,
      `SELECT event, distinct_id, toString(person_id) AS person_id FROM events
       WHERE team_id = ${team} ORDER BY timestamp`,
      3,
    )
    const P = uuidv5(`${team}:web-anon`, PERSON_NAMESPACE)
    expect(got).toEqual([
      { event: '$pageview', distinct_id: 'web-anon', person_id: P },
      { event: '$identify', distinct_id: 'web-user', person_id: P },
      { event: '$feature_flag_called', distinct_id: 'web-user', person_id: P },
    ])
    const person = await rows<{ properties: string }>(
      ch,
      `SELECT argMax(properties, version) AS properties FROM person WHERE team_id = ${team} GROUP BY id`,
    )
    expect(JSON.parse(person[0]!.properties)).toMatchObject({
      email: 'w@x.io',
      $current_url: 'https://x.io/a',
      $initial_current_url: 'https://x.io/a',
    })
    const usage = await rows<{ calls: string }>(
      ch,
      `SELECT calls FROM feature_flag_usage WHERE team_id = ${team} AND flag = 'f' AND variant = 'v1'`,
    )
    expect(usage.map((u) => Number(u.calls))).toEqual([1])
  })

  it('projects one historical /batch/ over 120 months completely, and a live event meanwhile', async () => {
    const { project_api_key: token, project_id: team } = burrow.credentials
    // The issue's case: current ClickHouse refuses one INSERT over more than 100 partitions (months).
    const batch = Array.from({ length: 120 }, (_, m) => ({
      event: 'imported',
      distinct_id: `old-${m % 3}`,
      timestamp: new Date(Date.UTC(2014, m, 10)).toISOString(),
      properties: { m },
    }))
    const post = (body: unknown) =>
      fetch(`${burrow.url}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    expect((await post({ api_key: token, historical_migration: true, batch })).status).toBe(200)
    const live = { event: 'live now', distinct_id: 'live-1', properties: {} }
    expect((await post({ api_key: token, batch: [live] })).status).toBe(200)
    const ch = burrow.runtime.ch
    await waitForRows(ch, `SELECT 1 FROM events WHERE team_id = ${team} AND event = 'live now'`, 1)
    const [r] = await waitForRows<{ n: string; months: string }>(
      ch,
      // toString: one type for the counts and times, whatever the JSON format makes of 64-bit integers
      `SELECT toString(count() AS c) AS n, toString(uniqExact(toYYYYMM(timestamp))) AS months FROM events
       WHERE team_id = ${team} AND event = 'imported' HAVING c >= 120`,
      1,
    )
    expect(r).toEqual({ n: '120', months: '120' })
  })

  it('puts person properties sent at the top level (posthog-js identify) on the person', async () => {
    const { project_api_key: token, project_id: team } = burrow.credentials
    // posthog.identify('js-user', {email}, {first_plan}) as posthog-js sends it to /e/: $set and
    // $set_once beside `properties`; properties.$set also given, so PostHog's precedence shows.
    const body = {
      event: '$identify',
      token,
      properties: {
        distinct_id: 'js-user',
        $anon_distinct_id: 'js-anon',
        $set: { email: 'old@x.io', plan: 'free' },
      },
      $set: { email: 'js@x.io' },
      $set_once: { first_plan: 'free' },
      timestamp: '2024-07-01T10:00:00.000Z',
    }
    const res = await fetch(`${burrow.url}/e/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(res.status).toBe(200)
    const ch = burrow.runtime.ch
    const [person] = await waitForRows<{ properties: string }>(
      ch,
      `SELECT argMax(properties, version) AS properties FROM person WHERE team_id = ${team}
       AND id = toUUID('${uuidv5(`${team}:js-user`, PERSON_NAMESPACE)}') GROUP BY id`,
      1,
    )
    expect(JSON.parse(person!.properties)).toMatchObject({
      email: 'js@x.io',
      plan: 'free',
      first_plan: 'free',
    })
    const [event] = await waitForRows<{ properties: string }>(
      ch,
      `SELECT properties FROM events WHERE team_id = ${team} AND distinct_id = 'js-user'`,
      1,
    )
    expect(JSON.parse(event!.properties).$set).toEqual({ email: 'js@x.io', plan: 'free' })
  })

  it('gives the person the properties of posthog-node identify', async () => {
    const { project_api_key: token, project_id: team } = burrow.credentials
    const client = new PostHog(token, { host: burrow.url, flushAt: 1, flushInterval: 0 })
    client.identify({
      distinctId: 'node-person',
      properties: { email: 'n@x.io', $set_once: { source: 'node' } },
    })
    await client.shutdown()
    const [person] = await waitForRows<{ properties: string }>(
      burrow.runtime.ch,
      `SELECT argMax(properties, version) AS properties FROM person WHERE team_id = ${team}
       AND id = toUUID('${uuidv5(`${team}:node-person`, PERSON_NAMESPACE)}') GROUP BY id`,
      1,
    )
    expect(JSON.parse(person!.properties)).toMatchObject({ email: 'n@x.io', source: 'node' })
  })
})

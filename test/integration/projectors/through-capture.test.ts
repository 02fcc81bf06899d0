import { join } from 'node:path'
import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { clickhouseClient } from '../../../src/clickhouse/client.ts'
import { stack, startTestBurrow, tempDir } from '../../harness/index.ts'
import { PERSON_NAMESPACE, rows, waitForRows } from './helpers.ts'

// The whole path, HTTP capture -> JetStream -> projector -> ClickHouse, inside one Burrow. It gets a NATS
// server and a database of its own: the default durable consumers would otherwise be shared with every
// other test file that starts a Burrow.
const database = `burrow_e2e_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
let burrow: RunningBurrow
let natsStop: () => Promise<void>

beforeAll(async () => {
  const nats = await startNatsServer({
    bin: stack().bins.nats,
    dataDir: join(tempDir(), 'nats'),
    port: await freePort(),
  })
  natsStop = () => nats.stop()
  burrow = await startTestBurrow({ NATS_URL: nats.url, CLICKHOUSE_DATABASE: database })
})
afterAll(async () => {
  await burrow?.stop()
  await natsStop?.()
  const admin = clickhouseClient(stack().clickhouseUrl)
  await admin.command({ query: `DROP DATABASE IF EXISTS ${database}` })
  await admin.close()
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
       WHERE team_id = ${team} ORDER BY timestamp_ms`,
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
})

// What operators rely on: /_ready through a drain, the Prometheus series the docs name, the log's
// retention limits applied to the EVENTS stream, and the ClickHouse retention job.
import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { afterAll, describe, expect, it } from 'vitest'
import { EVENTS_STREAM } from '../../../schema/jetstream.ts'
import { connectNats } from '../../../src/jetstream/connection.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { clickhouseClient } from '../../../src/clickhouse/client.ts'
import { migrateClickHouse } from '../../../src/clickhouse/migrate.ts'
import { dropExpiredPartitions, expiredMonths } from '../../../src/clickhouse/retention.ts'
import { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import { stack, startTestBurrow, tempDir } from '../../harness/index.ts'

const servers: { stop(): Promise<void> }[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
})

/** A NATS of this file's own: the EVENTS limits below must not touch the shared stream. */
async function privateNats() {
  const n = await startNatsServer({
    bin: stack().bins.nats,
    dataDir: join(tempDir(), 'nats'),
    port: await freePort(),
  })
  servers.push(n)
  return n
}

describe('readiness and metrics', () => {
  it('/_ready is 200 while serving and 503 while draining; /metrics has lag and query series', async () => {
    const n = await privateNats()
    const b = await startTestBurrow({ NATS_URL: n.url, SHUTDOWN_DRAIN_MS: '1500' })
    const ready = await fetch(`${b.url}/_ready`)
    expect(ready.status).toBe(200)
    expect(await ready.json()).toEqual({ status: 'ready' })

    const q = await fetch(`${b.url}/api/projects/${b.credentials.project_id}/query/`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${b.credentials.personal_api_key}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ query: { kind: 'HogQLQuery', query: 'SELECT 1' }, refresh: 'force_blocking' }),
    })
    expect(q.status).toBe(200)
    const metrics = await (await fetch(`${b.url}/metrics`)).text()
    for (const consumer of ['projector-live', 'projector-historical', 'projector-overflow']) {
      expect(metrics).toContain(`burrow_projector_lag_messages{consumer="${consumer}",state="pending"} 0`)
      expect(metrics).toContain(`burrow_projector_lag_messages{consumer="${consumer}",state="ack_pending"} 0`)
    }
    expect(metrics).toMatch(/burrow_query_duration_seconds_count\{kind="HogQLQuery"\} [1-9]/)

    const stopping = b.stop()
    await new Promise((r) => setTimeout(r, 200))
    const draining = await fetch(`${b.url}/_ready`)
    expect(draining.status).toBe(503)
    expect(await draining.json()).toEqual({ status: 'draining' })
    await stopping
  })
})

describe('retention', () => {
  it('LOG_MAX_AGE_DAYS and LOG_MAX_BYTES become the EVENTS stream limits', async () => {
    const n = await privateNats()
    await startTestBurrow({ NATS_URL: n.url, LOG_MAX_AGE_DAYS: '7', LOG_MAX_BYTES: '1073741824' })
    const nc = await connectNats(n.url)
    const info = await (await jetstreamManager(nc)).streams.info(EVENTS_STREAM)
    await nc.close()
    expect(info.config.max_age).toBe(7 * 24 * 3600 * 1e9)
    expect(info.config.max_bytes).toBe(1024 ** 3)
  })

  it('a month is expired once all of it is older than the retention age', () => {
    const now = new Date('2024-05-15T00:00:00Z')
    // 30 days before is 2024-04-15: March ended before that, April did not.
    expect(expiredMonths(['202402', '202403', '202404', '202405', 'all', '2024'], 30, now)).toEqual([
      '202402',
      '202403',
    ])
    // Exactly at the boundary: April ends 2024-05-01T00:00Z = now - 14 days.
    expect(expiredMonths(['202404'], 14, now)).toEqual(['202404'])
    expect(expiredMonths(['202404'], 15, now)).toEqual([])
  })

  it('drops the expired month partitions of events and keeps the rest', async () => {
    const db = `burrow_retention_${Date.now()}`
    const { client: ch } = await migrateClickHouse(stack().clickhouseUrl, db)
    try {
      const row = (t: string) => `(1, '${randomUUID()}', 'e', 'd', '${t}', '{}')`
      await ch.command({
        query: `INSERT INTO events (team_id, uuid, event, distinct_id, timestamp, properties) VALUES
          ${['2020-01-10 00:00:00', '2020-02-10 00:00:00', '2020-02-20 00:00:00', '2024-05-02 00:00:00'].map(row).join(', ')}`,
      })
      const dropped = await dropExpiredPartitions(
        TableAdmin.single(ch, db),
        [{ table: 'events', days: 10 }],
        new Date('2024-05-15T00:00:00Z'),
      )
      expect(dropped).toEqual([
        { table: 'events', partition: '202001' },
        { table: 'events', partition: '202002' },
      ])
      const rs = await ch.query({
        query: 'SELECT toString(timestamp) AS t FROM events ORDER BY t',
        format: 'JSONEachRow',
      })
      expect(await rs.json()).toEqual([{ t: '2024-05-02 00:00:00.000000' }])
      // Nothing left to drop: a second run (or a second projector process) is a no-op.
      expect(
        await dropExpiredPartitions(
          TableAdmin.single(ch, db),
          [{ table: 'events', days: 10 }],
          new Date('2024-05-15'),
        ),
      ).toEqual([])
    } finally {
      await ch.close()
      const admin = clickhouseClient(stack().clickhouseUrl)
      await admin.command({ query: `DROP DATABASE IF EXISTS ${db}` })
      await admin.close()
    }
  })
})

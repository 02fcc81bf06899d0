import { describe, expect, it } from 'vitest'
import { connectNats, migrateJetStream } from '../../../src/jetstream/connection.ts'
import { clickhouseClient } from '../../../src/clickhouse/client.ts'
import { loadMigrations, migrateClickHouse } from '../../../src/clickhouse/migrate.ts'
import { stack } from '../../harness/index.ts'

describe('migrate', () => {
  it('applies every ClickHouse migration once; a second run is a no-op', async () => {
    const s = stack()
    const db = `migrate_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
    const first = await migrateClickHouse(s.clickhouseUrl, db)
    expect(first.applied).toEqual(loadMigrations().map((m) => m.version))
    const tables = async () => {
      const rs = await first.client.query({ query: 'SHOW TABLES', format: 'JSONEachRow' })
      return (await rs.json<{ name: string }>()).map((r) => r.name).sort()
    }
    const before = await tables()
    expect(before).toEqual(expect.arrayContaining(['events', 'person', 'person_distinct_id', 'groups']))
    const second = await migrateClickHouse(s.clickhouseUrl, db)
    expect(second.applied).toEqual([])
    expect(await tables()).toEqual(before)
    const rs = await first.client.query({
      query: 'SELECT version, count() AS n FROM schema_migrations GROUP BY version',
      format: 'JSONEachRow',
    })
    expect((await rs.json<{ n: string }>()).every((r) => Number(r.n) === 1)).toBe(true)
    await Promise.all([first.client.close(), second.client.close()])
    const admin = clickhouseClient(s.clickhouseUrl)
    await admin.command({ query: `DROP DATABASE ${db}` })
    await admin.close()
  })

  it('creates JetStream streams and buckets once', async () => {
    const nc = await connectNats(stack().natsUrl)
    // the harness already migrated this server: nothing is left to create
    expect((await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })).created).toEqual([])
    await nc.close()
  })
})

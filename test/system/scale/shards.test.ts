// The schema's cluster mode (schema/cluster.ts) on two embedded ClickHouse servers on loopback,
// each a shard with its own TCP and HTTP listeners (src/stack/clickhouse-server.ts). Burrow captures
// and projects into Distributed tables, then the same rows are copied into a one-server database,
// and HogQL and insight queries answer the same on 2 shards as on one.
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { migrateClickHouseCluster, shardDatabase } from '../../../schema/cluster.ts'
import { type ClickHouseClient, clickhouseClient, selectRows } from '../../../src/clickhouse/client.ts'
import { materializeProperty } from '../../../src/clickhouse/materialize.ts'
import { migrateDeployment } from '../../../src/clickhouse/deployment.ts'
import { migrateClickHouse, SCHEMA_DIR } from '../../../src/clickhouse/migrate.ts'
import { dropExpiredPartitions } from '../../../src/clickhouse/retention.ts'
import { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { replay } from '../../../src/projectors/replay.ts'
import { replayRecordings } from '../../../src/recordings/replay.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startClickHouseServer } from '../../../src/stack/clickhouse-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { clickhouseLibrary } from '../../../src/stack/clickhouse-library.ts'
import { api, nats, startTestBurrow, tempDir } from '../../harness/index.ts'
import { postSnapshots, rr } from '../../integration/recordings/helpers.ts'
import { sendBatch, sleep, type TestEvent } from '../reliability/helpers.ts'

const DB = 'burrow'
const ONE = 'burrow_one'
let shards: { url: string; stop(): Promise<void> }[] = []
let sharded: RunningBurrow
let single: RunningBurrow
let ch: ClickHouseClient

const at = (day: number, s: number) => new Date(Date.UTC(2024, 2, day, 10, 0, s)).toISOString()

/** Visitors who sign up, some identify (merging two distinct ids), some pay; three days. */
function dataset(): TestEvent[] {
  const out: TestEvent[] = []
  let n = 0
  const e = (event: string, distinct_id: string, day: number, properties: Record<string, unknown> = {}) =>
    out.push({
      uuid: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
      event,
      distinct_id,
      properties,
      timestamp: at(day, n % 60),
    })
  for (let u = 0; u < 40; u++) {
    const anon = `anon-${u}`
    const day = 1 + (u % 3)
    e('$pageview', anon, day, { $current_url: `https://x.test/${u % 4}`, plan: u % 2 ? 'pro' : 'free' })
    if (u % 4 !== 3) e('signup', anon, day)
    if (u % 2 === 0)
      e('$identify', `user-${u}`, day, { $anon_distinct_id: anon, $set: { email: `u${u}@x.test` } })
    if (u % 3 === 0) e('activate', u % 2 === 0 ? `user-${u}` : anon, Math.min(day + 1, 3))
    if (u % 6 === 0) e('pay', `user-${u}`, 3, { amount: u })
  }
  return out
}

beforeAll(async () => {
  const dir = tempDir('burrow-shards-')
  const tcp = [await freePort(), await freePort()]
  const library = await clickhouseLibrary()
  shards = await Promise.all(
    tcp.map(async (tcpPort, i) =>
      startClickHouseServer({
        library,
        dataDir: join(dir, `s${i + 1}`),
        httpPort: await freePort(),
        tcpPort,
        cluster: { name: 'burrow', shardTcpPorts: tcp, shard: i + 1 },
      }),
    ),
  )
  await migrateClickHouseCluster({ shardUrls: shards.map((s) => s.url), database: DB, cluster: 'burrow' })
  sharded = await startTestBurrow({
    CLICKHOUSE_URL: shards[0]!.url,
    CLICKHOUSE_SHARD_URLS: shards.map((s) => s.url).join(','),
    CLICKHOUSE_DATABASE: DB,
  })
  ch = clickhouseClient(shards[0]!.url)
})

afterAll(async () => {
  await ch?.close()
  await single?.stop()
  await sharded?.stop()
  await Promise.all(shards.map((s) => s.stop()))
})

async function query(b: RunningBurrow, q: unknown): Promise<unknown> {
  const res = await api(b.url, b.credentials.personal_api_key)(
    'POST',
    `/api/projects/${b.credentials.project_id}/query/`,
    { query: q, refresh: 'force_blocking' },
  )
  expect(res.status, res.text).toBe(200)
  return res.body.results
}

describe('ClickHouse cluster mode (2 shards)', () => {
  it('spreads the rows over both shards and answers as one server does', async () => {
    const events = dataset()
    expect(await sendBatch(sharded.url, sharded.credentials.project_api_key, events)).toBe(200)
    const team = sharded.credentials.project_id
    for (let i = 0; i < 240; i++) {
      const [r] = await selectRows<{ n: string }>(
        ch,
        `SELECT count() AS n FROM ${DB}.events WHERE team_id = ${team}`,
      )
      if (Number(r!.n) >= events.length) break
      await sleep(250)
    }
    // both shards hold events and persons
    for (const s of shards) {
      const c = clickhouseClient(s.url, shardDatabase(DB))
      const [r] = await selectRows<{ e: string; p: string }>(
        c,
        `SELECT (SELECT count() FROM events) AS e, (SELECT count() FROM person) AS p`,
      )
      await c.close()
      expect(Number(r!.e)).toBeGreaterThan(0)
      expect(Number(r!.p)).toBeGreaterThan(0)
    }
    // the same rows in one server's database, for the one-server answers
    const { client } = await migrateClickHouse(shards[0]!.url, ONE)
    await client.close()
    const tables = await selectRows<{ name: string }>(
      ch,
      `SELECT name FROM system.tables WHERE database = '${shardDatabase(DB)}' AND engine LIKE '%MergeTree' AND name != 'schema_migrations'`,
    )
    for (const { name } of tables)
      await ch.command({ query: `INSERT INTO ${ONE}.${name} SELECT * FROM ${DB}.${name}` })
    // every event reached the copy: the Distributed tables read both shards
    const [copied] = await selectRows<{ n: string }>(
      ch,
      `SELECT count() AS n FROM ${ONE}.events WHERE team_id = ${team}`,
    )
    expect(Number(copied!.n)).toBe(events.length)
    single = await startTestBurrow({ CLICKHOUSE_URL: shards[0]!.url, CLICKHOUSE_DATABASE: ONE, ROLE: 'api' })

    const range = { date_from: '2024-03-01', date_to: '2024-03-03' }
    const queries: unknown[] = [
      { kind: 'HogQLQuery', query: 'SELECT event, count() FROM events GROUP BY event ORDER BY event' },
      { kind: 'HogQLQuery', query: 'SELECT count(DISTINCT person_id) FROM events' },
      {
        kind: 'HogQLQuery',
        query:
          "SELECT person.properties.email AS email, count() FROM events WHERE email != '' GROUP BY email ORDER BY email",
      },
      {
        kind: 'TrendsQuery',
        series: [
          { kind: 'EventsNode', event: '$pageview', math: 'dau' },
          { kind: 'EventsNode', event: 'signup' },
        ],
        interval: 'day',
        dateRange: range,
      },
      {
        kind: 'TrendsQuery',
        series: [{ kind: 'EventsNode', event: '$pageview' }],
        interval: 'day',
        dateRange: range,
        breakdownFilter: { breakdown: 'plan', breakdown_type: 'event' },
      },
      {
        kind: 'FunnelsQuery',
        series: ['signup', 'activate', 'pay'].map((event) => ({ kind: 'EventsNode', event })),
        dateRange: range,
        funnelsFilter: {},
      },
    ]
    for (const q of queries) {
      const one = await query(single, q)
      expect(await query(sharded, q), JSON.stringify(q)).toEqual(one)
    }
    // the questions were not empty
    expect(JSON.stringify(await query(single, queries[2]))).toContain('u0@x.test')
  })

  // `burrow replay` builds fresh tables and swaps them in. Through the front alone it would make
  // Distributed tables over the live local tables (the rebuild written into the live rows, then a
  // swap of two fronts over the same rows); it must build, copy and swap the shards' local tables.
  // Runs after the test above (its rows), before the deletes below change them.
  it('replays a project into fresh tables on every shard and swaps them in', async () => {
    const team = sharded.credentials.project_id
    const shardUrls = shards.map((s) => s.url)
    const front = clickhouseClient(shards[0]!.url, DB)
    const admin = await TableAdmin.open(front, DB, shardUrls)
    const other = team + 777
    const views = async () => ({
      events: await selectRows(
        front,
        `SELECT toString(uuid) AS uuid, event, distinct_id, toString(person_id) AS person FROM events
         WHERE team_id = ${team} ORDER BY uuid`,
      ),
      persons: await selectRows(
        front,
        `SELECT toString(id) AS id, argMax(properties, version) AS p, argMax(is_identified, version) AS i
         FROM person WHERE team_id = ${team} GROUP BY id ORDER BY id`,
      ),
      distinctIds: await selectRows(
        front,
        `SELECT distinct_id, toString(argMax(person_id, version)) AS person FROM person_distinct_id
         WHERE team_id = ${team} GROUP BY distinct_id ORDER BY distinct_id`,
      ),
    })
    const count = async (t: number) =>
      Number(
        (await selectRows<{ n: string }>(front, `SELECT count() AS n FROM events WHERE team_id = ${t}`))[0]!
          .n,
      )
    try {
      // a row of another project, which a one-project replay carries over on its shard
      const s1 = clickhouseClient(shards[0]!.url, shardDatabase(DB))
      await s1.command({
        query: `INSERT INTO events (team_id, uuid, event, distinct_id, timestamp, properties)
                SELECT ${other}, generateUUIDv4(), 'kept', 'd', toDateTime('2024-03-02 00:00:00', 'UTC'), '{}'`,
      })
      await s1.close()
      const before = await views()
      expect(before.events).toHaveLength(dataset().length)
      expect(before.persons.length).toBeGreaterThan(0)

      const result = await replay({
        nc: await nats(),
        ch: front,
        admin,
        log: createLogger('silent'),
        project: team,
        plugins: false,
      })
      expect(result.swapped).toBe(true)
      expect(result.events).toBe(dataset().length)
      // every row once (a rebuild written into the live rows would count them twice), the same views
      expect(await count(team)).toBe(dataset().length)
      expect(await views()).toEqual(before)
      expect(await count(other)).toBe(1)
      for (const [i, s] of shards.entries()) {
        const c = clickhouseClient(s.url)
        const [local] = await selectRows<{ n: string }>(
          c,
          `SELECT count() AS n FROM ${shardDatabase(DB)}.events WHERE team_id = ${team}`,
        )
        expect(Number(local!.n), `shard ${i + 1}`).toBeGreaterThan(0)
        const leftovers = await selectRows<{ database: string; name: string }>(
          c,
          `SELECT database, name FROM system.tables WHERE database IN ('${DB}', '${shardDatabase(DB)}')
           AND endsWith(name, '_${result.id}')`,
        )
        expect(leftovers, `shard ${i + 1}`).toEqual([])
        const engines = await selectRows<{ engine: string }>(
          c,
          `SELECT engine FROM system.tables WHERE database = '${DB}' AND name = 'events'`,
        )
        expect(engines).toEqual([{ engine: 'Distributed' }])
        await c.close()
      }

      // live projection goes on over the swapped tables and the replayed identity state
      const later: TestEvent = {
        uuid: '00000000-0000-4000-8000-999999999999',
        event: 'later',
        distinct_id: 'anon-0',
        properties: {},
        timestamp: at(3, 59),
      }
      expect(await sendBatch(sharded.url, sharded.credentials.project_api_key, [later])).toBe(200)
      for (let i = 0; i < 240 && (await count(team)) < dataset().length + 1; i++) await sleep(250)
      const persons = await selectRows<{ distinct_id: string; person: string }>(
        front,
        `SELECT distinct_id, toString(person_id) AS person FROM events
         WHERE team_id = ${team} AND distinct_id IN ('anon-0', 'user-0') AND event IN ('later', '$identify')`,
      )
      // anon-0 was merged into user-0's person by the $identify: the new event is stamped with it
      expect(persons).toHaveLength(2)
      expect(persons[0]!.person).toBe(persons[1]!.person)
    } finally {
      await admin.close()
      await front.close()
    }
  })

  // The recordings replay builds, swaps and drops its tables the same way (TableAdmin).
  it("replays a project's recordings on every shard and swaps them in", async () => {
    const team = sharded.credentials.project_id
    const front = clickhouseClient(shards[0]!.url, DB)
    const admin = await TableAdmin.open(
      front,
      DB,
      shards.map((s) => s.url),
    )
    const t0 = Date.now() - 120_000
    const sessions = ['rec-a', 'rec-b', 'rec-c', 'rec-d']
    const views = async () => ({
      chunks: await selectRows(
        front,
        `SELECT session_id, chunk_id, part, toString(cityHash64(data)) AS h FROM session_replay_snapshots
         WHERE team_id = ${team} ORDER BY session_id, chunk_id, part`,
      ),
      sessions: await selectRows(
        front,
        `SELECT session_id, sumMerge(event_count) AS n FROM session_replay_events
         WHERE team_id = ${team} GROUP BY session_id ORDER BY session_id`,
      ),
    })
    try {
      for (const [i, session] of sessions.entries()) {
        const res = await postSnapshots(sharded.url, sharded.credentials.project_api_key, [
          {
            session,
            window: `w${i}`,
            distinctId: `anon-${i}`,
            events: [rr.meta(t0 + i, 'https://x.test/'), rr.full(t0 + i + 10), rr.click(t0 + i + 1000)],
          },
        ])
        expect(res.status).toBe(200)
      }
      let before = await views()
      for (let i = 0; i < 240 && before.sessions.length < sessions.length; i++) {
        await sleep(250)
        before = await views()
      }
      expect(before.sessions.map((r) => (r as { session_id: string }).session_id)).toEqual(sessions)
      // a chunk of another project, which a one-project replay carries over on its shard
      const other = team + 778
      const s1 = clickhouseClient(shards[0]!.url, shardDatabase(DB))
      await s1.command({
        query: `INSERT INTO session_replay_snapshots (team_id, session_id, chunk_id, first_ms, last_ms, received_at, data)
                VALUES (${other}, 'kept', 'c1', ${t0}, ${t0}, now(), '[]')`,
      })
      await s1.close()
      const otherChunks = async () =>
        Number(
          (
            await selectRows<{ n: string }>(
              front,
              `SELECT count() AS n FROM session_replay_snapshots WHERE team_id = ${other}`,
            )
          )[0]!.n,
        )
      expect(await otherChunks()).toBe(1)

      const result = await replayRecordings({
        nc: await nats(),
        ch: front,
        admin,
        log: createLogger('silent'),
        retentionDays: 30,
        project: team,
      })
      expect(result.swapped).toBe(true)
      // the same chunks and sessions, each chunk once; the other project's chunk once
      expect(await views()).toEqual(before)
      expect(await otherChunks()).toBe(1)
      for (const [i, s] of shards.entries()) {
        const c = clickhouseClient(s.url)
        const leftovers = await selectRows<{ database: string; name: string }>(
          c,
          `SELECT database, name FROM system.tables WHERE database IN ('${DB}', '${shardDatabase(DB)}')
           AND endsWith(name, '_${result.id}')`,
        )
        expect(leftovers, `shard ${i + 1}`).toEqual([])
        await c.close()
      }
    } finally {
      await admin.close()
      await front.close()
    }
  })

  // Statements that change tables in place cannot go through Distributed tables: they run on every
  // shard's local table (src/clickhouse/table-admin.ts). Runs after the test above (its rows).
  it('deletes, materializes and expires on every shard', async () => {
    const team = sharded.credentials.project_id
    const shardUrls = shards.map((s) => s.url)
    const front = clickhouseClient(shards[0]!.url, DB)
    const locals = shards.map((s) => clickhouseClient(s.url, shardDatabase(DB)))
    const admin = await TableAdmin.open(front, DB, shardUrls)
    try {
      expect(admin.clustered).toBe(true)
      await expect(TableAdmin.open(front, DB, [])).rejects.toThrow(/CLICKHOUSE_SHARD_URLS/)
      const count = async (where: string) =>
        Number(
          (await selectRows<{ n: string }>(front, `SELECT count() AS n FROM events WHERE ${where}`))[0]!.n,
        )

      // a materialized column exists on the shards and reads through the Distributed table
      const column = await materializeProperty(front, admin, 'plan')
      for (const c of locals) {
        const cols = await selectRows<{ name: string }>(
          c,
          `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = '${column}'`,
        )
        expect(cols).toHaveLength(1)
      }
      const plans = await selectRows<{ p: string; n: string }>(
        front,
        `SELECT \`${column}\` AS p, count() AS n FROM events WHERE team_id = ${team} AND event = '$pageview' GROUP BY p ORDER BY p`,
      )
      // Number: 26.x's JSON has 64-bit counts unquoted (output_format_json_quote_64bit_integers = 0)
      expect(plans.map((r) => ({ p: r.p, n: Number(r.n) }))).toEqual([
        { p: 'free', n: 20 },
        { p: 'pro', n: 20 },
      ])

      // a person's delete with its events removes them from every shard
      const [victim] = await selectRows<{ id: string; n: string }>(
        front,
        `SELECT toString(person_id) AS id, count() AS n FROM events WHERE team_id = ${team} GROUP BY id ORDER BY n DESC, id LIMIT 1`,
      )
      const before = await count(`team_id = ${team}`)
      const res = await api(sharded.url, sharded.credentials.personal_api_key)(
        'DELETE',
        `/api/projects/${team}/persons/${victim!.id}/?delete_events=true`,
      )
      expect(res.status, res.text).toBe(202)
      // person deletes with events are batched into one mutation per interval (docs/security.md)
      await expect
        .poll(
          async () => {
            await admin.mutationsDone(['events'])
            return count(`team_id = ${team} AND person_id = toUUID('${victim!.id}')`)
          },
          { timeout: 60_000, interval: 1000 },
        )
        .toBe(0)
      expect(await count(`team_id = ${team}`)).toBe(before - Number(victim!.n))

      // retention drops an expired month on every shard and keeps the young one
      for (const c of locals) {
        await c.command({
          query: `INSERT INTO events (team_id, uuid, event, distinct_id, timestamp, properties)
                  SELECT ${team}, generateUUIDv4(), 'old', 'd', toDateTime('2020-01-10 00:00:00', 'UTC'), '{}'`,
        })
      }
      expect(await count(`team_id = ${team} AND event = 'old'`)).toBe(2)
      const dropped = await dropExpiredPartitions(
        admin,
        [{ table: 'events', days: 10 }],
        new Date('2024-03-20T00:00:00Z'),
      )
      expect(dropped).toEqual([{ table: 'events', partition: '202001' }])
      expect(await count(`team_id = ${team} AND event = 'old'`)).toBe(0)
      expect(await count(`team_id = ${team}`)).toBe(before - Number(victim!.n))
    } finally {
      await admin.close()
      await front.close()
      await Promise.all(locals.map((c) => c.close()))
    }
  })

  // An upgrade with a new migration (`burrow migrate`, `burrow start`): in cluster mode it must reach
  // every shard's local tables and the Distributed tables over them, not the front alone.
  it('applies a new migration on every shard and to the Distributed tables', async () => {
    const dir = tempDir('burrow-migrations-')
    for (const f of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.sql'))) {
      copyFileSync(join(SCHEMA_DIR, f), join(dir, f))
    }
    writeFileSync(
      join(dir, '9990_upgrade_probe.sql'),
      'CREATE TABLE IF NOT EXISTS upgrade_probe (team_id UInt32, note String) ENGINE = MergeTree ORDER BY team_id;\n' +
        'ALTER TABLE events ADD COLUMN upgrade_note String;\n',
    )
    const shardUrls = shards.map((s) => s.url)
    const first = await migrateDeployment({ url: shards[0]!.url, database: DB, shardUrls, dir })
    const front = first.client
    const fronts = shards.map((s) => clickhouseClient(s.url, DB))
    try {
      expect(first.applied).toEqual(['9990_upgrade_probe'])
      for (const [i, c] of fronts.entries()) {
        const engines = await selectRows<{ database: string; engine: string }>(
          c,
          `SELECT database, engine FROM system.tables WHERE name = 'upgrade_probe' ORDER BY database`,
        )
        expect(engines, `shard ${i + 1}`).toEqual([
          { database: DB, engine: 'Distributed' },
          { database: shardDatabase(DB), engine: 'MergeTree' },
        ])
        const columns = await selectRows<{ database: string }>(
          c,
          `SELECT database FROM system.columns WHERE table = 'events' AND name = 'upgrade_note' ORDER BY database`,
        )
        expect(columns, `shard ${i + 1}`).toEqual([{ database: DB }, { database: shardDatabase(DB) }])
      }
      // the new column reads through the front from both shards' rows
      const [row] = await selectRows<{ n: string; empty: string }>(
        front,
        "SELECT count() AS n, countIf(upgrade_note = '') AS empty FROM events",
      )
      expect(Number(row!.n)).toBeGreaterThan(0)
      expect(row!.empty).toBe(row!.n)
      await front.command({
        query: "INSERT INTO upgrade_probe (team_id, note) VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')",
      })
      const [probe] = await selectRows<{ n: string }>(front, 'SELECT count() AS n FROM upgrade_probe')
      expect(Number(probe!.n)).toBe(4)

      const again = await migrateDeployment({ url: shards[0]!.url, database: DB, shardUrls, dir })
      await again.client.close()
      expect(again.applied).toEqual([])
      // without the shard URLs the front is refused rather than migrated on one server
      await expect(
        migrateDeployment({ url: shards[0]!.url, database: DB, shardUrls: [], dir }),
      ).rejects.toThrow(/CLICKHOUSE_SHARD_URLS/)
    } finally {
      await front.close()
      await Promise.all(fronts.map((c) => c.close()))
    }
  })
})

// The ClickHouse schema's cluster mode (docs/scaling.md): every shard holds the ordinary schema in
// `<database>_shard` (local tables, applied by the usual migrations), and `<database>` on every
// shard holds, under the same names, a Distributed table over each local table (and the views,
// recreated over the Distributed tables). Burrow's queries and writes use `<database>` unchanged.
// Each table is sharded by its own ORDER BY key, so every version of a row (ReplacingMergeTree,
// AggregatingMergeTree) lands on one shard and FINAL / merges stay correct per shard. Joins across
// tables are made GLOBAL by the servers' profile (distributed_product_mode = global), and inserts
// are synchronous (insert_distributed_sync = 1), so a projector acks only rows that are on their
// shard: both settings are in the shard servers' users.xml (src/stack/clickhouse-server.ts).
import { migrateClickHouse } from '../src/clickhouse/migrate.ts'
import { type ClickHouseClient, clickhouseClient, selectRows } from '../src/clickhouse/client.ts'
import type { Logger } from '../src/observability/logger.ts'

/** The cluster's name in the servers' `remote_servers` (the one `burrow cluster up` configures). */
export const CLICKHOUSE_CLUSTER = 'burrow'

/** The database on every shard that holds the local tables. */
export const shardDatabase = (database: string) => `${database}_shard`

/** The top-level comma-separated parts of an expression list. */
function splitTopLevel(list: string): string[] {
  const parts: string[] = []
  let depth = 0
  let start = 0
  for (let i = 0; i < list.length; i++) {
    const c = list[i]
    if (c === '(') depth++
    else if (c === ')') depth--
    else if (c === ',' && depth === 0) {
      parts.push(list.slice(start, i).trim())
      start = i + 1
    }
  }
  parts.push(list.slice(start).trim())
  return parts.filter(Boolean)
}

/**
 * `cityHash64(toString(c1), toString(c2), …)` over the ORDER BY key of a CREATE TABLE statement:
 * the sharding key of its table (toString: the key the shards were filled by, written when 18.16's
 * cityHash64 took no UUID; another key would move rows between shards).
 */
export function shardingKey(createTable: string): string {
  const m =
    createTable.match(/ORDER BY \((.+?)\)(?:\s+SETTINGS|\s*$)/s) ?? createTable.match(/ORDER BY (\S+)/)
  if (!m) throw new Error(`no ORDER BY in: ${createTable.slice(0, 200)}`)
  const columns = splitTopLevel(m[1]!).map((c) => `toString(${c})`)
  return `cityHash64(${columns.join(', ')})`
}

/**
 * Creates `front`.`table`, a Distributed table over the local `local`.`table` of every shard of
 * `cluster`, sharded as `local`.`shardedAs` (default: the table itself) is ordered. `ch`: a client
 * on one shard, which holds both databases.
 */
export async function createDistributedTable(
  ch: ClickHouseClient,
  o: { cluster: string; front: string; local: string; table: string; shardedAs?: string },
): Promise<void> {
  const key = shardingKey(await showCreate(ch, o.local, o.shardedAs ?? o.table))
  await ch.command({
    query:
      `CREATE TABLE IF NOT EXISTS ${o.front}.${o.table} AS ${o.local}.${o.table} ` +
      `ENGINE = Distributed(${o.cluster}, ${o.local}, ${o.table}, ${key})`,
  })
}

/** The CREATE statement of `database`.`table`. */
async function showCreate(ch: ClickHouseClient, database: string, table: string): Promise<string> {
  const [row] = await selectRows<{ statement: string }>(ch, `SHOW CREATE TABLE ${database}.${table}`)
  return row!.statement
}

/**
 * Applies the migrations on every shard, then the Distributed tables and views of `database`: a
 * new local table gets its Distributed table, and a column a migration added to a local table is
 * added to the Distributed table over it. Returns the versions applied (on the first shard; every
 * shard is at the same version after). Idempotent.
 */
export async function migrateClickHouseCluster(o: {
  shardUrls: string[]
  database: string
  cluster: string
  log?: Logger
  /** the migrations' directory (default: schema/clickhouse) */
  dir?: string
}): Promise<string[]> {
  const local = shardDatabase(o.database)
  const applied: string[][] = []
  for (const url of o.shardUrls) {
    const r = await migrateClickHouse(url, local, o.log, o.dir)
    applied.push(r.applied)
    await r.client.close()
  }
  for (const url of o.shardUrls) {
    const ch = clickhouseClient(url)
    try {
      await ch.command({ query: `CREATE DATABASE IF NOT EXISTS ${o.database}` })
      const tables = await (
        await ch.query({
          // no query parameters (sql.ts); `local` is a plain identifier (CLICKHOUSE_DATABASE's rule)
          query: `SELECT name, engine FROM system.tables WHERE database = '${local}' ORDER BY name`,
          format: 'JSONEachRow',
        })
      ).json<{ name: string; engine: string }>()
      for (const t of tables.filter((t) => t.engine.endsWith('MergeTree'))) {
        await createDistributedTable(ch, { cluster: o.cluster, front: o.database, local, table: t.name })
      }
      await addMissingColumns(ch, local, o.database)
      for (const t of tables.filter((t) => t.engine === 'View')) {
        const ddl = (await showCreate(ch, local, t.name))
          .replace(/^CREATE VIEW /, 'CREATE VIEW IF NOT EXISTS ')
          .split(`${local}.`)
          .join(`${o.database}.`)
        await ch.command({ query: ddl })
      }
    } finally {
      await ch.close()
    }
  }
  return applied[0] ?? []
}

/**
 * Columns of `local`'s tables that the Distributed table of the same name in `front` lacks (a
 * migration's ADD COLUMN after the Distributed table was made), added to it in the local order.
 */
async function addMissingColumns(ch: ClickHouseClient, local: string, front: string): Promise<void> {
  // Read in the tables' column order (system.columns lists a table's columns in order).
  const columns = (database: string) =>
    selectRows<{ table: string; name: string; type: string }>(
      ch,
      `SELECT table, name, type FROM system.columns WHERE database = '${database}'`,
    )
  const distributed = new Set(
    (
      await selectRows<{ name: string }>(
        ch,
        `SELECT name FROM system.tables WHERE database = '${front}' AND engine = 'Distributed'`,
      )
    ).map((t) => t.name),
  )
  const present = new Set((await columns(front)).map((c) => `${c.table}.${c.name}`))
  let previous: { table: string; name: string } | undefined
  for (const c of await columns(local)) {
    if (distributed.has(c.table) && !present.has(`${c.table}.${c.name}`)) {
      const after = previous?.table === c.table ? ` AFTER \`${previous.name}\`` : ''
      // Several processes may start at once after an upgrade: a column another one added is fine.
      await ch
        .command({ query: `ALTER TABLE ${front}.${c.table} ADD COLUMN \`${c.name}\` ${c.type}${after}` })
        .catch((err: unknown) => {
          if (!/already exists/i.test(String(err))) throw err
        })
    }
    previous = c
  }
}

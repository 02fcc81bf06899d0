import { CLICKHOUSE_CLUSTER, createDistributedTable, shardDatabase } from '../../schema/cluster.ts'
import { ConfigError } from '../config/env.ts'
import { type ClickHouseClient, clickhouseClient, selectRows } from './client.ts'
import { ddlColumns } from './migrate.ts'
import { sqlString } from './sql.ts'

// Statements that change a table in place: mutations (ALTER … DELETE), partition drops, new
// columns, and the replays' fresh tables, copies and swaps. On one server they run on the table. In
// the schema's cluster mode (schema/cluster.ts, docs/scaling.md) the tables Burrow reads and writes
// are Distributed tables, which hold no rows and
// refuse mutations and partition drops; the rows are in each shard's local table (`<db>_shard`),
// so these statements must run there, on every shard. `ON CLUSTER` needs ZooKeeper or ClickHouse
// Keeper (its distributed DDL queue), which Burrow does not require, so each shard is reached over its own HTTP URL
// (CLICKHOUSE_SHARD_URLS).

/** Where rows of a table live: a client and the database to name (none: the client's own). */
export interface TableHome {
  ch: ClickHouseClient
  database?: string
}

const name = (h: TableHome, table: string) => (h.database ? `${h.database}.${table}` : table)
const databaseOf = (h: TableHome) => (h.database ? sqlString(h.database) : 'currentDatabase()')

/**
 * Whether `database` is the cluster mode's front (its `events` is a Distributed table). Cluster mode
 * needs `shardUrls` (every shard's HTTP URL): without them this throws a ConfigError that names
 * CLICKHOUSE_SHARD_URLS, since statements sent through the front would miss the shards' tables.
 */
export async function clusterFront(
  ch: ClickHouseClient,
  database: string,
  shardUrls: string[],
): Promise<boolean> {
  const [row] = await selectRows<{ engine: string }>(
    ch,
    `SELECT engine FROM system.tables WHERE database = ${sqlString(database)} AND name = 'events'`,
  )
  if (row?.engine !== 'Distributed') return false
  if (shardUrls.length === 0) {
    throw new ConfigError([
      {
        variable: 'CLICKHOUSE_SHARD_URLS',
        message: `${database}.events is a Distributed table (cluster mode): list every shard's HTTP URL`,
      },
    ])
  }
  return true
}

/** Changes tables in place where their rows are: the table itself, or every shard's local table. */
export class TableAdmin {
  private constructor(
    /** the local tables' homes: one (the server's database) or one per shard */
    private readonly homes: TableHome[],
    /** cluster mode: each shard's database of Distributed tables (they also need new columns) */
    private readonly front: TableHome[],
    private readonly owned: ClickHouseClient[],
    /** cluster mode: each shard's HTTP URL, in the order of `homes` */
    private readonly urls: string[] = [],
  ) {}

  /** One server: `ch` on `database` (default: the client's own). */
  static single(ch: ClickHouseClient, database?: string): TableAdmin {
    return new TableAdmin([{ ch, database }], [], [])
  }

  /**
   * Reads whether `database` is the cluster mode's front (its `events` is a Distributed table) and
   * returns the admin for it. Cluster mode needs `shardUrls` (every shard's HTTP URL): without them
   * this throws a ConfigError that says so, since mutations through the front would fail.
   */
  static async open(ch: ClickHouseClient, database: string, shardUrls: string[]): Promise<TableAdmin> {
    if (!(await clusterFront(ch, database, shardUrls))) return TableAdmin.single(ch, database)
    const clients = shardUrls.map((url) => clickhouseClient(url))
    return new TableAdmin(
      clients.map((c) => ({ ch: c, database: shardDatabase(database) })),
      clients.map((c) => ({ ch: c, database })),
      clients,
      shardUrls,
    )
  }

  /**
   * Creates `table` with the structure of `like` where rows live, or from `ddl` (the schema files'
   * statement for `like`) when `like` is in an earlier layout; in cluster mode also its
   * Distributed table on every shard's front, sharded as `like` is (so that copied rows stay on
   * their shard and a swap keeps every row where the Distributed tables look for it).
   */
  async createLike(table: string, like: string, ddl?: string): Promise<void> {
    for (const h of this.homes) {
      // an earlier layout of `like` is not copied: the table is made as the schema files say now
      const fresh = ddl !== undefined && (await this.differs(h, like, ddl))
      const query = fresh
        ? ddl.replace(/^(CREATE TABLE IF NOT EXISTS )\S+/, `$1${name(h, table)}`)
        : `CREATE TABLE IF NOT EXISTS ${name(h, table)} AS ${name(h, like)}`
      await h.ch.command({ query })
    }
    for (const [i, f] of this.front.entries()) {
      const local = this.homes[i]!
      await createDistributedTable(f.ch, {
        cluster: CLICKHOUSE_CLUSTER,
        front: f.database!,
        local: local.database!,
        table,
        shardedAs: like,
      })
    }
  }

  /**
   * Whether `table` stores other columns than `ddl` defines (an earlier layout) on any home. Its
   * MATERIALIZED columns (burrow materialize) are not counted.
   */
  async outdated(table: string, ddl: string): Promise<boolean> {
    for (const h of this.homes) if (await this.differs(h, table, ddl)) return true
    return false
  }

  /** Whether `table` on home `h` stores other columns, or in another order, than `ddl` defines. */
  private async differs(h: TableHome, table: string, ddl: string): Promise<boolean> {
    const rows = await selectRows<{ name: string }>(
      h.ch,
      `SELECT name FROM system.columns WHERE database = ${databaseOf(h)} AND table = ${sqlString(table)}
       AND default_kind NOT IN ('MATERIALIZED', 'ALIAS') ORDER BY position`,
    )
    return rows.map((r) => r.name).join(',') !== ddlColumns(ddl).join(',')
  }

  /**
   * `INSERT INTO into SELECT * FROM from WHERE where` on every home (rows stay on their shard). Safe
   * to repeat after a crash: rows matching `where` that a previous attempt copied are deleted first
   * (a mutation, waited for), so each row is in `into` once.
   */
  async copyRows(into: string, from: string, where: string): Promise<void> {
    for (const h of this.homes) {
      const [left] = await selectRows<{ n: string }>(
        h.ch,
        `SELECT count() AS n FROM ${name(h, into)} WHERE ${where}`,
      )
      if (Number(left?.n ?? 0) > 0) {
        await h.ch.command({ query: `ALTER TABLE ${name(h, into)} DELETE WHERE ${where}` })
        if (!(await this.mutationsDoneOn([h], [into], 600_000))) {
          throw new Error(`the earlier copy into ${into} could not be removed (mutation still running)`)
        }
      }
      await h.ch.command({
        query: `INSERT INTO ${name(h, into)} SELECT * FROM ${name(h, from)} WHERE ${where}`,
      })
    }
  }

  /**
   * Puts each `fresh` table in place of `live`, which becomes `old`: one RENAME per home. In cluster
   * mode the shards' local tables are renamed (each shard at its own moment: callers pause writers
   * first); the Distributed tables name their local tables, so `live` reads the new rows at once, and
   * the Distributed tables of `fresh`, now over nothing, are dropped. Safe to repeat after a crash: a
   * home where every `fresh` is gone and every `old` exists was swapped already and is left alone.
   */
  async swap(tables: { live: string; fresh: string; old: string }[]): Promise<void> {
    for (const h of this.homes) {
      const names = tables.flatMap((t) => [t.fresh, t.old])
      const present = new Set(
        (
          await selectRows<{ name: string }>(
            h.ch,
            `SELECT name FROM system.tables WHERE database = ${databaseOf(h)}
             AND name IN (${names.map(sqlString).join(', ')})`,
          )
        ).map((r) => r.name),
      )
      if (tables.every((t) => !present.has(t.fresh) && present.has(t.old))) continue
      const pairs = tables.map(
        (t) => `${name(h, t.live)} TO ${name(h, t.old)}, ${name(h, t.fresh)} TO ${name(h, t.live)}`,
      )
      await h.ch.command({ query: `RENAME TABLE ${pairs.join(', ')}` })
    }
    for (const f of this.front) {
      for (const t of tables) await f.ch.command({ query: `DROP TABLE IF EXISTS ${name(f, t.fresh)}` })
    }
  }

  /** Drops `table` where rows live and, in cluster mode, its Distributed tables. */
  async drop(table: string): Promise<void> {
    for (const h of [...this.homes, ...this.front]) {
      await h.ch.command({ query: `DROP TABLE IF EXISTS ${name(h, table)}` })
    }
  }

  /**
   * Runs `fn` once per home with a client whose current database is the home's (for statements
   * written without a database, such as a migration's), closed after.
   */
  async onEachHome(fn: (ch: ClickHouseClient) => Promise<void>): Promise<void> {
    if (!this.clustered) {
      for (const h of this.homes) await fn(h.ch)
      return
    }
    for (const [i, h] of this.homes.entries()) {
      const bound = clickhouseClient(this.urls[i]!, h.database)
      try {
        await fn(bound)
      } finally {
        await bound.close()
      }
    }
  }

  /** Whether the tables are Distributed over shards. */
  get clustered(): boolean {
    return this.front.length > 0
  }

  /** `ALTER TABLE <table> <clause>` on every home of the table's rows (a mutation runs in the background). */
  async alter(table: string, clause: string): Promise<void> {
    for (const h of this.homes) await h.ch.command({ query: `ALTER TABLE ${name(h, table)} ${clause}` })
  }

  /** Adds a column to the table where rows are, then (cluster mode) to the Distributed tables over them. */
  async addColumn(table: string, definition: string): Promise<void> {
    for (const h of [...this.homes, ...this.front]) {
      await h.ch.command({ query: `ALTER TABLE ${name(h, table)} ADD COLUMN ${definition}` })
    }
  }

  /** The active partitions of `table` on each home. */
  async partitions(table: string): Promise<{ home: TableHome; partition: string }[]> {
    const out: { home: TableHome; partition: string }[] = []
    for (const home of this.homes) {
      const rows = await selectRows<{ partition_id: string }>(
        home.ch,
        `SELECT DISTINCT partition_id FROM system.parts
         WHERE database = ${databaseOf(home)} AND table = ${sqlString(table)} AND active`,
      )
      for (const r of rows) out.push({ home, partition: r.partition_id })
    }
    return out
  }

  /** Drops one partition of `table` on one home (from partitions()). */
  async dropPartition(home: TableHome, table: string, partition: string): Promise<void> {
    await home.ch.command({
      query: `ALTER TABLE ${name(home, table)} DROP PARTITION ID ${sqlString(partition)}`,
    })
  }

  /**
   * Waits until no mutation of `tables` is unfinished on any home (mutations run in the background
   * on every server version); false when `timeoutMs` passed first.
   */
  mutationsDone(tables: string[], timeoutMs = 60_000): Promise<boolean> {
    return this.mutationsDoneOn(this.homes, tables, timeoutMs)
  }

  private async mutationsDoneOn(homes: TableHome[], tables: string[], timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      let pending = 0
      for (const h of homes) {
        const [r] = await selectRows<{ n: string }>(
          h.ch,
          `SELECT count() AS n FROM system.mutations WHERE database = ${databaseOf(h)} AND is_done = 0
           AND table IN (${tables.map(sqlString).join(', ')})`,
        )
        pending += Number(r?.n ?? 0)
      }
      if (pending === 0) return true
      if (Date.now() > deadline) return false
      await new Promise((res) => setTimeout(res, 100))
    }
  }

  /** Closes the shard clients this admin opened (not the one it was given). */
  async close(): Promise<void> {
    await Promise.all(this.owned.map((c) => c.close()))
  }
}

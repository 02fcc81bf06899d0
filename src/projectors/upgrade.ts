import type { ClickHouseClient } from '../clickhouse/client.ts'
import { tableDdl } from '../clickhouse/migrate.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { RAW_SESSIONS } from '../sessions/replay.ts'
import { replay } from './replay.ts'
import { LIVE_TABLES, TABLE_KINDS } from './tables.ts'

// An upgrade that changes a projected table's layout (issue #39: DateTime64 timestamps, properties as
// JSON text only) edits its CREATE TABLE in the schema files; a deployment whose tables were made
// before keeps them as they were. The log is the truth, so such tables are rebuilt from it by the
// replay `burrow replay` runs, which makes its fresh tables from the current statements
// (TableAdmin.createLike) and swaps them in. A projector never writes into a table of another layout.

/**
 * The live projection tables whose stored columns differ from the schema files' statements, and
 * raw_sessions (fed from events by its view: rebuilt with them by the replay, sessions/replay.ts).
 */
export async function outdatedProjectionTables(admin: TableAdmin): Promise<string[]> {
  const out: string[] = []
  for (const table of [...TABLE_KINDS.map((k) => LIVE_TABLES[k]), RAW_SESSIONS]) {
    const ddl = tableDdl(table)
    if (ddl !== undefined && (await admin.outdated(table, ddl))) out.push(table)
  }
  return out
}

/**
 * Rebuilds the projection from the log when any of its tables is in an earlier layout, before the
 * projectors start; returns the tables that were outdated (none: nothing ran).
 */
export async function rebuildOutdatedProjection(o: {
  nc: NatsConnection
  ch: ClickHouseClient
  admin: TableAdmin
  log: Logger
  batchSize?: number
  partitions?: number
}): Promise<string[]> {
  const outdated = await outdatedProjectionTables(o.admin)
  if (outdated.length === 0) return []
  o.log.warn(
    { tables: outdated },
    'the projection tables are in an earlier layout: rebuilding them from the log (burrow replay) before projecting',
  )
  const r = await replay({ ...o, admin: o.admin })
  o.log.info({ events: r.events }, 'the projection was rebuilt in the current layout')
  return outdated
}

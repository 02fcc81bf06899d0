import type { ClickHouseClient } from '../clickhouse/client.ts'
import { selectRows } from '../clickhouse/client.ts'
import { loadMigrations, tableDdl } from '../clickhouse/migrate.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'

// What a replay (src/projectors/replay.ts) does for the sessions: raw_sessions is fed only by its
// materialized view from `events`, so the fresh events table a replay builds gets a fresh
// raw_sessions and a view of its own from the start, and the two swap in with the other tables.
// On current releases a view follows its source table by identity but its TO table by name: after
// the RENAME the fresh view still names the fresh table's old name, and the live view hangs on the
// old events table. So the replay's view is dropped just before the RENAME (beforeSessionsSwap),
// and the live view is made again on the new `events` just after it (afterSessionsSwap); the
// projectors are paused meanwhile, so no insert falls between.

/** The table the sessions are kept in, and its view from events. */
export const RAW_SESSIONS = 'raw_sessions'
export const RAW_SESSIONS_VIEW = 'raw_sessions_mv'

const HEADER = `CREATE MATERIALIZED VIEW IF NOT EXISTS ${RAW_SESSIONS_VIEW} TO ${RAW_SESSIONS} AS`
const SOURCE = /\bFROM events\b/

/** The view's statement of migration 0120, feeding `sessions` from `events` under the name `view`. */
export function sessionsViewDDL(names: { view: string; events: string; sessions: string }): string {
  const ddl = loadMigrations()
    .flatMap((m) => m.statements)
    .find((st) => st.startsWith(HEADER))
  if (!ddl) throw new Error(`no migration creates ${RAW_SESSIONS_VIEW}`)
  const body = ddl.slice(HEADER.length)
  if ((body.match(new RegExp(SOURCE, 'g')) ?? []).length !== 1) {
    throw new Error(`${RAW_SESSIONS_VIEW} must read events exactly once`)
  }
  return (
    `CREATE MATERIALIZED VIEW IF NOT EXISTS ${names.view} TO ${names.sessions} AS` +
    body.replace(SOURCE, `FROM ${names.events}`)
  )
}

/** The replay's own names for the sessions table and view, beside its tables' `suffix`. */
export function replaySessionNames(suffix: string): { sessions: string; view: string } {
  return { sessions: `${RAW_SESSIONS}${suffix}`, view: `${RAW_SESSIONS_VIEW}${suffix}` }
}

/**
 * Creates the replay's raw_sessions (like the live one) and its view from the replay's `events`
 * table, where rows live. Repeatable: a resumed replay finds them in place.
 */
export async function createReplaySessions(admin: TableAdmin, suffix: string, events: string): Promise<void> {
  const { sessions, view } = replaySessionNames(suffix)
  // (made as the schema files say when the live table is in an earlier layout: projectors/upgrade.ts)
  await admin.createLike(sessions, RAW_SESSIONS, tableDdl(RAW_SESSIONS))
  await admin.onEachHome(async (ch) => {
    await ch.command({ query: sessionsViewDDL({ view, events, sessions }) })
  })
}

/**
 * Before the swap's RENAME (projectors paused, the replay's passes done): drops the replay's view
 * while its tables still have the names it was made with (dropped after the RENAME, it would leave
 * its source table listing a view that no longer exists). Repeatable.
 */
export async function beforeSessionsSwap(ch: ClickHouseClient, suffix: string): Promise<void> {
  await ch.command({ query: `DROP VIEW IF EXISTS ${replaySessionNames(suffix).view}` })
}

/**
 * After the swap's RENAME (projectors still paused): replaces the live view, which hangs on the old
 * events table, by one on the new `events`. Repeatable: a view already attached to `events` is kept.
 */
export async function afterSessionsSwap(ch: ClickHouseClient): Promise<void> {
  const [row] = await selectRows<{ attached: number | string }>(
    ch,
    `SELECT any(has(dependencies_table, '${RAW_SESSIONS_VIEW}')) AS attached FROM system.tables` +
      " WHERE database = currentDatabase() AND name = 'events'",
  )
  if (Number(row?.attached ?? 0) === 1) return
  await ch.command({ query: `DROP VIEW IF EXISTS ${RAW_SESSIONS_VIEW}` })
  await ch.command({
    query: sessionsViewDDL({ view: RAW_SESSIONS_VIEW, events: 'events', sessions: RAW_SESSIONS }),
  })
}

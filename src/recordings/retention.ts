import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'
import { sqlNumber } from '../clickhouse/sql.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'
import type { Logger } from '../observability/logger.ts'
import type { PlaylistStore } from '../playlists/store.ts'
import { removeSessions, sessionsWhere } from './projection.ts'
import { LIVE_RECORDING_TABLES, type RecordingTables } from './tables.ts'

// Recordings retention: a session whose last event is older than RECORDINGS_RETENTION_DAYS (counted
// from the start of today, UTC, so a day's expiries happen in one pass) is removed, unless a playlist
// holds it (soft-deleted playlists included: PATCH can restore them). A TTL cannot spare the
// sessions a playlist holds, and whole partitions cannot be dropped while such sessions live in
// them, so sessions are removed with mutations, a few hundred per statement.

const DAY_MS = 86_400_000
const PER_MUTATION = 500

/** The instant before which a session's last event makes it expire. */
export function retentionCutoff(days: number, nowMs: number): number {
  return nowMs - (nowMs % DAY_MS) - days * DAY_MS
}

/** Removes the expired sessions (all teams); returns how many. */
export async function expireRecordings(
  ch: ClickHouseClient,
  admin: TableAdmin,
  playlists: Pick<PlaylistStore, 'pinned'>,
  days: number,
  nowMs = Date.now(),
  tables: RecordingTables = LIVE_RECORDING_TABLES,
  log?: Logger,
): Promise<number> {
  if (days <= 0) return 0
  const cutoff = retentionCutoff(days, nowMs)
  const rows = await selectRows<{ team_id: string; session_id: string }>(
    ch,
    `SELECT team_id, session_id FROM ${tables.summary}
     GROUP BY team_id, session_id HAVING maxMerge(last_ms) < ${sqlNumber(cutoff)}`,
  )
  if (rows.length === 0) return 0
  const pinned = new Set((await playlists.pinned()).map((p) => `${p.team_id}\u0000${p.session_id}`))
  const expired = rows
    .map((r) => ({ team_id: Number(r.team_id), session_id: r.session_id }))
    .filter((r) => !pinned.has(`${r.team_id}\u0000${r.session_id}`))
  for (let i = 0; i < expired.length; i += PER_MUTATION) {
    await removeSessions(admin, tables, sessionsWhere(expired.slice(i, i + PER_MUTATION)))
  }
  if (expired.length) log?.info({ sessions: expired.length, days }, 'recordings retention: removed sessions')
  return expired.length
}

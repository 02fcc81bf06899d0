// The ClickHouse tables of the recordings projection (schema/clickhouse/0010_session_replay.sql).
// A replay builds the same set under a suffix and swaps it in.

export interface RecordingTables {
  snapshots: string
  summary: string
  deleted: string
}

export const RECORDING_TABLE_KINDS = ['snapshots', 'summary', 'deleted'] as const

export const LIVE_RECORDING_TABLES: RecordingTables = {
  snapshots: 'session_replay_snapshots',
  summary: 'session_replay_events',
  deleted: 'session_replay_deleted',
}

/** The live tables' names with `suffix` appended. */
export function suffixedRecordingTables(suffix: string): RecordingTables {
  return {
    snapshots: `${LIVE_RECORDING_TABLES.snapshots}${suffix}`,
    summary: `${LIVE_RECORDING_TABLES.summary}${suffix}`,
    deleted: `${LIVE_RECORDING_TABLES.deleted}${suffix}`,
  }
}

/** Columns of session_replay_snapshots in insert order (RowBinary, see rows.ts). */
export const SNAPSHOT_COLUMNS = [
  'team_id',
  'session_id',
  'window_id',
  'distinct_id',
  'chunk_id',
  'part',
  'parts',
  'first_ms',
  'last_ms',
  'click_count',
  'keypress_count',
  'mouse_activity_count',
  'active_ms',
  'console_log_count',
  'console_warn_count',
  'console_error_count',
  'first_url',
  'size',
  'event_count',
  'snapshot_source',
  'snapshot_library',
  'received_at',
  'data',
  '_seq',
] as const

import { type ClickHouseClient } from '../clickhouse/client.ts'
import { sqlString } from '../clickhouse/sql.ts'
import { PLUGIN_LOG_TABLE } from './log-writer.ts'
import type { LogEntry, LogType } from './types.ts'

// Reading a plugin config's log, with PostHog's filters (posthog/models/plugin.py,
// fetch_plugin_log_entries): `after`/`before` are exclusive bounds on the timestamp, `search` is a
// case-insensitive substring of the message, `type_filter` a set of types; newest first.

export interface LogFilter {
  teamId: number
  pluginConfigId: number
  types?: LogType[]
  search?: string
  /** epoch ms, exclusive */
  after?: number
  /** epoch ms, exclusive */
  before?: number
}

interface Row {
  id: string
  team_id: string | number
  plugin_id: string | number
  plugin_config_id: string | number
  timestamp_ms: string | number
  source: LogEntry['source']
  type: LogType
  message: string
  instance_id: string
}

function where(f: LogFilter): string {
  const parts = [`team_id = ${Math.trunc(f.teamId)}`, `plugin_config_id = ${Math.trunc(f.pluginConfigId)}`]
  if (f.types?.length) parts.push(`type IN (${f.types.map(sqlString).join(', ')})`)
  if (f.after !== undefined)
    parts.push(`timestamp > fromUnixTimestamp64Milli(toInt64(${Math.trunc(f.after)}))`)
  if (f.before !== undefined)
    parts.push(`timestamp < fromUnixTimestamp64Milli(toInt64(${Math.trunc(f.before)}))`)
  if (f.search) parts.push(`positionCaseInsensitiveUTF8(message, ${sqlString(f.search)}) > 0`)
  return parts.join(' AND ')
}

/** One page of entries and the total that match; FINAL collapses a batch inserted twice. */
export async function fetchPluginLogs(
  ch: ClickHouseClient,
  f: LogFilter,
  page: { limit: number; offset: number },
): Promise<{ count: number; results: LogEntry[] }> {
  const cond = where(f)
  const [countRs, rowsRs] = await Promise.all([
    ch.query({
      query: `SELECT count() AS c FROM ${PLUGIN_LOG_TABLE} FINAL WHERE ${cond}`,
      format: 'JSONEachRow',
    }),
    ch.query({
      query: `SELECT toString(id) AS id, team_id, plugin_id, plugin_config_id,
        toUnixTimestamp64Milli(timestamp) AS timestamp_ms, source, type,
        message, toString(instance_id) AS instance_id
        FROM ${PLUGIN_LOG_TABLE} FINAL WHERE ${cond}
        ORDER BY timestamp DESC, toString(id) DESC
        LIMIT ${Math.trunc(page.offset)}, ${Math.trunc(page.limit)}`,
      format: 'JSONEachRow',
    }),
  ])
  const [{ c }] = (await countRs.json<{ c: string | number }>()) as [{ c: string | number }]
  const rows = await rowsRs.json<Row>()
  return {
    count: Number(c),
    results: rows.map((r) => ({
      id: r.id,
      team_id: Number(r.team_id),
      plugin_id: Number(r.plugin_id),
      plugin_config_id: Number(r.plugin_config_id),
      timestamp: new Date(Number(r.timestamp_ms)).toISOString(),
      source: r.source,
      type: r.type,
      message: r.message,
      instance_id: r.instance_id,
    })),
  }
}

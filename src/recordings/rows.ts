import { Readable } from 'node:stream'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { ChunkHeader } from './message.ts'
import { SNAPSHOT_COLUMNS } from './tables.ts'

// Snapshot rows go to ClickHouse as TabSeparated built as bytes: the gzip data travels as it is,
// with only backslash, tab, newline and carriage return escaped (3 bytes in 256 of random data),
// which ClickHouse reads back exactly. RowBinary would need no escaping, but the
// chdb test server (26.x) cannot take a binary body holding runs of newlines.

const ESC = new Map([
  [0x5c, 0x5c],
  [0x09, 0x74],
  [0x0a, 0x6e],
  [0x0d, 0x72],
])

/** The bytes of a value escaped for TabSeparated input. */
export function escapeTsv(b: Buffer): Buffer {
  let extra = 0
  for (let i = 0; i < b.length; i++) if (ESC.has(b[i]!)) extra++
  if (extra === 0) return b
  const out = Buffer.allocUnsafe(b.length + extra)
  let o = 0
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!
    const e = ESC.get(c)
    if (e === undefined) out[o++] = c
    else {
      out[o++] = 0x5c
      out[o++] = e
    }
  }
  return out
}

export interface SnapshotRow {
  header: ChunkHeader
  data: Buffer
  seq: number
}

const TAB = Buffer.from('\t')
const NEWLINE = Buffer.from('\n')
const count = (x: number) => String(Math.max(0, Math.trunc(x)))
const text = (x: string) => escapeTsv(Buffer.from(x, 'utf8'))

/** One TabSeparated line (newline included) in SNAPSHOT_COLUMNS order. */
export function encodeSnapshotRow(r: SnapshotRow): Buffer {
  const { header: h, data, seq } = r
  const s = h.stats
  const fields: (string | Buffer)[] = [
    String(Math.trunc(h.team_id)),
    text(h.session_id),
    text(h.window_id),
    text(h.distinct_id),
    h.chunk_id,
    count(h.part),
    count(h.parts),
    String(Math.trunc(s.first_ms)),
    String(Math.trunc(s.last_ms)),
    count(s.click_count),
    count(s.keypress_count),
    count(s.mouse_activity_count),
    count(s.active_ms),
    count(s.console_log_count),
    count(s.console_warn_count),
    count(s.console_error_count),
    text(s.first_url ?? ''),
    count(s.size),
    count(s.event_count),
    text(h.snapshot_source),
    text(h.snapshot_library),
    new Date(h.received_at).toISOString().slice(0, 19).replace('T', ' '),
    escapeTsv(data),
    count(seq),
  ]
  const parts: Buffer[] = []
  fields.forEach((f, i) => {
    parts.push(typeof f === 'string' ? Buffer.from(f, 'latin1') : f)
    parts.push(i === fields.length - 1 ? NEWLINE : TAB)
  })
  return Buffer.concat(parts)
}

/** Inserts snapshot rows with one INSERT (atomic per partition). */
export async function insertSnapshotRows(ch: ClickHouseClient, table: string, rows: SnapshotRow[]) {
  if (rows.length === 0) return
  const cols = SNAPSHOT_COLUMNS.map((c) => `\`${c}\``).join(', ')
  const res = await ch.exec({
    query: `INSERT INTO ${table} (${cols}) FORMAT TabSeparated`,
    values: Readable.from(
      (function* () {
        for (const r of rows) yield encodeSnapshotRow(r)
      })(),
    ),
  })
  // The response body is empty for an INSERT, but it must be read for the socket to be reused.
  for await (const _ of res.stream) {
    // drain
  }
}

import { Readable } from 'node:stream'
import { timeInsert } from '../observability/metrics.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'

const quoteIdent = (name: string) => `\`${name.replace(/`/g, '\\`')}\``

/** lines per piece of the request body: a large batch never becomes one giant string */
const PIECE = 2000

function* pieces(lines: string[]): Generator<Buffer> {
  for (let i = 0; i < lines.length; i += PIECE) yield tsvBody(lines, i, Math.min(i + PIECE, lines.length))
}

/**
 * The UTF-8 bytes of `lines[start..end)`, one after the other, written straight into one buffer sized
 * for their characters (exact for ASCII; grown when a line's bytes would not fit). Joining the lines
 * into one large string first and encoding that was 5-6x slower here, and a buffer per line then a
 * copy of them all cost the projector ~4% of its CPU (bench/projector-cpu.ts, docs/performance.md).
 */
export function tsvBody(lines: readonly string[], start = 0, end = lines.length): Buffer {
  let chars = 0
  for (let i = start; i < end; i++) chars += lines[i]!.length
  let buf = Buffer.allocUnsafe(chars)
  let at = 0
  for (let i = start; i < end; i++) {
    const line = lines[i]!
    // A UTF-16 unit takes at most 3 bytes: only near the end of the buffer is the exact size needed.
    if (buf.length - at < line.length * 3) {
      const need = Buffer.byteLength(line, 'utf8')
      if (buf.length - at < need) {
        const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, at + need))
        buf.copy(bigger, 0, 0, at)
        buf = bigger
      }
    }
    at += buf.write(line, at, 'utf8')
  }
  return buf.subarray(0, at)
}

/** Inserts rows already serialized as TabSeparated lines (each ending in '\n'). */
export async function insertTsv(
  ch: ClickHouseClient,
  table: string,
  columns: string[],
  lines: string[],
): Promise<void> {
  if (lines.length === 0) return
  const query = `INSERT INTO ${quoteIdent(table)} (${columns.map(quoteIdent).join(', ')}) FORMAT TabSeparated`
  const done = timeInsert(table, lines.length)
  try {
    const res = await ch.exec({ query, values: Readable.from(pieces(lines)) })
    // The response body is empty for an INSERT, but it must be read for the socket to be reused.
    for await (const _ of res.stream) {
      // drain
    }
  } catch (err) {
    done(false)
    throw err
  }
  done(true)
}

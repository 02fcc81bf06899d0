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
 * The UTF-8 bytes of `lines[start..end)`, one after the other. Each line is encoded on its own (small
 * strings go to Node's buffer pool) and copied once into the result: joining the lines into one large
 * string first and encoding that was 5-6x slower here (bench/projector-cpu.ts, docs/performance.md).
 */
export function tsvBody(lines: readonly string[], start = 0, end = lines.length): Buffer {
  const parts: Buffer[] = []
  let size = 0
  for (let i = start; i < end; i++) {
    const b = Buffer.from(lines[i]!, 'utf8')
    parts.push(b)
    size += b.length
  }
  return Buffer.concat(parts, size)
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

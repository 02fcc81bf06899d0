import { Readable } from 'node:stream'
import { timeInsert } from '../observability/metrics.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'

const quoteIdent = (name: string) => `\`${name.replace(/`/g, '\\`')}\``

/** lines per piece of the request body: a large batch never becomes one giant string */
const PIECE = 2000

function* pieces(lines: string[]): Generator<Buffer> {
  for (let i = 0; i < lines.length; i += PIECE) {
    yield Buffer.from(lines.slice(i, i + PIECE).join(''), 'utf8')
  }
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

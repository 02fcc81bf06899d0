import type { ClickHouseClient } from '@clickhouse/client'
import { sqlString } from '../clickhouse/sql.ts'
import { sleep } from '../retry/backoff.ts'
import type { QueryStatus } from './schema.ts'

// What ClickHouse's system.processes says of one running query (by its ClickHouse query id):
// its progress, and killing it.

/** The query's progress so far; null when ClickHouse does not run it. */
export async function queryProgress(
  ch: ClickHouseClient,
  queryId: string,
): Promise<QueryStatus['query_progress']> {
  const rs = await ch.query({
    query: `SELECT read_rows, read_bytes, total_rows_approx, elapsed FROM system.processes WHERE query_id = ${sqlString(queryId)}`,
    format: 'JSONEachRow',
  })
  const [row] = await rs.json<{
    read_rows: string
    read_bytes: string
    total_rows_approx: string
    elapsed: number
  }>()
  if (!row) return null
  return {
    rows_read: Number(row.read_rows),
    bytes_read: Number(row.read_bytes),
    estimated_rows_total: Number(row.total_rows_approx),
    time_elapsed: Number(row.elapsed),
    active_cpu_time: 0,
  }
}

/**
 * KILL QUERY until system.processes no longer lists the query (a query killed before it reached
 * ClickHouse, or one slow to notice, is killed again); false if it is still there after `waitMs`.
 */
export async function killQuery(ch: ClickHouseClient, queryId: string, waitMs: number): Promise<boolean> {
  const id = sqlString(queryId)
  const deadline = Date.now() + waitMs
  for (let round = 0; ; round++) {
    if (round % 10 === 0) await ch.command({ query: `KILL QUERY WHERE query_id = ${id} ASYNC` })
    const rs = await ch.query({
      query: `SELECT count() AS n FROM system.processes WHERE query_id = ${id}`,
      format: 'JSONEachRow',
    })
    const [row] = await rs.json<{ n: string | number }>()
    if (Number(row?.n ?? 0) === 0) return true
    if (Date.now() >= deadline) return false
    await sleep(100)
  }
}

// What ClickHouse is running, for the tests that start, cancel and abandon queries.
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'

/** Whether system.processes lists `queryId`. */
export async function running(ch: ClickHouseClient, queryId: string): Promise<boolean> {
  const rs = await ch.query({
    query: `SELECT count() AS n FROM system.processes WHERE query_id = '${queryId}'`,
    format: 'JSONEachRow',
  })
  const [row] = await rs.json<{ n: string }>()
  return Number(row?.n) > 0
}

/** Polls `check` every 100 ms until it holds (true) or `timeoutMs` passes (false). */
export async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((r) => setTimeout(r, 100))
  }
  return false
}

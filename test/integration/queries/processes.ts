// What ClickHouse is running, for the tests that start, cancel and abandon queries.
import { v4 as uuidv4 } from 'uuid'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { insertEvents } from '../hogql/fixtures.ts'

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

/**
 * Writes 2,000 events of `team` over 200 monthly partitions, so ClickHouse reads them as many small
 * blocks: a long query (CROSS JOINs of them) can be seen running and stopped between blocks.
 */
export async function insertManyMonths(ch: ClickHouseClient, team: number): Promise<void> {
  const rows = Array.from({ length: 2000 }, (_, i) => ({
    team,
    uuid: uuidv4(),
    event: 'e',
    distinctId: `d${i}`,
    personId: uuidv4(),
    timestamp: `${2000 + Math.floor((i % 200) / 12)}-${String(((i % 200) % 12) + 1).padStart(2, '0')}-01 00:00:00.000`,
  }))
  await insertEvents(ch, rows)
}

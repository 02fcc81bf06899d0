import {
  type ClickHouseClient,
  ClickHouseLogLevel,
  type ClickHouseSettings,
  createClient,
} from '@clickhouse/client'

export type { ClickHouseClient }

/** A client on `database`; `settings` go with every query it sends (none by default). */
export function clickhouseClient(
  url: string,
  database?: string,
  settings: ClickHouseSettings = {},
): ClickHouseClient {
  return createClient({
    url,
    database,
    request_timeout: 60_000,
    // 18.16 predates most client-side settings; send none unless asked.
    clickhouse_settings: settings,
    compression: { request: false, response: false },
    // Failures surface as errors to the caller (and its log line); the client's own retry noise is not useful.
    log: { level: ClickHouseLogLevel.OFF },
  })
}

/** Runs a SELECT and returns its rows as objects. */
export async function selectRows<T>(ch: ClickHouseClient, query: string): Promise<T[]> {
  const rs = await ch.query({ query, format: 'JSONEachRow' })
  return rs.json<T>()
}

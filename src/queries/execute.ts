import type { ClickHouseClient } from '@clickhouse/client'
import { AppError, Unavailable } from '../http/errors.ts'
import type { CompiledQuery } from '../hogql/index.ts'

export interface ExecuteLimits {
  maxExecutionSeconds: number
  maxResultRows: number
}

export interface Executed {
  rows: unknown[][]
  types: string[]
  rowsRead: number
  bytesRead: number
}

interface JsonCompact {
  meta: { name: string; type: string }[]
  data: unknown[][]
  statistics?: { rows_read?: number; bytes_read?: number }
}

const NUMERIC = /^(Nullable\()?(U?Int(8|16|32|64|128|256)|Float(32|64)|Decimal.*)\)?$/

/** ClickHouse quotes 64-bit integers in JSON; clients expect numbers where they are exact. */
function convert(value: unknown, type: string): unknown {
  if (typeof value === 'string' && NUMERIC.test(type)) {
    const n = Number(value)
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(value) ? n : value
  }
  return value
}

/** Error codes ClickHouse uses for a query the user wrote badly (not for a broken server). */
const USER_ERRORS = new Set([
  6, 26, 27, 38, 41, 43, 44, 46, 47, 53, 62, 69, 70, 72, 113, 130, 184, 190, 215, 386,
])

/**
 * ClickHouse messages can name physical tables, columns and the database. Users see a message
 * with those parts taken out; the full one goes to the log.
 */
export function scrubClickHouseMessage(msg: string): string {
  return msg
    .replace(/^Code: \d+, e\.displayText\(\) = DB::Exception: /, '')
    .replace(/, e\.what\(\) = DB::Exception.*$/s, '')
    .replace(/\b[A-Za-z_][A-Za-z0-9_]*\.(events|person|person_distinct_id|person_overrides|groups)\b/g, '$1')
    .replace(/\b(prop_keys|prop_values|_seq|_offset|timestamp_ms)\b/g, '…')
    .replace(/\(version [^)]*\)/g, '')
    .slice(0, 500)
}

export async function execute(
  ch: ClickHouseClient,
  compiled: CompiledQuery,
  opts: ExecuteLimits & { queryId: string; abort?: AbortSignal },
): Promise<Executed> {
  let rs
  try {
    rs = await ch.query({
      query: compiled.clickhouse,
      format: 'JSONCompact',
      query_id: opts.queryId,
      abort_signal: opts.abort,
      clickhouse_settings: {
        readonly: '1',
        max_execution_time: opts.maxExecutionSeconds,
        max_result_rows: String(opts.maxResultRows),
        result_overflow_mode: 'break',
      },
    })
  } catch (err) {
    throw mapClickHouseError(err)
  }
  const body = (await rs.json()) as JsonCompact
  const types = body.meta.map((m) => m.type)
  return {
    rows: body.data.map((row) => row.map((v, i) => convert(v, types[i] ?? ''))),
    types,
    rowsRead: body.statistics?.rows_read ?? 0,
    bytesRead: body.statistics?.bytes_read ?? 0,
  }
}

export function mapClickHouseError(err: unknown): AppError {
  if (err instanceof AppError) return err
  const e = err as { code?: string; message?: string; type?: string }
  const message = e.message ?? String(err)
  // The client does not parse 18.16's error format, so the code is read from the message too.
  const code = Number(e.code ?? /^Code: (\d+)/.exec(message)?.[1])
  if (code === 159 || /TIMEOUT_EXCEEDED|Timeout exceeded/.test(message)) {
    return new AppError(
      504,
      'server_error',
      'query_timeout',
      'The query took longer than the limit and was stopped.',
    )
  }
  if (code === 394 || /QUERY_WAS_CANCELLED|Query was cancelled/.test(message)) {
    return new AppError(409, 'invalid_request', 'query_cancelled', 'The query was cancelled.')
  }
  if (USER_ERRORS.has(code)) {
    return new AppError(400, 'validation_error', 'query_error', scrubClickHouseMessage(message))
  }
  if (/ECONNREFUSED|socket hang up|ECONNRESET|ETIMEDOUT/.test(message)) {
    return new Unavailable('ClickHouse is unavailable.')
  }
  // the original goes along as the cause, for the log line the error handler writes
  return Object.assign(new AppError(500, 'server_error', 'query_failed', 'The query failed.'), { cause: err })
}

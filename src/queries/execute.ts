import type { ClickHouseClient } from '@clickhouse/client'
import { AnswerBudgetFull, AnswerTooLarge, MAX_ANSWER_BYTES, selectCompact } from '../clickhouse/client.ts'
import { RowTooLarge, TooManyCells } from '../clickhouse/compact-rows.ts'
import { AppError, Unavailable } from '../http/errors.ts'
import { GUARD_SETTING_NAMES, guardSettings, type ServerInfo } from '../hogql/server-settings.ts'
import type { CompiledQuery } from '../hogql/index.ts'
import type { Logger } from '../observability/logger.ts'
import { sqlString } from '../clickhouse/sql.ts'

/** The limits every query Burrow runs for a user is held to. */
export interface ExecuteLimits {
  maxExecutionSeconds: number
  maxResultRows: number
  /** The largest answer read from ClickHouse, in bytes (default: the client's MAX_ANSWER_BYTES). */
  maxResultBytes?: number
  /** The longest row (its JSON text, so every cell in it) of an answer; default MAX_ROW_BYTES. */
  maxRowBytes?: number
  /** The most cells (rows × columns) of an answer; default MAX_ANSWER_CELLS. */
  maxCells?: number
}

/**
 * The default cap on an answer's cells. Each is a JavaScript value held until the answer is sent, and
 * the heap's collector walks them all: 50,000 rows × 400 columns (20M values) stalled every request
 * of the process for 0.4-1.4 s in collections even when read and written in slices. 1M cells are
 * 50,000 rows (HogQL's largest LIMIT) of 20 columns; PostHog's own tables show far fewer.
 */
export const MAX_ANSWER_CELLS = 1_000_000

/**
 * The default cap on one row of an answer, so on every cell: rows are parsed one at a time as they
 * arrive (src/clickhouse/compact-rows.ts), and a row of this size parses in ~10-20 ms.
 */
export const MAX_ROW_BYTES = 4 * 1024 * 1024

/**
 * ClickHouse's own `max_result_bytes` is set to this many times Burrow's answer cap. It counts the
 * result's size in memory, which for short values is larger than their JSON (an empty String: 9
 * bytes in memory, `"",` 3 in JSON), and with `result_overflow_mode=break` the server stops sending
 * past it without saying so: at 4× the cap, the JSON sent has passed Burrow's cap first, so an
 * answer is refused (400), never cut short silently. It stops the server's work on a huge answer
 * early; one huge block (a single giant cell) is refused by the row cap instead.
 */
const SERVER_RESULT_BYTES_FACTOR = 4

/** A query's rows, with the column types ClickHouse reported and what it read. */
export interface Executed {
  rows: unknown[][]
  types: string[]
  rowsRead: number
  bytesRead: number
  /** ClickHouse's own time for the query (its JSON `statistics.elapsed`), seconds; 0 if not given */
  elapsed: number
  /** bytes of JSON the answer was read from (what the rows cost to serialize again, roughly) */
  answerBytes: number
}

const NUMERIC = /^(Nullable\()?(U?Int(8|16|32|64|128|256)|Float(32|64)|Decimal.*)\)?$/

/**
 * A value of a numeric column: ClickHouse quotes 64-bit integers in JSON; clients expect numbers
 * where they are exact.
 */
function convertNumber(value: unknown): unknown {
  if (typeof value === 'string') {
    const n = Number(value)
    return Number.isSafeInteger(n) || !/^-?\d+$/.test(value) ? n : value
  }
  return value
}

/** Converts each row's quoted numbers in place; which columns are numeric is worked out once. */
function numericConverter(): (row: unknown[], types: string[]) => unknown[] {
  let numeric: number[] | undefined
  return (row, types) => {
    numeric ??= types.flatMap((t, i) => (NUMERIC.test(t) ? [i] : []))
    for (const i of numeric) row[i] = convertNumber(row[i])
    return row
  }
}

// ---- the server --------------------------------------------------------------------------------

const servers = new WeakMap<ClickHouseClient, Promise<ServerInfo>>()

/**
 * The version of the server behind `ch` and the guard settings it knows, read once per client
 * (`burrow start` reads it at start; every query then reuses it).
 */
export function readServerInfo(ch: ClickHouseClient): Promise<ServerInfo> {
  let info = servers.get(ch)
  if (!info) {
    const names = GUARD_SETTING_NAMES.map((n) => `'${n}'`).join(', ')
    info = ch
      .query({
        query: `SELECT version() AS version, (SELECT groupArray(name) FROM system.settings WHERE name IN (${names})) AS settings`,
        format: 'JSONEachRow',
      })
      .then((rs) => rs.json<ServerInfo>())
      .then((rows) => ({ version: String(rows[0]?.version ?? ''), settings: rows[0]?.settings ?? [] }))
    // A failed read is tried again by the next caller, not remembered.
    info.catch(() => servers.delete(ch))
    servers.set(ch, info)
  }
  return info
}

// ---- running --------------------------------------------------------------------------------

/** What one run needs besides the SQL: limits, ids for KILL QUERY and logs, an abort signal. */
export interface ExecuteOptions extends ExecuteLimits {
  queryId: string
  abort?: AbortSignal
  /** Where a ClickHouse error's full text goes (debug level only: it can hold row values). */
  log?: Pick<Logger, 'debug'>
  /** The project the query runs for, logged with the error. */
  teamId?: number
}

/** Runs compiled SQL read-only under the limits and the guard settings; ClickHouse errors become AppErrors. */
export async function execute(
  ch: ClickHouseClient,
  compiled: CompiledQuery,
  opts: ExecuteOptions,
): Promise<Executed> {
  const maxCells = opts.maxCells ?? MAX_ANSWER_CELLS
  let body: Awaited<ReturnType<typeof selectCompact>>
  try {
    const server = await readServerInfo(ch)
    const maxBytes = opts.maxResultBytes ?? MAX_ANSWER_BYTES
    body = await selectCompact(ch, compiled.clickhouse, {
      queryId: opts.queryId,
      abort: opts.abort,
      maxBytes,
      maxRowBytes: opts.maxRowBytes ?? MAX_ROW_BYTES,
      maxCells,
      // values converted as each row is parsed: no pass over every value of a big answer at once
      mapRow: numericConverter(),
      settings: {
        readonly: '1',
        max_execution_time: opts.maxExecutionSeconds,
        max_result_rows: String(opts.maxResultRows),
        max_result_bytes: String(maxBytes * SERVER_RESULT_BYTES_FACTOR),
        result_overflow_mode: 'break',
        // quoted, so that convertNumber() can keep a 64-bit integer past 2^53 exact (as text): current
        // releases write them as bare JSON numbers by default, which JSON.parse rounds
        output_format_json_quote_64bit_integers: 1,
        ...guardSettings(server),
      },
    })
  } catch (err) {
    // An answer refused while it was read: the server may still be computing the rest (a server
    // notices the closed connection only when it next writes); it is stopped, not left to run.
    if (err instanceof RowTooLarge || err instanceof TooManyCells || err instanceof AnswerTooLarge) {
      void ch
        .command({ query: `KILL QUERY WHERE query_id = ${sqlString(opts.queryId)} ASYNC` })
        .catch(() => undefined)
    }
    const mapped = mapClickHouseError(err)
    if (mapped !== err) {
      // The full text can quote row values: never above debug, never in a response.
      opts.log?.debug(
        { project_id: opts.teamId, query_id: opts.queryId, clickhouse_error: messageOf(err) },
        'clickhouse refused the query',
      )
    }
    throw mapped
  }
  return {
    rows: body.data,
    types: body.meta.map((m) => m.type),
    answerBytes: body.answerBytes,
    rowsRead: body.statistics?.rows_read ?? 0,
    bytesRead: body.statistics?.bytes_read ?? 0,
    elapsed: body.statistics?.elapsed ?? 0,
  }
}

/**
 * Runs a statement that writes (an INSERT … SELECT Burrow built from compiled HogQL) under the same
 * limits and guard settings as a read, not read-only; ClickHouse errors become AppErrors.
 */
export async function executeWrite(ch: ClickHouseClient, sql: string, opts: ExecuteOptions): Promise<void> {
  try {
    const server = await readServerInfo(ch)
    await ch.command({
      query: sql,
      query_id: opts.queryId,
      abort_signal: opts.abort,
      clickhouse_settings: { max_execution_time: opts.maxExecutionSeconds, ...guardSettings(server) },
    })
  } catch (err) {
    const mapped = mapClickHouseError(err)
    if (mapped !== err) {
      opts.log?.debug(
        { project_id: opts.teamId, query_id: opts.queryId, clickhouse_error: messageOf(err) },
        'clickhouse refused the statement',
      )
    }
    throw mapped
  }
}

// ---- errors ---------------------------------------------------------------------------------

// ClickHouse error codes by what a user can do about them. Each class answers with one fixed
// message: a ClickHouse message can quote the value that failed (`Cannot parse string '…' as
// Int64`), and a response must never carry row values.

/**
 * A value in the rows could not be converted or computed: parse failures, division by zero, bad
 * patterns, out-of-range arguments. Among them, found by calling every allow-listed function on
 * text on 26.x: 12 (a parameter out of range), 117
 * (base64Decode of text that is not base64: the text is quoted), 135 (a zero string index), 353
 * (a negative pad length: the number is quoted), 467 (toBool of text), 675/676 (IPv4/IPv6 parsing).
 */
const VALUE_ERRORS = new Set([
  6, 12, 26, 27, 32, 38, 41, 69, 70, 72, 76, 117, 131, 135, 153, 190, 321, 353, 376, 377, 395, 407, 427, 457,
  467, 675, 676, 1001,
])
/**
 * The query itself does not type-check or name things that do not exist. Added after fuzzing the
 * server: 59 (`WHERE event`, a filter that is no boolean, on both), 50 (an unknown type name given
 * to JSONExtract), 80 (an incorrect query), 125 (a scalar subquery with more than one row), 170 (a
 * constant of the wrong kind, e.g. format's pattern), 403 (`JOIN … ON a.event`) and 476 (WITH TIES
 * without ORDER BY).
 */
const SHAPE_ERRORS = new Set([
  1, 10, 34, 35, 36, 42, 43, 44, 46, 47, 48, 50, 53, 59, 62, 80, 113, 125, 130, 170, 179, 182, 183, 184, 215,
  352, 386, 403, 476,
])
/** The query needs more than it may: memory, rows, nesting. */
const COMPLEXITY_ERRORS = new Set([128, 158, 160, 161, 167, 168, 306, 307, 396])
/**
 * 26.x refuses the functions it deprecated as error-prone (runningDifference and its kin; 721
 * DEPRECATED_FUNCTION) and names a setting the user cannot send: the answer says what to use.
 */
const DEPRECATED_FUNCTION = 721

const VALUE_DETAIL =
  'A value in the data could not be converted or computed (for example text that is not a number or a date, ' +
  'a division by zero, or an invalid regular expression). toInt, toFloat, toDate and toUUID give NULL instead ' +
  'of failing; filter such rows out or use them.'
const DEPRECATED_DETAIL =
  'The query calls a function this ClickHouse release refuses as error-prone (runningDifference, ' +
  'runningDifferenceStartingWithFirstValue): use a window function such as lagInFrame instead.'
const COMPLEXITY_DETAIL =
  'The query needs more memory or reads more rows than a query may. Narrow the date range, filter earlier ' +
  'or aggregate before joining.'

function messageOf(err: unknown): string {
  return (err as { message?: string }).message ?? String(err)
}

/**
 * A ClickHouse type or name error, as a user may read it: names of physical tables and columns
 * taken out, quoted text (where values appear) blanked, and the SQL 26.x quotes after the message
 * (the statement in scope, the step that failed, a subquery) cut.
 */
export function scrubClickHouseMessage(msg: string): string {
  const text = msg
    .replace(/^Code: \d+\. DB::Exception: /, '')
    // "(version 26.7.2.1 (official build))": one level of parentheses inside
    .replace(/\s*\(version [^()]*(\([^()]*\))?[^()]*\)/g, '')
    .replace(/\s*\([A-Z_]+\)\s*$/, '')
    // A quote opens only after a non-word character: in "doesn't look like …: In scope f('x')" the
    // apostrophe is not one, and pairing it with the next quote left 'x' outside every quote.
    // Blanked before the cuts below, so a value that contains "In scope" cannot cut its own quote.
    .replace(/(?<![A-Za-z0-9_])'(?:[^'\\]|\\.)*'/g, "'…'")
    // 26.x: "…: In scope SELECT <Burrow's SQL>" (or "identifier `b` in scope SELECT …"), "… In
    // query SELECT …", "…: while executing 'FUNCTION …'" or "while executing function f on
    // arguments …", "Maybe you meant: […]" (names of physical columns among them).
    .replace(/[\s:.]*\b([Ii]n scope|In query|while executing|Maybe you meant)\b.*$/s, '')
  return cutSubqueries(text)
    .replace(/\b[A-Za-z_][A-Za-z0-9_]*\.(events|person|person_distinct_id|person_overrides|groups)\b/g, '$1')
    .replace(/\b(_seq|_offset|team_id)\b/g, '…')
    .slice(0, 300)
}

/** Every parenthesized `(SELECT …)` becomes `(…)`: 26.x quotes a failing ARRAY JOIN's whole subquery. */
function cutSubqueries(text: string): string {
  let out = ''
  let i = 0
  for (;;) {
    const at = text.indexOf('(SELECT ', i)
    if (at < 0) return out + text.slice(i)
    out += `${text.slice(i, at)}(…)`
    let depth = 0
    let j = at
    for (; j < text.length; j++) {
      if (text[j] === '(') depth++
      else if (text[j] === ')' && --depth === 0) break
    }
    i = j + 1
  }
}

/**
 * The ClickHouse error code of `err`: the one the client parsed, else the `Code: N` that starts the
 * text (the client parses only texts that end with the code's name, `(ILLEGAL_DIVISION)`).
 */
function codeOf(err: unknown): number {
  const e = err as { code?: string }
  return Number(e.code ?? /^Code: (\d+)/.exec(messageOf(err))?.[1])
}

function tooManyCells(maxCells: number): AppError {
  return new AppError(
    400,
    'validation_error',
    'query_too_complex',
    `The query's answer has more than ${maxCells} values (rows × columns); select fewer columns, or fewer rows with LIMIT.`,
  )
}

/** A ClickHouse failure as the typed error the client sees (4xx for the user's query, never its values). */
export function mapClickHouseError(err: unknown): AppError {
  if (err instanceof AppError) return err
  if (err instanceof AnswerTooLarge) {
    return new AppError(
      400,
      'validation_error',
      'query_too_complex',
      `The query's answer is larger than ${err.maxBytes} bytes; select fewer or shorter values, or fewer rows.`,
    )
  }
  if (err instanceof RowTooLarge) {
    return new AppError(
      400,
      'validation_error',
      'query_too_complex',
      `A row of the query's answer is larger than ${err.maxRowBytes} bytes (a value in it is too large); select shorter values, e.g. fewer array elements.`,
    )
  }
  if (err instanceof TooManyCells) return tooManyCells(err.maxCells)
  if (err instanceof AnswerBudgetFull) {
    // Others' large answers fill the process's answer memory now; the same query fits in a moment.
    return new AppError(
      429,
      'throttled_error',
      'concurrency_limit',
      'Too many large query answers are being read at once; try again shortly.',
      null,
      { 'retry-after': '1' },
    )
  }
  const message = messageOf(err)
  const code = codeOf(err)
  // 'Timeout error.': no answer within the HTTP client's request timeout (clickhouse/client.ts), a
  // query past its max_execution_time whose work ClickHouse does not interrupt (one huge row).
  if (code === 159 || /TIMEOUT_EXCEEDED|Timeout exceeded/.test(message) || message === 'Timeout error.') {
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
  if (code === 241 || /MEMORY_LIMIT_EXCEEDED|Memory limit \(for query\) exceeded/.test(message)) {
    // ClickHouse stopped the query at QUERY_MAX_MEMORY_BYTES
    return new AppError(
      400,
      'validation_error',
      'query_memory_limit',
      'The query needed more memory than the limit and was stopped; narrow its date range or filters.',
      'query',
    )
  }
  // 26.x takes a regular expression from the rows in replaceRegexpAll/One and answers a bad one
  // with BAD_ARGUMENTS (36, a shape code) and the pattern unquoted: "not a valid re2 pattern: (x".
  if (VALUE_ERRORS.has(code) || /\bre2\b/.test(message)) {
    return new AppError(400, 'validation_error', 'query_value_error', VALUE_DETAIL)
  }
  if (COMPLEXITY_ERRORS.has(code)) {
    return new AppError(400, 'validation_error', 'query_too_complex', COMPLEXITY_DETAIL)
  }
  if (code === DEPRECATED_FUNCTION)
    return new AppError(400, 'validation_error', 'query_error', DEPRECATED_DETAIL)
  if (SHAPE_ERRORS.has(code)) {
    return new AppError(400, 'validation_error', 'query_error', scrubClickHouseMessage(message))
  }
  if (code === 202 || /ECONNREFUSED|socket hang up|ECONNRESET|ETIMEDOUT/.test(message)) {
    return new Unavailable('ClickHouse is unavailable.')
  }
  // Unknown failures: the code goes along for the operator's log line, never the message text.
  return new AppError(
    500,
    'server_error',
    'query_failed',
    `The query failed (ClickHouse error ${code || 'unknown'}).`,
  )
}

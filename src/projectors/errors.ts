// Transient or permanent: the projector retries what may succeed later (network, timeouts, an
// overloaded or stopped server, a table that is being swapped) and dead-letters only what ClickHouse
// refuses for the content of the rows, so that a permanent failure never stalls a lane and a passing
// one never loses an event. See docs/projectors.md ("Failures").

/** An I/O failure (ClickHouse, NATS): the batch is retried, nothing is acknowledged. */
export class TransientError extends Error {
  constructor(cause: unknown) {
    super(`transient: ${(cause as Error)?.message ?? String(cause)}`, { cause })
    this.name = 'TransientError'
  }
}

/** Runs `fn`; any failure but a FencedError comes out as a TransientError. */
export async function io<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    // a fenced-out unit must not retry: it stops (FencedError, below)
    throw err instanceof TransientError || err instanceof FencedError ? err : new TransientError(err)
  }
}

// ClickHouse error codes (src/Common/ErrorCodes.cpp) that mean "this data cannot be stored as it is":
// the INSERT's rows could not be parsed or do not fit their column types. Anything else, unknown
// codes included, is retried: a missing table, a readonly replica or a memory limit pass.
const CONTENT_CODES = new Set([
  6, // CANNOT_PARSE_TEXT
  26, // CANNOT_PARSE_QUOTED_STRING
  27, // CANNOT_PARSE_INPUT_ASSERTION_FAILED
  38, // CANNOT_PARSE_DATE
  41, // CANNOT_PARSE_DATETIME
  53, // TYPE_MISMATCH
  69, // ARGUMENT_OUT_OF_BOUND
  70, // CANNOT_CONVERT_TYPE
  72, // CANNOT_PARSE_NUMBER
  117, // INCORRECT_DATA
  128, // TOO_LARGE_ARRAY_SIZE
  131, // TOO_LARGE_STRING_SIZE
  321, // VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE
  376, // CANNOT_PARSE_UUID
  469, // VIOLATED_CONSTRAINT
  691, // UNKNOWN_ELEMENT_OF_ENUM
])

/** 252 (TOO_MANY_PARTS) is also "too many partitions for single INSERT block": only that one is content. */
const TOO_MANY_PARTITIONS = /too many partitions for single insert block/i

/**
 * The ClickHouse error code of a server error: `code` of @clickhouse/client's ClickHouseError, else
 * the `Code: N. ` that starts the server's text (the client parses only texts that end with the code's
 * name, `(TOO_LARGE_STRING_SIZE)`). Undefined for anything that is not a server error (network, timeouts).
 */
export function clickhouseErrorCode(err: unknown): number | undefined {
  if (!(err instanceof Error)) return undefined
  const code = (err as { code?: unknown }).code
  if (typeof code === 'string' && /^\d+$/.test(code)) return Number(code)
  const m = /^\s*Code: (\d+)\./.exec(err.message)
  return m ? Number(m[1]) : undefined
}

/**
 * The server's reason when ClickHouse refused an INSERT for the content of its rows (retrying the
 * same rows cannot succeed); undefined for every failure worth retrying.
 */
export function contentRefusal(err: unknown): string | undefined {
  const code = clickhouseErrorCode(err)
  if (code === undefined) return undefined
  const message = (err as Error).message
  if (CONTENT_CODES.has(code) || (code === 252 && TOO_MANY_PARTITIONS.test(message))) {
    return `ClickHouse refused the row: Code ${code}: ${serverMessage(message)}`
  }
  return undefined
}

// The server's own words, without the `Code: N. DB::Exception: ` frame of a text the client did not parse.
function serverMessage(text: string): string {
  const start = text.indexOf('DB::Exception: ')
  const body =
    start >= 0 ? text.slice(start + 'DB::Exception: '.length) : text.replace(/^\s*Code: \d+\.\s*/, '')
  return body.trim()
}

/**
 * The lease of the unit (partition projector, identity stage, row writer) is no longer this
 * process's: another may own its consumers now. Nothing more of the batch may be written, and its
 * messages are neither acknowledged nor given back (docs/scaling.md, "Fencing").
 */
export class FencedError extends Error {
  constructor(unit: number) {
    super(`lease ${unit} is no longer held: fenced out`)
    this.name = 'FencedError'
  }
}

/** Throws FencedError unless the unit's lease is still held, with time left for one write. */
export type Fence = () => Promise<void>

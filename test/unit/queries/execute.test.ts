// ClickHouse failures as the client sees them: typed, and never quoting a value from the rows.
import { describe, expect, it } from 'vitest'
import { AnswerTooLarge } from '../../../src/clickhouse/client.ts'
import { mapClickHouseError, scrubClickHouseMessage } from '../../../src/queries/execute.ts'

// Messages as 26.7 words them (taken from the server's answers to the attacks), as the text
// of an error whose code the client did not parse, and as the client passes them on (`code` set,
// the text without its `Code: N. DB::Exception:` frame).
const PARSE_26 =
  "Code: 6. DB::Exception: Cannot parse string 'alice-secret-A-0' as Int64: syntax error at begin of string. (CANNOT_PARSE_TEXT) (version 26.7.2.1)"
const UUID_26 =
  'Code: 376. DB::Exception: Cannot parse uuid alice-secret-A-0: Cannot parse UUID from String. (CANNOT_PARSE_UUID)'
const DIV_26 = 'Code: 153. DB::Exception: Division by zero: In scope SELECT intDiv(1, 0). (ILLEGAL_DIVISION)'
const REGEX =
  'Code: 427. DB::Exception: OptimizedRegularExpression: cannot compile re2: (alice-secret-A-0, error: missing ). (CANNOT_COMPILE_REGEXP)'
const TYPE_26 = Object.assign(
  new Error("Illegal types UInt8 and String of arguments of function plus: In scope SELECT 1 + 'a'. "),
  { code: '43' },
)

describe('mapClickHouseError', () => {
  it.each([PARSE_26, UUID_26, DIV_26, REGEX])('answers a value failure generically: %s', (message) => {
    const e = mapClickHouseError(new Error(message))
    expect(e.status).toBe(400)
    expect(e.code).toBe('query_value_error')
    expect(e.detail).not.toMatch(/alice|secret|Code:/)
    // the same answer whatever the value was
    expect(e.detail).toBe(mapClickHouseError(new Error(DIV_26)).detail)
  })

  it('reads the code the client parsed from a current server', () => {
    const e = mapClickHouseError(Object.assign(new Error('Cannot parse string'), { code: '6' }))
    expect(e.code).toBe('query_value_error')
  })

  it('keeps the type error, without internal names or quoted text', () => {
    const e = mapClickHouseError(TYPE_26)
    expect(e).toMatchObject({ status: 400, code: 'query_error' })
    expect(e.detail).toBe('Illegal types UInt8 and String of arguments of function plus')
  })

  it('classes limits, timeouts, cancels and outages', () => {
    expect(
      mapClickHouseError(
        new Error('Code: 241. DB::Exception: Memory limit (for query) exceeded: would use 9.00 GiB'),
      ),
    ).toMatchObject({
      status: 400,
      code: 'query_memory_limit',
    })
    expect(
      mapClickHouseError(
        new Error('Code: 158. DB::Exception: Limit for rows (controlled by max_rows_to_read)'),
      ),
    ).toMatchObject({ status: 400, code: 'query_too_complex' })
    expect(
      mapClickHouseError(new Error('Code: 159. DB::Exception: Timeout exceeded: elapsed 61 seconds')),
    ).toMatchObject({
      status: 504,
      code: 'query_timeout',
    })
    expect(mapClickHouseError(new Error('Code: 394. DB::Exception: Query was cancelled'))).toMatchObject({
      status: 409,
    })
    expect(mapClickHouseError(new Error('connect ECONNREFUSED 127.0.0.1:8123')).status).toBe(503)
  })

  it('answers an unknown failure with its code only', () => {
    const e = mapClickHouseError(new Error("Code: 999. DB::Exception: something about 'alice-secret-A-0'"))
    expect(e).toMatchObject({ status: 500, code: 'query_failed' })
    expect(e.detail).toBe('The query failed (ClickHouse error 999).')
    expect(e.cause).toBeUndefined()
  })
})

describe('scrubClickHouseMessage', () => {
  it('blanks quoted text and physical names', () => {
    expect(
      scrubClickHouseMessage(
        "Code: 47. DB::Exception: Missing columns: 'x' while processing query: 'SELECT burrow_test.events.prop_values FROM burrow_test.events', required columns: 'prop_keys' (UNKNOWN_IDENTIFIER) (version 26.7.2.1)",
      ),
    ).toBe("Missing columns: '…' while processing query: '…', required columns: '…'")
  })
})

// 26.x's texts, as the chdb test server (26.7) answered Burrow's SQL: the statement in scope is
// Burrow's own SQL (team guard, physical names, the query's constants), and some codes are new.
const err26 = (code: number, text: string, name = 'X') =>
  new Error(`Code: ${code}. DB::Exception: ${text}. (${name}) (version 26.7.2.1 (chdb))`)

describe('26.x error texts', () => {
  it('cuts the SQL 26.x appends: the statement in scope, the step that failed, hints', () => {
    const cases: [string, string][] = [
      [
        'Illegal type String of first argument (condition) of function if. Must be UInt8: In scope SELECT if(events.event, 1, 2) AS _c0 FROM (SELECT event FROM events PREWHERE team_id = 7 LIMIT 18446744073709551615) AS events LIMIT 100',
        'Illegal type String of first argument (condition) of function if. Must be UInt8',
      ],
      [
        "Column 'events.event' is not under aggregate function and not in GROUP BY keys. In query SELECT events.event AS event, count() AS _c1 FROM (SELECT event FROM events PREWHERE team_id = 7 LIMIT 18446744073709551615) AS events LIMIT 100",
        "Column '…' is not under aggregate function and not in GROUP BY keys",
      ],
      [
        'There is no supertype for types String, UInt8 because some of them are String/FixedString/Enum and some of them are not: while executing function equals on arguments __table1.event String String(size = 0), 1_UInt8 UInt8 Const(size = 0, UInt8(size = 1))',
        'There is no supertype for types String, UInt8 because some of them are String/FixedString/Enum and some of them are not',
      ],
      [
        "Function with name `JSONExtractKey` does not exist. In scope SELECT JSONExtractKey(events.event) AS _c0 FROM (SELECT event FROM events PREWHERE team_id = 7 LIMIT 18446744073709551615) AS events LIMIT 100. Maybe you meant: ['JSONExtractKeys','JSONExtractRaw']",
        'Function with name `JSONExtractKey` does not exist',
      ],
      [
        "Unknown expression or function identifier `b` in scope SELECT 1 FROM (SELECT team_id AS a FROM events) AS e WHERE b = 1. Maybe you meant: ['prop_values']",
        'Unknown expression or function identifier `b`',
      ],
      [
        'ARRAY JOIN  (SELECT x.events.event AS event FROM x.events PREWHERE x.events.team_id = 7 LIMIT 18446744073709551615) AS events ARRAY JOIN events.event requires expression events.event AS e with Array or Map type. Actual: String',
        'ARRAY JOIN  (…) AS events ARRAY JOIN events.event requires expression events.event AS e with Array or Map type. Actual: String.',
      ],
    ]
    for (const [text, scrubbed] of cases) {
      const e = mapClickHouseError(err26(43, text, 'ILLEGAL_TYPE_OF_ARGUMENT'))
      expect(e).toMatchObject({ status: 400, code: 'query_error', detail: scrubbed })
    }
  })

  it('an apostrophe in the message does not open a quote: the constant after it stays blanked', () => {
    const e = mapClickHouseError(
      err26(
        36,
        "qzx doesn't look like datepart name in dateTrunc: In scope SELECT dateTrunc('Qzx-secret', events.timestamp) AS _c0 FROM events",
        'BAD_ARGUMENTS',
      ),
    )
    expect(e.detail).toBe("qzx doesn't look like datepart name in dateTrunc")
    // a value holding "In scope" is blanked whole, not cut in its middle
    expect(scrubClickHouseMessage("Cannot convert string 'a In scope b-secret' to type UInt8")).toBe(
      "Cannot convert string '…' to type UInt8",
    )
  })

  it('answers the value failures 26.x has new codes for without the value', () => {
    const texts: [number, string][] = [
      [
        117,
        "Invalid base64Decode value (alice-secret), cannot be decoded: while executing 'FUNCTION base64Decode(__table1.event :: 1)'",
      ],
      [467, "Cannot parse boolean value here: 'alice-secret', should be 'true' or 'false'"],
      [675, "Invalid IPv4 value: while executing 'FUNCTION IPv4StringToNum(__table1.event :: 1)'"],
      [676, "Invalid IPv6 value: while executing 'FUNCTION IPv6StringToNum(__table1.event :: 1)'"],
      [353, "New padded length (-5) is negative: while executing 'FUNCTION leftPad(__table1.event :: 2)'"],
      [
        135,
        'Indices in strings are 1-based: while executing function substringUTF8 on arguments __table1.event String',
      ],
      [12, 'Quantile level is out of range [0..1]'],
      // a pattern read from the rows, quoted unquoted under BAD_ARGUMENTS
      [
        36,
        "The pattern argument is not a valid re2 pattern: missing ): (alice-secret: while executing 'FUNCTION replaceRegexpAll('a'_String :: 1)'",
      ],
    ]
    for (const [code, text] of texts) {
      const e = mapClickHouseError(err26(code, text))
      expect({ code, status: e.status, kind: e.code }).toEqual({
        code,
        status: 400,
        kind: 'query_value_error',
      })
      expect(e.detail).not.toMatch(/alice|secret|-5/)
    }
  })

  it('answers 26.x shape errors with new codes as 400, a deprecated function with what to use', () => {
    const texts: [number, string][] = [
      [
        50,
        "Unknown data type family: Qzx: In scope SELECT JSONExtract(events.properties, 's', 'Qzx') AS _c0 FROM events",
      ],
      [125, 'Scalar subquery returned more than one row'],
      [
        170,
        'Bad get: has UInt64, requested String: while executing function format on arguments 1_UInt8 UInt8',
      ],
      [476, 'Can not use WITH TIES without ORDER BY'],
      [
        59,
        'Illegal type String of column for filter. Must be UInt8 or Nullable(UInt8) or Const variants of them: In scope SELECT event FROM events WHERE events.event',
      ],
      [403, 'JOIN  ALL LEFT JOIN ... ON a.event join expression expected function'],
    ]
    for (const [code, text] of texts) {
      const e = mapClickHouseError(err26(code, text))
      expect({ clickhouse: code, status: e.status, type: e.type }).toEqual({
        clickhouse: code,
        status: 400,
        type: 'validation_error',
      })
    }
    const deprecated = mapClickHouseError(
      err26(
        721,
        'Function runningDifference is deprecated since its usage is error-prone (see docs).Please use proper window function or set `allow_deprecated_error_prone_window_functions` setting to enable it',
      ),
    )
    expect(deprecated).toMatchObject({ status: 400, code: 'query_error' })
    expect(deprecated.detail).toContain('lagInFrame')
    expect(deprecated.detail).not.toContain('allow_deprecated')
  })

  it('answers a filter of the wrong type as a 400 too', () => {
    const e = mapClickHouseError(
      Object.assign(
        new Error("Invalid type for filter in WHERE: String. In query SELECT 1 FROM numbers(1) WHERE 'x'. "),
        {
          code: '59',
        },
      ),
    )
    expect(e).toMatchObject({
      status: 400,
      code: 'query_error',
      detail: 'Invalid type for filter in WHERE: String',
    })
  })

  it('a query past the HTTP timeout is a timeout; an answer over the cap is too large, not a 500', () => {
    expect(mapClickHouseError(new Error('Timeout error.'))).toMatchObject({
      status: 504,
      code: 'query_timeout',
    })
    expect(mapClickHouseError(new AnswerTooLarge(1000))).toMatchObject({
      status: 400,
      code: 'query_too_complex',
      detail: "The query's answer is larger than 1000 bytes; select fewer or shorter values, or fewer rows.",
    })
  })
})

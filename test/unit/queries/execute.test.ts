// ClickHouse failures as the client sees them: typed, and never quoting a value from the rows.
import { describe, expect, it } from 'vitest'
import { mapClickHouseError, scrubClickHouseMessage } from '../../../src/queries/execute.ts'

// Messages as 18.16 and 26.x word them (taken from the servers' answers to the issue's attacks).
const PARSE_18 =
  'Code: 6, e.displayText() = DB::Exception: Cannot parse string \'{"secret":"alice-secret-A-0"}\' as Int64: syntax error at begin of string., e.what() = DB::Exception'
const PARSE_26 =
  "Code: 6. DB::Exception: Cannot parse string 'alice-secret-A-0' as Int64: syntax error at begin of string. (CANNOT_PARSE_TEXT) (version 26.7.2.1)"
const UUID_26 =
  'Code: 376. DB::Exception: Cannot parse uuid alice-secret-A-0: Cannot parse UUID from String. (CANNOT_PARSE_UUID)'
const DIV_18 = 'Code: 153, e.displayText() = DB::Exception: Division by zero, e.what() = DB::Exception'
const REGEX =
  'Code: 427. DB::Exception: OptimizedRegularExpression: cannot compile re2: (alice-secret-A-0, error: missing ). (CANNOT_COMPILE_REGEXP)'
const TYPE_18 =
  'Code: 43, e.displayText() = DB::Exception: Illegal types of arguments (String, UInt8) of function plus, e.what() = DB::Exception'

describe('mapClickHouseError', () => {
  it.each([PARSE_18, PARSE_26, UUID_26, DIV_18, REGEX])(
    'answers a value failure generically: %s',
    (message) => {
      const e = mapClickHouseError(new Error(message))
      expect(e.status).toBe(400)
      expect(e.code).toBe('query_value_error')
      expect(e.detail).not.toMatch(/alice|secret|Code:/)
      // the same answer whatever the value was
      expect(e.detail).toBe(mapClickHouseError(new Error(DIV_18)).detail)
    },
  )

  it('reads the code the client parsed from a current server', () => {
    const e = mapClickHouseError(Object.assign(new Error('Cannot parse string'), { code: '6' }))
    expect(e.code).toBe('query_value_error')
  })

  it('keeps the type error, without internal names or quoted text', () => {
    const e = mapClickHouseError(new Error(TYPE_18))
    expect(e).toMatchObject({ status: 400, code: 'query_error' })
    expect(e.detail).toBe('Illegal types of arguments (String, UInt8) of function plus')
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

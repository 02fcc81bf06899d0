import { describe, expect, it } from 'vitest'
import { clickhouseErrorCode, contentRefusal } from '../../../src/projectors/errors.ts'

// Error texts as chdb 26.7 sends them: framed (`Code: N. DB::Exception: ... (NAME)`) where the client
// did not parse them, else as the client passes them on (`code` set, the frame gone).
const e = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {})

describe('clickhouseErrorCode', () => {
  it('reads the client error code, else the Code: N that starts the error text', () => {
    expect(clickhouseErrorCode(e('Too large value', '131'))).toBe(131)
    expect(clickhouseErrorCode(e('Code: 27. DB::Exception: Cannot parse input'))).toBe(27)
    expect(clickhouseErrorCode(e('Code: 60. DB::Exception: Table default.nope does not exist.'))).toBe(60)
  })
  it('is undefined for network errors and for a Code: N that does not start the text', () => {
    expect(clickhouseErrorCode(e('connect ECONNREFUSED 127.0.0.1:8123', 'ECONNREFUSED'))).toBeUndefined()
    expect(clickhouseErrorCode(e('socket hang up'))).toBeUndefined()
    expect(clickhouseErrorCode(e('bad value "Code: 27. x"'))).toBeUndefined()
    expect(clickhouseErrorCode('Code: 27.')).toBeUndefined()
  })
})

describe('contentRefusal', () => {
  it("gives the server's reason without the text's framing", () => {
    const framed = 'Code: 131. DB::Exception: Too large value for FixedString(2): (at row 3)'
    expect(contentRefusal(e(framed))).toBe(
      'ClickHouse refused the row: Code 131: Too large value for FixedString(2): (at row 3)',
    )
    const current = e('Too large value for FixedString(2): (at row 3) ', '131')
    expect(contentRefusal(current)).toBe(
      'ClickHouse refused the row: Code 131: Too large value for FixedString(2): (at row 3)',
    )
  })

  it('names content refusals: values that cannot be parsed or do not fit their column', () => {
    for (const text of [
      'Code: 131. DB::Exception: Too large value for FixedString(2): (at row 3) (TOO_LARGE_STRING_SIZE)',
      'Code: 27. DB::Exception: Cannot parse input: expected \\n before: abc',
      'Code: 41. DB::Exception: Cannot read DateTime: unexpected date: 2024-13-45. (CANNOT_PARSE_DATETIME)',
      "Code: 691. DB::Exception: Unknown element 'bad' for enum: (at row 2)",
      'Code: 252. DB::Exception: Too many partitions for single INSERT block (more than 100). The limit is controlled by',
    ]) {
      const reason = contentRefusal(e(text))
      expect(reason, text).toMatch(/^ClickHouse refused the row: Code \d+: /)
      expect(reason).toContain(
        text.slice(text.indexOf('DB::Exception: ') + 15, text.indexOf('DB::Exception: ') + 35),
      )
    }
  })

  it('leaves everything worth retrying alone: network, overload, too many parts, missing tables', () => {
    for (const err of [
      e('connect ECONNREFUSED 127.0.0.1:8123', 'ECONNREFUSED'),
      e('Timeout error.'),
      e(
        'Code: 252. DB::Exception: Too many parts (300). Merges are processing significantly slower than inserts',
      ),
      e("Code: 60. DB::Exception: Table burrow.events doesn't exist. (UNKNOWN_TABLE)"),
      e('Code: 241. DB::Exception: Memory limit (total) exceeded'),
      e('Code: 202. DB::Exception: Too many simultaneous queries. Maximum: 100'),
      e("Code: 49. DB::Exception: Unknown element 'bad' for type Enum8. (LOGICAL_ERROR)"),
    ]) {
      expect(contentRefusal(err), err.message).toBeUndefined()
    }
  })
})

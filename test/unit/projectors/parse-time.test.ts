import { describe, expect, it } from 'vitest'
import { parseTime } from '../../../src/projectors/decode.ts'

// parseTime must give what Date.parse gives for every text: the epoch milliseconds below are worked
// out by hand (days from 1970-01-01 × 86,400,000 + the time of day), and a sweep over awkward dates
// compares it with Date.parse itself.

describe('parseTime', () => {
  it('reads the text toISOString writes', () => {
    expect(parseTime('1970-01-01T00:00:00.000Z')).toBe(0)
    // 2024-01-01 is 19,723 days after the epoch
    expect(parseTime('2024-01-01T00:00:01.250Z')).toBe(19_723 * 86_400_000 + 1_250)
    // 2024-02-29 (leap day): 19,723 + 31 + 28 days; 23:59:59.999
    expect(parseTime('2024-02-29T23:59:59.999Z')).toBe((19_723 + 59) * 86_400_000 + 86_399_999)
    // 1969-12-31T23:59:59.000Z, one second before the epoch
    expect(parseTime('1969-12-31T23:59:59.000Z')).toBe(-1_000)
  })

  it('leaves dates that are not on the calendar, and other spellings, to Date.parse', () => {
    expect(parseTime('2023-02-29T00:00:00.000Z')).toBe(Date.parse('2023-02-29T00:00:00.000Z'))
    expect(parseTime('2024-04-31T00:00:00.000Z')).toBe(Date.parse('2024-04-31T00:00:00.000Z'))
    expect(parseTime('2024-01-01T24:00:00.000Z')).toBe(Date.parse('2024-01-01T24:00:00.000Z'))
    expect(parseTime('2024-01-01T00:00:00.000+01:00')).toBe(Date.UTC(2023, 11, 31, 23))
    expect(parseTime('2024-01-01 00:00:00')).toBe(Date.parse('2024-01-01 00:00:00'))
    expect(parseTime('2024-1x-01T00:00:00.000Z')).toBeNaN()
    expect(parseTime('')).toBeNaN()
  })

  it('agrees with Date.parse over years, month ends and times of day', () => {
    const texts: string[] = []
    for (const y of [0, 1, 99, 100, 1600, 1899, 1900, 1969, 1970, 2000, 2023, 2024, 2100, 2105, 9999]) {
      for (let mo = 0; mo <= 13; mo++) {
        for (const d of [0, 1, 15, 28, 29, 30, 31, 32]) {
          for (const t of ['00:00:00.000', '12:34:56.789', '23:59:59.999', '23:60:00.000', '24:00:00.000']) {
            texts.push(
              `${String(y).padStart(4, '0')}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}T${t}Z`,
            )
          }
        }
      }
    }
    const mismatches = texts.filter((s) => !Object.is(parseTime(s), Date.parse(s)))
    expect(mismatches).toEqual([])
  })
})

import { describe, expect, it } from 'vitest'
import { tsvBody } from '../../../src/projectors/clickhouse-io.ts'

describe('tsvBody', () => {
  it('is the UTF-8 bytes of the lines one after the other', () => {
    const lines = ['1\ta\n', '2\té😀\n', '', '3\t\\t\n']
    // é is 2 bytes (c3 a9), 😀 is 4 (f0 9f 98 80)
    const expected = [
      ...[0x31, 0x09, 0x61, 0x0a],
      ...[0x32, 0x09, 0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80, 0x0a],
      ...[0x33, 0x09, 0x5c, 0x74, 0x0a],
    ]
    expect([...tsvBody(lines)]).toEqual(expected)
  })

  it('grows past the characters of the lines when they are mostly not ASCII', () => {
    // 3 bytes per unit (CJK), 4 per pair of units (emoji), a lone surrogate written as U+FFFD,
    // after ASCII lines, so the buffer sized for the characters runs out in the middle
    const lines = [
      ...Array.from({ length: 50 }, (_, i) => `${i}\tascii\n`),
      ...Array.from({ length: 200 }, (_, i) => `${i}\t漢字かな😀\ud800\n`),
    ]
    const expected = lines.flatMap((l) => [...new TextEncoder().encode(l)])
    expect([...tsvBody(lines)]).toEqual(expected)
    expect([...tsvBody(lines, 40, 60)]).toEqual(
      lines.slice(40, 60).flatMap((l) => [...new TextEncoder().encode(l)]),
    )
  })

  it('takes a range of the lines', () => {
    expect(tsvBody(['a\n', 'b\n', 'c\n'], 1, 2).toString('utf8')).toBe('b\n')
    expect(tsvBody([]).length).toBe(0)
  })
})

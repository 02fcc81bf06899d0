import { Readable } from 'node:stream'
import { describe, expect, it } from 'vitest'
import { cellValue, csvLayout, fromCsvRow, layoutProblem } from '../../../src/import/csv-row.ts'
import { fromJsonLine, parseTimestamp } from '../../../src/import/events.ts'
import { csvRecords, jsonLines, type RawRecord } from '../../../src/import/records.ts'

// The pure parts of `burrow import`: records and their byte offsets, timestamps, CSV cells and
// headers. Expected values are worked out by hand from the input text.

async function all(gen: AsyncGenerator<RawRecord>): Promise<RawRecord[]> {
  const out: RawRecord[] = []
  for await (const r of gen) out.push(r)
  return out
}

const chunked = (s: string, size: number) => {
  const b = Buffer.from(s)
  const parts: Buffer[] = []
  for (let i = 0; i < b.length; i += size) parts.push(b.subarray(i, i + size))
  return Readable.from(parts)
}

describe('records', () => {
  it('ends JSON lines at \\n or \\r\\n, counts bytes (not characters) and skips blank lines', async () => {
    // "é" is 2 bytes in UTF-8; lines: 9+1, 0+2 (blank, \r\n), 9+1, then 7 without a line break
    const text = '{"a":"é"}\n\r\n{"b":"x"}\n{"c":1}'
    const got = await all(jsonLines(chunked(text, 3), { offset: 0, line: 0 }))
    expect(got.map((r) => [r.line, r.end, r.text])).toEqual([
      [1, 11, '{"a":"é"}'],
      [3, 23, '{"b":"x"}'],
      [4, 30, '{"c":1}'],
    ])
    // Started in the middle, offsets and lines continue from the given position.
    const rest = await all(jsonLines(chunked('{"c":1}\n', 2), { offset: 23, line: 3 }))
    expect(rest.map((r) => [r.line, r.end])).toEqual([[4, 31]])
  })

  it('reads CSV records with quoted separators and line breaks, a BOM and \\r\\n', async () => {
    const text = '\uFEFFa,b\r\n1,"x,\r\ny"\r\n2,"q""z"\r\n'
    const got = await all(csvRecords(chunked(text, 1), { offset: 0, line: 0 }))
    // BOM 3 + "a,b\r\n" 5 = 8; + '1,"x,\r\ny"\r\n' 11 = 19; + '2,"q""z"\r\n' 10 = 29
    expect(got.map((r) => [r.line, r.endLine, r.end, r.values])).toEqual([
      [1, 1, 8, ['a', 'b']],
      [2, 3, 19, ['1', 'x,\r\ny']],
      [4, 4, 29, ['2', 'q"z']],
    ])
    // A blank line is skipped but still counted.
    const blank = await all(csvRecords(chunked('a,b\n\n1,2\n', 4), { offset: 0, line: 0 }))
    expect(blank.map((r) => [r.line, r.end])).toEqual([
      [1, 4],
      [3, 9],
    ])
  })
})

describe('mapping', () => {
  it('reads the timestamp forms of exports and APIs as UTC', () => {
    expect(parseTimestamp('2023-03-01T10:00:00Z')).toBe('2023-03-01T10:00:00.000Z')
    expect(parseTimestamp('2023-03-01 10:00:00.123456')).toBe('2023-03-01T10:00:00.123Z')
    expect(parseTimestamp('2023-03-01 10:00:00.5+02:00')).toBe('2023-03-01T08:00:00.500Z')
    expect(parseTimestamp(1677664803000)).toBe('2023-03-01T10:00:03.000Z')
    expect(parseTimestamp('1677664803000')).toBe('2023-03-01T10:00:03.000Z')
    expect(parseTimestamp('2023-03-01')).toBe('2023-03-01T00:00:00.000Z')
    // already canonical: kept, but still read as a date (days past the month's end roll over as
    // Date.parse does, before 1970 refused)
    expect(parseTimestamp('2023-03-01T10:00:00.123Z')).toBe('2023-03-01T10:00:00.123Z')
    expect(parseTimestamp('2024-02-30T00:00:00.000Z')).toBe('2024-03-01T00:00:00.000Z')
    expect(parseTimestamp('2024-01-01T24:00:00.000Z')).toBe('2024-01-02T00:00:00.000Z')
    expect(parseTimestamp('2024-13-01T00:00:00.000Z')).toBeUndefined()
    expect(parseTimestamp('1969-12-31T23:59:59.999Z')).toBeUndefined()
    expect(parseTimestamp('soon')).toBeUndefined()
    expect(parseTimestamp('')).toBeUndefined()
  })

  it('types CSV cells the way the export wrote them', () => {
    expect(cellValue('')).toBeUndefined()
    expect(cellValue('True')).toBe(true)
    expect(cellValue('false')).toBe(false)
    expect(cellValue('42')).toBe(42)
    expect(cellValue('-1.5e3')).toBe(-1500)
    expect(cellValue('007')).toBe('007')
    expect(cellValue('12345678901234567890')).toBe('12345678901234567890')
    expect(cellValue('{"a":1}')).toEqual({ a: 1 })
    expect(cellValue('[1,"x"]')).toEqual([1, 'x'])
    expect(cellValue('{not json}')).toBe('{not json}')
    expect(cellValue('hello')).toBe('hello')
  })

  it('prefers the `*` columns and rebuilds nested properties', () => {
    const layout = csvLayout([
      '*.event',
      '*.distinct_id',
      '*.timestamp',
      '*.properties.$set.email',
      '*.properties.list.0',
      '*.properties.list.1',
      '*.properties.__proto__.x',
      'event',
      'properties.$lib',
      'person',
    ])
    expect(layoutProblem(layout)).toBeUndefined()
    const m = fromCsvRow(layout, ['e', 'd', '2024-01-01', 'a@b.c', '1', 'two', 'p', 'ignored', 'lib', 'x'])
    expect(m).toEqual({
      ok: expect.objectContaining({
        event: 'e',
        distinct_id: 'd',
        timestamp: '2024-01-01T00:00:00.000Z',
        properties: { $set: { email: 'a@b.c' }, list: [1, 'two'] },
      }),
      json: expect.any(String),
    })
    // the JSON text sent in the request body is the event's
    if ('ok' in m) expect(JSON.parse(m.json)).toEqual(m.ok)
    expect(layoutProblem(csvLayout(['a', 'b']))).toBe(
      'the header has no column for event, distinct_id, timestamp',
    )
  })

  it('moves top-level $set and export columns into properties, and rejects with a reason', () => {
    const m = fromJsonLine(
      JSON.stringify({
        event: 'e',
        distinct_id: 7,
        timestamp: '2024-01-01',
        $set: { a: 1 },
        set_once: '{"b": 2}',
        ip: '1.2.3.4',
        elements_chain: 'a:nth-child="1"',
      }),
    )
    expect(m).toEqual({
      ok: expect.objectContaining({
        distinct_id: '7',
        properties: {
          $set: { a: 1 },
          $set_once: { b: 2 },
          $ip: '1.2.3.4',
          $elements_chain: 'a:nth-child="1"',
        },
      }),
      json: expect.any(String),
    })
    expect(fromJsonLine('[1]')).toEqual({ error: 'not a JSON object' })
    expect(fromJsonLine('{"event":"e","distinct_id":"d"}')).toEqual({ error: 'no timestamp' })
    expect(fromJsonLine('{"event":"","distinct_id":"d","timestamp":"2024-01-01"}')).toEqual({
      error: 'no event name',
    })
    expect(
      fromJsonLine('{"event":"e","distinct_id":"d","timestamp":"2024-01-01","properties":"[]"}'),
    ).toEqual({ error: 'properties is not an object' })
  })
})

import { describe, expect, it } from 'vitest'
import type { EventRow } from '../../../src/projectors/batch.ts'
import { insertIsolating, monthOf, partitionGroups } from '../../../src/projectors/writer.ts'

const row = (iso: string, i = 0): EventRow =>
  ({ line: `${iso}\t${i}\n`, timestampMs: Date.parse(iso), seq: 1, offset: i, subject: 's' }) as EventRow
const at = (r: EventRow) => r.timestampMs

/** 26.x's text for a value too long for its column (captured from the server). */
const REFUSED_26 =
  'Code: 131. DB::Exception: Too large value for FixedString(2): (at row 3) (TOO_LARGE_STRING_SIZE)'

describe('monthOf', () => {
  it('is toYYYYMM of the UTC time, the events partition', () => {
    expect(monthOf(Date.parse('2024-01-31T23:59:59.999Z'))).toBe(202401)
    expect(monthOf(Date.parse('2024-02-01T00:00:00.000Z'))).toBe(202402)
    expect(monthOf(0)).toBe(197001)
  })
})

describe('partitionGroups', () => {
  it('keeps a batch of up to 100 months in one group, rows in their order', () => {
    const rows = [
      row('2024-03-01T00:00:00Z', 0),
      row('2016-04-01T00:00:00Z', 1),
      row('2024-03-02T00:00:00Z', 2),
    ]
    expect(partitionGroups(rows, at)).toEqual([rows])
    // 2016-04 .. 2024-07 is exactly 100 months
    const edge = [row('2016-04-01T00:00:00Z'), row('2024-07-31T00:00:00Z')]
    expect(partitionGroups(edge, at)).toEqual([edge])
  })

  it('splits 120 months into groups of at most 100 months, each month whole', () => {
    const rows: EventRow[] = []
    for (let m = 0; m < 120; m++) {
      const iso = new Date(Date.UTC(2010, m, 15)).toISOString()
      rows.push(row(iso, 2 * m), row(iso, 2 * m + 1))
    }
    const groups = partitionGroups(rows, at)
    expect(groups.map((g) => g.length)).toEqual([200, 40])
    const months = groups.map((g) => new Set(g.map((r) => monthOf(r.timestampMs))))
    expect(months.map((s) => s.size)).toEqual([100, 20])
    expect([...months[0]!].some((m) => months[1]!.has(m))).toBe(false)
    expect(
      groups
        .flat()
        .map((r) => r.offset)
        .sort((a, b) => a - b),
    ).toEqual(rows.map((r) => r.offset))
  })

  it('splits by a smaller limit when asked, and gives nothing for no rows', () => {
    const rows = [row('2024-01-01T00:00:00Z'), row('2024-02-01T00:00:00Z'), row('2024-03-01T00:00:00Z')]
    expect(partitionGroups(rows, at, 2).map((g) => g.length)).toEqual([2, 1])
    expect(partitionGroups([], at)).toEqual([])
  })
})

describe('insertIsolating', () => {
  /** An insert that refuses any request holding a line with "bad", as ClickHouse refuses a whole INSERT. */
  function server(text: string) {
    const calls: string[][] = []
    const stored: string[] = []
    const insert = async (lines: string[]) => {
      calls.push(lines)
      if (lines.some((l) => l.includes('bad'))) throw new Error(text)
      stored.push(...lines)
    }
    return { calls, stored, insert }
  }

  it('writes every good row and isolates the refused ones with the server reason', async () => {
    const s = server(REFUSED_26)
    const items = ['a', 'b', 'bad1', 'c', 'd', 'bad2', 'e']
    const refused: [string, string][] = []
    await insertIsolating(
      s.insert,
      items,
      (x) => x,
      (x, reason) => refused.push([x, reason]),
    )
    expect(s.stored.sort()).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(refused.map((r) => r[0])).toEqual(['bad1', 'bad2'])
    expect(refused[0]![1]).toMatch(
      /^ClickHouse refused the row: Code 131: .*Too large value for FixedString\(2\)/,
    )
  })

  it('writes in one request when nothing is refused', async () => {
    const s = server(REFUSED_26)
    await insertIsolating(
      s.insert,
      ['a', 'b', 'c'],
      (x) => x,
      () => {
        throw new Error('nothing is refused')
      },
    )
    expect(s.calls).toEqual([['a', 'b', 'c']])
  })

  it('throws a failure worth retrying as it is, without splitting', async () => {
    const calls: number[] = []
    const insert = async (lines: string[]) => {
      calls.push(lines.length)
      throw new Error('connect ECONNREFUSED 127.0.0.1:8123')
    }
    await expect(
      insertIsolating(
        insert,
        ['a', 'b'],
        (x) => x,
        () => undefined,
      ),
    ).rejects.toThrow(/ECONNREFUSED/)
    expect(calls).toEqual([2])
  })
})

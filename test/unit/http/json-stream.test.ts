import { describe, expect, it } from 'vitest'
import { jsonStream } from '../../../src/http/json-stream.ts'

async function text(value: Record<string, unknown>): Promise<string> {
  let out = ''
  for await (const chunk of jsonStream(value, 'results')) out += String(chunk)
  return out
}

describe('jsonStream', () => {
  it('writes what JSON.stringify writes, field values included', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => [i, `row ${i}`, { a: [i] }, null, 'é"\\'])
    const value = { results: rows, columns: ['a', 'b'], hasMore: false, skipped: undefined, n: 1.5 }
    expect(JSON.parse(await text(value))).toEqual(JSON.parse(JSON.stringify(value)))
    expect(await text({ results: [] })).toBe('{"results":[]}')
  })

  it('gives the event loop a turn between slices', async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => ['x'.repeat(40), i])
    let turns = 0
    const timer = setInterval(() => turns++, 0)
    await text({ results: rows })
    clearInterval(timer)
    expect(turns).toBeGreaterThan(2)
  })
})

import LZString from 'lz-string'
import { describe, expect, it } from 'vitest'
import { decompressLz64 } from '../../../src/capture/lz64.ts'
import { compressToLz64 } from '../../system/abuse/lz64-encode.ts'

// Expected values come from the lz-string package itself: whatever it compresses, Burrow must
// decompress to the same text.

function sample(seed: number, length: number): string {
  let s = seed
  let out = ''
  for (let i = 0; i < length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    const r = s % 100
    out +=
      r < 70
        ? 'abcde'[r % 5]
        : r < 90
          ? String.fromCharCode(32 + (r % 90))
          : String.fromCharCode(0x100 + (s % 0xd000))
  }
  return out
}

describe('lz64 (lz-string base64) decompression', () => {
  it('decodes what lz-string compresses, of every size and alphabet', async () => {
    const texts = [
      'x',
      'hello hello hello',
      JSON.stringify({ event: '$pageview', properties: { $current_url: 'https://example.com/a?b=c' } }),
      '😀 émoji and \u0000 nul',
      ...Array.from({ length: 300 }, (_, i) => sample(i + 1, i * 7)),
      'a'.repeat(100_000),
    ]
    for (const t of texts) expect(await decompressLz64(LZString.compressToBase64(t), 1e9)).toBe(t)
  })

  it('stops at the cap: 45 KB can no longer become hundreds of millions of characters', async () => {
    const bomb = LZString.compressToBase64('a'.repeat(2_000_000))
    expect(bomb.length).toBeLessThan(5_000)
    await expect(decompressLz64(bomb, 1_000_000)).rejects.toThrow(/larger than 1000000/)
    expect(await decompressLz64(LZString.compressToBase64('a'.repeat(1000)), 1000)).toHaveLength(1000)
    await expect(decompressLz64(LZString.compressToBase64('a'.repeat(1001)), 1000)).rejects.toThrow(/larger/)
  })

  it('refuses what is not lz-string base64', async () => {
    for (const bad of ['', '!!!! not lz64 ****', 'AAAA', LZString.compressToBase64('abc').slice(0, 2)])
      await expect(decompressLz64(bad, 1e6), bad).rejects.toThrow()
  })

  it('tells the caller of its output as it grows, and stops when the caller throws', async () => {
    // 200,000 characters: told all of them, in steps, before the answer
    const seen: number[] = []
    const text = await decompressLz64(LZString.compressToBase64('ab'.repeat(100_000)), 1e9, (n) =>
      seen.push(n),
    )
    expect(text).toHaveLength(200_000)
    expect(seen.length).toBeGreaterThan(1)
    expect(seen.reduce((a, n) => a + n, 0)).toBe(200_000)
    // a caller whose budget is full stops the decompression with its own error
    const full = new Error('budget full')
    await expect(
      decompressLz64(LZString.compressToBase64('ab'.repeat(100_000)), 1e9, () => {
        throw full
      }),
    ).rejects.toBe(full)
  })
})

describe("the tests' lz64 encoder (test/system/abuse/lz64-encode.ts)", () => {
  it('writes what lz-string writes', () => {
    const texts = [
      'x',
      'ab',
      'hello hello hello',
      'a'.repeat(100_000),
      JSON.stringify({ a: [1, 2, 3], b: 'q'.repeat(5000), c: 'é' }),
      ...Array.from({ length: 200 }, (_, i) =>
        [...sample(i + 1, i * 7)].map((c) => (c.charCodeAt(0) < 256 ? c : 'z')).join(''),
      ),
    ]
    for (const t of texts) expect(compressToLz64(t)).toBe(LZString.compressToBase64(t))
  })
})

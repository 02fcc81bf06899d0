import { describe, expect, it } from 'vitest'
import { wellFormedJson } from '../../../src/capture/well-formed.ts'

const logged = (v: unknown) => JSON.parse(wellFormedJson(JSON.stringify(v)))

// PostHog's cases (rust/capture/src/passes/invalid_surrogates.rs tests), through JSON.stringify.
describe('wellFormedJson', () => {
  it('replaces lone surrogates with U+FFFD as PostHog does', () => {
    expect(logged({ event: '\uD800' })).toEqual({ event: '\uFFFD' }) // unpaired high
    expect(logged({ event: '\uDC00' })).toEqual({ event: '\uFFFD' }) // unpaired low
    expect(logged({ event: '\uDC00\uD800' })).toEqual({ event: '\uFFFD\uFFFD' }) // wrong order
    expect(logged({ event: '\uD800\uDC00' })).toEqual({ event: '\uD800\uDC00' }) // a pair stays
    expect(logged({ event: '\n' })).toEqual({ event: '\n' })
  })

  it('keeps distinct ids distinct where PostHog does, and one where PostHog makes them one', () => {
    const ids = ['\ud800', '\udfff', '\ufffd', '\ud800\ud800', 'a\ud800', 'a'].map((d) => logged({ d }).d)
    expect(ids[0]).toBe(ids[1])
    expect(ids[1]).toBe(ids[2])
    expect(new Set(ids.slice(2)).size).toBe(4)
  })

  it('leaves an escaped backslash followed by text alone, and everything without lone surrogates', () => {
    expect(logged({ s: '\\ud800' })).toEqual({ s: '\\ud800' })
    expect(logged({ s: '\\\ud800' })).toEqual({ s: '\\\ufffd' })
    const plain = JSON.stringify({ s: 'é😀\u0001', k: ['\\u1234'] })
    expect(wellFormedJson(plain)).toBe(plain)
    expect(logged({ '\udfffkey': 1 })).toEqual({ '\ufffdkey': 1 })
  })
})

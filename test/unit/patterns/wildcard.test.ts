import { describe, expect, it } from 'vitest'
import { wildcardMatches } from '../../../src/patterns/wildcard.ts'

// The RegExp the matcher replaced, as the reference for small inputs (where backtracking is cheap).
const reference = (pattern: string, text: string) =>
  new RegExp(`^${pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replaceAll('\\*', '.*')}$`).test(text)

describe('wildcardMatches', () => {
  it('matches like `*` → `.*` anchored at both ends', () => {
    expect(wildcardMatches('*.example.com', 'app.example.com')).toBe(true)
    expect(wildcardMatches('app.*.com', 'app.example.com')).toBe(true)
    expect(wildcardMatches('app.*.com', 'app.com')).toBe(false)
    expect(wildcardMatches('a*a', 'a')).toBe(false)
    expect(wildcardMatches('a*a', 'aa')).toBe(true)
    expect(wildcardMatches('*', '')).toBe(true)
    expect(wildcardMatches('**', 'x')).toBe(true)
    expect(wildcardMatches('ab*ba', 'aba')).toBe(false)
    expect(wildcardMatches('x.com', 'x.com')).toBe(true)
    expect(wildcardMatches('x.com', 'xycom')).toBe(false)
  })

  it('agrees with the RegExp on every small pattern and text over a two-letter alphabet', () => {
    const words = ['']
    for (let len = 1; len <= 5; len++) {
      for (const w of words.filter((x) => x.length === len - 1)) for (const c of 'ab*') words.push(w + c)
    }
    const texts = words.filter((w) => !w.includes('*'))
    let checked = 0
    for (const p of words) {
      for (const t of texts) {
        expect(wildcardMatches(p, t), `${p} ~ ${t}`).toBe(reference(p, t))
        checked++
      }
    }
    expect(checked).toBeGreaterThan(10_000)
  })

  it('answers the backtracking case of issue 40 (the RegExp took seconds)', () => {
    const pattern = 'https://*a*a*a*a*a*a*a*a*a*a*b.com'.replace('https://', '')
    expect(wildcardMatches(pattern, 'a'.repeat(38))).toBe(false)
    expect(wildcardMatches(pattern, `${'a'.repeat(38)}b.com`)).toBe(true)
  })
})

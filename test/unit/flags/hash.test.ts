import { describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { flagHash, inRollout, pickVariant, variantRanges } from '../../../src/flags/hash.ts'

// Expected outcomes published in PostHog's own test suite, class
// TestFeatureFlagMatcherConsistency in posthog/test/test_feature_flag.py ("These tests are
// common between all libraries doing local evaluation of feature flags"). The first 100 of
// the 1000 distinct ids `distinct_id_<i>` are transcribed here.

// test_simple_flag_consistency: flag "simple-flag", one condition, rollout 45%.
// 1 = enabled, 0 = out of rollout.
const SIMPLE_FLAG_45 = [
  '0110100101',
  '0110100011',
  '0100101100',
  '0111100000',
  '0110110001',
  '1000010101',
  '0110101011',
  '0010010100',
  '1000110110',
  '1111101100',
].join('')

// test_multivariate_flag_consistency: flag "multivariate-flag", rollout 55%, variants
// first 50 / second 20 / third 20 / fourth 5 / fifth 5. Digit = variant number, - = false.
const MULTIVARIATE_55 = [
  '221--21---',
  '13-121--41',
  '-3---11111',
  '13-321-3--',
  '12-112-1--',
  '11121-2232',
  '1-124-111-',
  '12-3------',
  '15-212-33-',
  '---3--11-3',
].join('')

const FIVE_VARIANTS = [
  { key: 'first-variant', rollout_percentage: 50 },
  { key: 'second-variant', rollout_percentage: 20 },
  { key: 'third-variant', rollout_percentage: 20 },
  { key: 'fourth-variant', rollout_percentage: 5 },
  { key: 'fifth-variant', rollout_percentage: 5 },
]

describe('flagHash', () => {
  it('reproduces PostHog published rollout outcomes for a 45% flag', () => {
    for (let i = 0; i < SIMPLE_FLAG_45.length; i++) {
      const expected = SIMPLE_FLAG_45[i] === '1'
      expect(inRollout('simple-flag', `distinct_id_${i}`, 45), `distinct_id_${i}`).toBe(expected)
    }
  })

  it('reproduces PostHog published variant assignments', () => {
    for (let i = 0; i < MULTIVARIATE_55.length; i++) {
      const id = `distinct_id_${i}`
      const code = MULTIVARIATE_55[i]!
      const enabled = inRollout('multivariate-flag', id, 55)
      expect(enabled, id).toBe(code !== '-')
      if (enabled)
        expect(pickVariant('multivariate-flag', id, FIVE_VARIANTS), id).toBe(FIVE_VARIANTS[+code - 1]!.key)
    }
  })

  it('is a fraction in [0, 1], deterministic, and salted separately for variants', () => {
    const rollout = flagHash('some-flag', 'user-1')
    expect(rollout).toBeGreaterThanOrEqual(0)
    expect(rollout).toBeLessThanOrEqual(1)
    expect(flagHash('some-flag', 'user-1')).toBe(rollout)
    expect(flagHash('some-flag', 'user-1', 'variant')).not.toBe(rollout)
    expect(flagHash('other-flag', 'user-1')).not.toBe(rollout)
  })

  it('treats 0% as nobody and 100% as everybody', () => {
    for (let i = 0; i < 200; i++) {
      expect(inRollout('edge', `u${i}`, 0)).toBe(false)
      expect(inRollout('edge', `u${i}`, 100)).toBe(true)
    }
  })

  it('keeps users when the rollout grows (monotonic buckets)', () => {
    for (let i = 0; i < 500; i++) {
      if (inRollout('grow', `u${i}`, 20)) expect(inRollout('grow', `u${i}`, 60)).toBe(true)
    }
  })
})

describe('variantRanges', () => {
  it('lays variants end to end in definition order', () => {
    const ranges = variantRanges([
      { key: 'a', rollout_percentage: 50 },
      { key: 'b', rollout_percentage: 25 },
      { key: 'c', rollout_percentage: 25 },
    ])
    expect(ranges).toEqual([
      { key: 'a', min: 0, max: 0.5 },
      { key: 'b', min: 0.5, max: 0.75 },
      { key: 'c', min: 0.75, max: 1 },
    ])
  })

  it('gives no variant when the variants do not cover the hash', () => {
    expect(pickVariant('f', 'u', [])).toBeNull()
    expect(pickVariant('f', 'u', [{ key: 'only', rollout_percentage: 0 }])).toBeNull()
  })

  it('splits users roughly by weight', () => {
    const variants = [
      { key: 'a', rollout_percentage: 25 },
      { key: 'b', rollout_percentage: 75 },
    ]
    const counts = { a: 0, b: 0 }
    for (let i = 0; i < 10_000; i++) counts[pickVariant('split', `user-${i}`, variants) as 'a' | 'b']++
    // Binomial(10000, 0.25): sd ~ 43, so +/- 250 is about 6 sd.
    expect(counts.a).toBeGreaterThan(2250)
    expect(counts.a).toBeLessThan(2750)
    expect(counts.a + counts.b).toBe(10_000)
  })
})

describe('flagHash arithmetic', () => {
  // The definition written out with BigInt (PostHog's: the first 15 hex digits of the SHA-1 as an
  // integer, rounded to the nearest double, over 0xfffffffffffffff) against the faster arithmetic.
  const reference = (key: string, id: string, salt: string) =>
    Number(
      BigInt(`0x${createHash('sha1').update(`${key}.${id}${salt}`, 'utf8').digest('hex').slice(0, 15)}`),
    ) / Number(0xfffffffffffffffn)

  it('equals the BigInt definition bit for bit', () => {
    for (let i = 0; i < 5000; i++) {
      const key = `flag-${i % 37}`
      const id = i % 3 === 0 ? `ünïcode-${i}-✓` : `distinct_id_${i}`
      for (const salt of ['', 'variant'])
        expect(flagHash(key, id, salt), `${key} ${id} ${salt}`).toBe(reference(key, id, salt))
    }
  })

  it('holds a 100% rollout and picks no variant from none', () => {
    for (let i = 0; i < 200; i++) {
      expect(inRollout('any-flag', `id-${i}`, 100)).toBe(true)
      expect(pickVariant('any-flag', `id-${i}`, [])).toBeNull()
    }
  })
})

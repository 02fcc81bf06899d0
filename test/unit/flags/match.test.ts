import { describe, expect, it } from 'vitest'
import { parseRelativeDate } from '../../../src/flags/dates.ts'
import type { PropertyFilter } from '../../../src/flags/definition.ts'
import { FlagMatchError, matchProperty } from '../../../src/flags/match.ts'

// Expected values are PostHog's where it publishes them (rust/feature-flags/src/properties/
// property_matching.rs and relative_date.rs test modules), otherwise worked out by hand
// from the rules documented in src/flags/match.ts.

function filter(operator: PropertyFilter['operator'], value: PropertyFilter['value']): PropertyFilter {
  return { key: 'key', operator, value, type: 'person' }
}

function check(
  operator: PropertyFilter['operator'],
  value: PropertyFilter['value'],
  actual: unknown,
): boolean {
  return matchProperty(filter(operator, value), { key: actual })
}

describe('exact and is_not', () => {
  it('matches text case-insensitively and lists by membership (PostHog test cases)', () => {
    expect(check('exact', 'value', 'value')).toBe(true)
    expect(check('exact', 'value', 'value2')).toBe(false)
    expect(check('exact', 'value', '')).toBe(false)
    expect(check('exact', 'value', null)).toBe(false)
    const list = ['value1', 'value2', 'value3']
    expect(check('exact', list, 'value2')).toBe(true)
    expect(check('exact', list, 'value4')).toBe(false)
    for (const [actual, expected] of [
      ['us', true],
      ['Us', true],
      ['UK', true],
      ['de', false],
    ] as const) {
      expect(check('exact', ['US', 'CA', 'Uk'], actual), actual).toBe(expected)
    }
    expect(check('exact', [], 'us')).toBe(false)
  })

  it('compares numbers and text by their rendering', () => {
    expect(check('exact', '5', 5)).toBe(true)
    expect(check('exact', 5, '5')).toBe(true)
    expect(check('exact', 5.5, '5.5')).toBe(true)
    expect(check('exact', '5', 6)).toBe(false)
    expect(check('exact', ['1', '2'], 2)).toBe(true)
  })

  it('compares truthiness when the filter value is boolean-like', () => {
    expect(check('exact', true, 'TRUE')).toBe(true)
    expect(check('exact', 'true', true)).toBe(true)
    expect(check('exact', ['True'], true)).toBe(true)
    expect(check('exact', false, true)).toBe(false)
    // PostHog quirk: a false filter equals every value that is not true-ish.
    expect(check('exact', false, 'anything')).toBe(true)
    expect(check('exact', 'false', 0)).toBe(true)
  })

  it('negates exact for is_not (PostHog test cases)', () => {
    expect(check('is_not', 'value', 'value2')).toBe(true)
    expect(check('is_not', 'value', '')).toBe(true)
    expect(check('is_not', 'value', null)).toBe(true)
    expect(check('is_not', 'value', 'VALUE')).toBe(false)
    const list = ['value1', 'value2', 'value3']
    expect(check('is_not', list, 'value4')).toBe(true)
    expect(check('is_not', list, null)).toBe(true)
    expect(check('is_not', list, 'value2')).toBe(false)
  })
})

describe('substring operators', () => {
  it('icontains folds ASCII case and renders numbers (PostHog test cases)', () => {
    for (const [actual, expected] of [
      ['value', true],
      ['vaLue4', true],
      ['343tfvalue5', true],
      ['Alakazam', false],
      [123, false],
    ] as const) {
      expect(check('icontains', 'valUe', actual), String(actual)).toBe(expected)
    }
    expect(check('icontains', '3', 323)).toBe(true)
    expect(check('icontains', '3', 'three')).toBe(false)
  })

  it('not_icontains is the negation', () => {
    expect(check('not_icontains', 'corp', 'a@CORP.com')).toBe(false)
    expect(check('not_icontains', 'x', 'a@corp.com')).toBe(true)
  })

  it('folds only ASCII letters', () => {
    expect(check('icontains', 'É', 'café')).toBe(false)
    expect(check('icontains', 'CAF', 'café')).toBe(true)
  })

  it('starts_with and ends_with', () => {
    expect(check('starts_with', 'Val', 'value')).toBe(true)
    expect(check('starts_with', 'al', 'value')).toBe(false)
    expect(check('not_starts_with', 'al', 'value')).toBe(true)
    expect(check('ends_with', 'UE', 'value')).toBe(true)
    expect(check('not_ends_with', 'UE', 'value')).toBe(false)
  })
})

describe('regex', () => {
  it('searches anywhere in the rendered value', () => {
    expect(check('regex', '^\\d+$', '123')).toBe(true)
    expect(check('regex', '^\\d+$', '12a')).toBe(false)
    expect(check('regex', '@corp\\.com', 'ann@corp.com.au')).toBe(true)
    expect(check('regex', '^12', 123)).toBe(true)
    expect(check('not_regex', '^\\d+$', '12a')).toBe(true)
    expect(check('not_regex', '^\\d+$', '123')).toBe(false)
  })

  it('accepts leading inline flags as Rust regexes allow', () => {
    expect(check('regex', '(?i)^abc', 'ABCd')).toBe(true)
    expect(check('regex', '^abc', 'ABCd')).toBe(false)
  })

  it('matches PostHog’s regex test cases (posthog/test/test_feature_flag.py)', () => {
    for (const v of ['value.com', 'value2.com']) expect(check('regex', '\\.com$', v), v).toBe(true)
    for (const v of ['.com343tfvalue5', 'Alakazam', 123, 'valuecom', 'value\\com'])
      expect(check('regex', '\\.com$', v), String(v)).toBe(false)
    for (const v of ['3', 323, 'val3']) expect(check('regex', '3', v), String(v)).toBe(true)
    expect(check('regex', '3', 'three')).toBe(false)
    expect(() => check('regex', '?*', 'value')).toThrow(FlagMatchError)
  })

  it('takes inline flags anywhere, as Rust’s regex crate does', () => {
    expect(check('regex', 'x(?i)ABC', 'xabc')).toBe(true)
    expect(check('regex', '(?s)a.b', 'a\nb')).toBe(true)
    expect(check('regex', 'a.b', 'a\nb')).toBe(false)
  })

  it('refuses what an RE2-class engine cannot run in linear time: lookaround, backreferences', () => {
    expect(() => check('regex', 'foo(?=bar)', 'foobar')).toThrow(FlagMatchError)
    expect(() => check('regex', '(?<!x)y', 'y')).toThrow(FlagMatchError)
    expect(() => check('regex', '(a)\\1', 'aa')).toThrow(FlagMatchError)
  })

  it('answers a catastrophic-backtracking pattern at once (a backtracking engine never would)', () => {
    // ^(a+)+$ against a…a! doubles its work per character in JavaScript's RegExp: 31 characters
    // took 41 s. RE2 is linear, so the longest value matched (10,000 characters) finishes.
    const evil = `${'a'.repeat(9_999)}!`
    expect(check('regex', '^(a+)+$', evil)).toBe(false)
    expect(check('not_regex', '^(a+)+$', evil)).toBe(true)
    expect(check('regex', '^(a|aa)+$', 'a'.repeat(10_000))).toBe(true)
  })

  it('does not match values longer than 10,000 characters: the flag fails instead', () => {
    expect(() => check('regex', 'a', 'a'.repeat(10_001))).toThrow(FlagMatchError)
    expect(() => check('not_regex', 'a', 'a'.repeat(10_001))).toThrow(FlagMatchError)
  })

  it('throws on an invalid pattern, whether or not the property is present', () => {
    expect(() => check('regex', '(unclosed', 'x')).toThrow(FlagMatchError)
    expect(() => check('not_regex', '(unclosed', 'x')).toThrow(FlagMatchError)
    expect(() => matchProperty(filter('regex', '(unclosed'), {})).toThrow(FlagMatchError)
  })
})

describe('numeric comparisons', () => {
  it('compares as numbers whatever the JSON types', () => {
    expect(check('gt', '100', 500)).toBe(true)
    expect(check('gt', '100', '500')).toBe(true)
    expect(check('gt', '100', 50)).toBe(false)
    expect(check('gt', '100', '1000')).toBe(true) // text comparison would say false
    expect(check('gte', '100', 100)).toBe(true)
    expect(check('gte', '100', '99.99')).toBe(false)
    expect(check('lt', '100', '99.5')).toBe(true)
    expect(check('lt', '-1', -2)).toBe(true)
    expect(check('lte', '1', 1.0)).toBe(true)
    expect(check('lte', '1e2', 100)).toBe(true)
  })

  it('never matches a value that is not a number (no text fallback, as the Rust service)', () => {
    expect(check('gt', 'apple', 'banana')).toBe(false)
    expect(check('lt', 'apple', 'banana')).toBe(false)
    expect(check('gt', '1', 'abc')).toBe(false)
    expect(check('gt', '0', true)).toBe(false)
    expect(check('gt', '1', null)).toBe(false)
    expect(check('gt', '1', ' 5')).toBe(false)
    expect(check('lt', '1', '')).toBe(false)
  })
})

describe('is_set, is_not_set and absent properties', () => {
  it('is_set asks only whether the key exists (null counts)', () => {
    expect(check('is_set', undefined, null)).toBe(true)
    expect(check('is_set', undefined, '')).toBe(true)
    expect(matchProperty(filter('is_set', undefined), {})).toBe(false)
    expect(matchProperty(filter('is_not_set', undefined), {})).toBe(true)
    expect(check('is_not_set', undefined, 1)).toBe(false)
  })

  it('gives positive operators false and negative ones true when the key is absent', () => {
    const expected: Record<string, boolean> = {
      exact: false,
      is_not: true,
      icontains: false,
      not_icontains: true,
      starts_with: false,
      not_starts_with: true,
      ends_with: false,
      not_ends_with: true,
      regex: false,
      not_regex: true,
      gt: false,
      gte: false,
      lt: false,
      lte: false,
      is_date_before: false,
      is_date_after: false,
      is_date_exact: false,
    }
    for (const [operator, answer] of Object.entries(expected)) {
      const value = operator.startsWith('is_date')
        ? '2024-01-01'
        : operator.match(/^(gt|gte|lt|lte)$/)
          ? '1'
          : 'x'
      const result = matchProperty(filter(operator as PropertyFilter['operator'], value), { other: 'x' })
      expect(result, operator).toBe(answer)
    }
  })

  it('never matches a value operator whose filter value is null', () => {
    expect(check('exact', null, null)).toBe(false)
    expect(check('is_not', null, 'x')).toBe(false)
  })
})

describe('dates', () => {
  const now = new Date(Date.UTC(2024, 2, 10, 12, 0, 0))
  const dated = (operator: PropertyFilter['operator'], value: string, actual: unknown) =>
    matchProperty(filter(operator, value), { key: actual }, { now })

  it('compares absolute dates, honouring offsets and reading naive values as UTC', () => {
    expect(dated('is_date_before', '2024-01-01', '2023-12-31T23:00:00Z')).toBe(true)
    expect(dated('is_date_before', '2024-01-01', '2024-01-02')).toBe(false)
    expect(dated('is_date_after', '2024-01-01T00:00:00Z', '2024-01-01 00:00:01')).toBe(true)
    expect(dated('is_date_before', '2024-01-01T00:00:00Z', '2024-01-01T00:30:00+01:00')).toBe(true)
    expect(dated('is_date_exact', '2024-01-01', '2024-01-01T00:00:00Z')).toBe(true)
    expect(dated('is_date_after', '2024-01-01', '2024-01-01')).toBe(false)
  })

  it('reads numbers and numeric strings as unix seconds', () => {
    const march1 = Date.UTC(2024, 2, 1) / 1000
    expect(dated('is_date_after', '2024-02-29', march1)).toBe(true)
    expect(dated('is_date_before', '2024-02-29', String(march1))).toBe(false)
    expect(dated('is_date_exact', '2024-03-01T00:00:00Z', march1)).toBe(true)
  })

  it('supports relative filter values like -7d, with or without the sign', () => {
    // now - 7 days = 2024-03-03T12:00:00Z
    expect(dated('is_date_after', '-7d', '2024-03-05')).toBe(true)
    expect(dated('is_date_after', '-7d', '2024-03-01')).toBe(false)
    expect(dated('is_date_after', '7d', '2024-03-05')).toBe(true)
    expect(dated('is_date_before', '-1y', '2000-01-01')).toBe(true)
    expect(dated('is_date_after', '-24h', '2024-03-09T13:00:00Z')).toBe(true)
  })

  it('never matches unparsable dates or non-date values', () => {
    expect(dated('is_date_before', 'garbage', '2000-01-01')).toBe(false)
    expect(dated('is_date_before', '-7d', 'not a date')).toBe(false)
    expect(dated('is_date_before', '2024-01-01', true)).toBe(false)
    expect(dated('is_date_before', '2024-01-01', null)).toBe(false)
    expect(dated('is_date_before', '2024-02-30', '2000-01-01')).toBe(false)
  })
})

describe('parseRelativeDate (cases from PostHog relative_date.rs tests)', () => {
  const now = new Date(Date.UTC(2020, 0, 1, 12, 1, 20, 134))
  const at = (y: number, m: number, d: number, h = 12, mi = 1, s = 20, ms = 134) =>
    new Date(Date.UTC(y, m - 1, d, h, mi, s, ms))

  it('subtracts hours, days and weeks as fixed durations', () => {
    expect(parseRelativeDate('1h', now)).toEqual(at(2020, 1, 1, 11))
    expect(parseRelativeDate('30h', now)).toEqual(at(2019, 12, 31, 6))
    expect(parseRelativeDate('24h', now)).toEqual(parseRelativeDate('1d', now))
    expect(parseRelativeDate('30d', now)).toEqual(at(2019, 12, 2))
    expect(parseRelativeDate('8w', now)).toEqual(at(2019, 11, 6))
  })

  it('subtracts months and years on the calendar', () => {
    expect(parseRelativeDate('1m', now)).toEqual(at(2019, 12, 1))
    expect(parseRelativeDate('8m', now)).toEqual(at(2019, 5, 1))
    expect(parseRelativeDate('12m', now)).toEqual(parseRelativeDate('1y', now))
    const april = new Date(Date.UTC(2020, 3, 3))
    expect(parseRelativeDate('2m', april)).toEqual(new Date(Date.UTC(2020, 1, 3)))
    expect(parseRelativeDate('4m', april)).toEqual(new Date(Date.UTC(2019, 11, 3)))
  })

  it('clamps the day month by month (by hand: Mar 31 - 1m = Feb 29 2024, - 2m = Jan 29)', () => {
    const march31 = new Date(Date.UTC(2024, 2, 31))
    expect(parseRelativeDate('-1m', march31)).toEqual(new Date(Date.UTC(2024, 1, 29)))
    expect(parseRelativeDate('-2m', march31)).toEqual(new Date(Date.UTC(2024, 0, 29)))
    const leapDay = new Date(Date.UTC(2024, 1, 29))
    expect(parseRelativeDate('-1y', leapDay)).toEqual(new Date(Date.UTC(2023, 1, 28)))
  })

  it('rejects other shapes and amounts of 10000 or more', () => {
    for (const text of ['1', '1x', '1.2y', '1s', 'bazinga', '000hello', '100000d', '10000d']) {
      expect(parseRelativeDate(text, now), text).toBeNull()
    }
    expect(parseRelativeDate('000h', now)).toEqual(now)
    expect(parseRelativeDate('9999d', now)).not.toBeNull()
  })
})

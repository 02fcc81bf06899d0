// PostHog's own cases for the type a property gets from its first value: plugin-server
// tests/worker/ingestion/property-definitions-auto-discovery.test.ts and the auto-detection cases of
// property-definitions-manager.test.ts (inputs and PostHog's expected types).
import { describe, expect, it } from 'vitest'
import { inferPropertyType } from '../../../src/taxonomy/infer.ts'

describe('inferPropertyType (PostHog auto-discovery)', () => {
  it('numbers and strings', () => {
    expect(inferPropertyType('10', 'anything')).toBe('String')
    expect(inferPropertyType(10, 'anything')).toBe('Numeric')
    expect(inferPropertyType('', 'anything')).toBe('String')
    expect(inferPropertyType(null, 'anything')).toBe(null)
    expect(inferPropertyType(1.23, 'anything')).toBe('Numeric')
    expect(inferPropertyType('1.2.3', 'anything')).toBe('String')
    expect(inferPropertyType('9.7.0', '$app_version')).toBe('String')
  })

  it('feature flag properties are strings whatever their value', () => {
    expect(inferPropertyType('10', '$feature/my-feature')).toBe('String')
    expect(inferPropertyType('true', '$feature/my-feature')).toBe('String')
    expect(inferPropertyType('false', '$feature/my-feature')).toBe('String')
    expect(inferPropertyType(12, '$feature/my-feature')).toBe('String')
    for (const v of ['10', 'true', 'false', 12])
      expect(inferPropertyType(v, '$feature_flag_response')).toBe('String')
  })

  it('keys that only resemble a feature flag are typed by value', () => {
    expect(inferPropertyType('true', '$feature_interaction/my-feature')).toBe('Boolean')
    expect(inferPropertyType('true', '$$feature/my-feature')).toBe('Boolean')
    expect(inferPropertyType('true', ' $feature/my-feature')).toBe('Boolean')
    expect(inferPropertyType('true', '$feat/$feature/my-feature')).toBe('Boolean')
    expect(inferPropertyType('true', '$features/my-feature')).toBe('Boolean')
    expect(inferPropertyType('["a","b","c"]', '$active_feature_flags')).toBe('String')
    expect(inferPropertyType(12, 'feature_flag')).toBe('Numeric')
  })

  it('utm_ properties are strings', () => {
    expect(inferPropertyType(123, 'utm_campaign')).toBe('String')
    expect(inferPropertyType('true', 'UTM_source')).toBe('String')
  })

  it('no type for objects and arrays', () => {
    expect(inferPropertyType({ anything: 3 }, 'anObjectProperty')).toBe(null)
    expect(inferPropertyType([], 'some_bool')).toBe(null)
  })

  it.each([true, false, 'true', 'false', 'True', 'False', 'TRUE', 'FALSE', ' true ', ' false', 'true '])(
    'identifies %j as a boolean',
    (v) => expect(inferPropertyType(v, 'some_bool')).toBe('Boolean'),
  )

  it.each([0, 1, '0', '1', 'yes', 'no', null, undefined, '', [], ' '])(
    'does not identify %j as a boolean',
    (v) => expect(inferPropertyType(v, 'some_bool')).not.toBe('Boolean'),
  )

  // the manager test's unix timestamps: each case under its key, with `timestamp` replaced by
  // `time` (same answer), and with it replaced by `as a string` (a plain number or string)
  const unix: [string, number | string, 'DateTime' | 'String'][] = [
    ['unix timestamp with fractional seconds as a number', 1234567890.123, 'DateTime'],
    [
      'unix timestamp with five decimal places of fractional seconds as a number',
      1234567890.12345,
      'DateTime',
    ],
    ['unix timestamp as a number', 1234567890, 'DateTime'],
    ['unix timestamp with fractional seconds as a string', '1234567890.123', 'String'],
    [
      'unix timestamp with five decimal places of fractional seconds as a string',
      '1234567890.12345',
      'String',
    ],
    ['unix timestamp as a string', '1234567890', 'String'],
    ['unix timestamp in milliseconds as a number', 1234567890123, 'DateTime'],
    ['unix timestamp in milliseconds as a string', '1234567890123', 'String'],
  ]
  it.each(
    unix.flatMap(([key, date, type]) => [
      [key, date, type],
      [key.replace('timestamp', 'time'), date, type],
      [key.replace('timestamp', 'as a string'), date, typeof date === 'number' ? 'Numeric' : 'String'],
    ]),
  )('with key %s matches %j as %s', (key, date, type) => expect(inferPropertyType(date, key)).toBe(type))

  it.each([
    ['YYYY-MM-DD', '2021-04-01'],
    ['YYYY-MM-DDThh:mm:ssZ', '2021-04-01T13:01:01Z'],
    ['YYYY-MM-DDThh:mm:ssZ', '2021-04-01T13:01:01.243Z'],
    ['YYYY-MM-DD hh:mm:ss', '2021-04-01 13:01:01'],
    ['DD-MM-YYYY hh:mm:ss', '01-04-2021 13:01:01'],
    ['YYYY/MM/DD hh:mm:ss', '2021/04/01 13:01:01'],
    ['DD/MM/YYYY hh:mm:ss', '01/04/2021 13:01:01'],
    ['an_rfc_822_format_date', 'Wed, 02 Oct 2002 15:00:00 +0200'],
    ...[
      '2022-01-15T11:18:49.233056+00:00',
      '2022-01-15T11:18:49.233056-00:00',
      '2022-01-15T11:18:49.233056+04:00',
      '2022-01-15T11:18:49.233056-04:00',
      '2022-01-15T11:18:49.233056z',
      '2022-01-15T11:18:49.233+00:00',
      '2022-01-15T11:18:49.233-00:00',
      '2022-01-15T11:18:49.233+04:00',
      '2022-01-15T11:18:49.233-04:00',
      '2022-01-15T11:18:49.233z',
      '2022-01-15T11:18:49+00:00',
      '2022-01-15T11:18:49-00:00',
      '2022-01-15T11:18:49+04:00',
      '2022-01-15T11:18:49-04:00',
      '2022-01-15T11:18:49z',
      '2022-01-15T11:18:49+11',
      '2022-01-15T11:18:49+0530',
    ].map((d) => [`an_iso_8601_format_date_${d}`, d]),
  ])('with key %s matches %s as DateTime', (key, date) =>
    expect(inferPropertyType(date, key)).toBe('DateTime'),
  )
})

// HogQLQuery filters as the condition of {filters} (PostHog's posthog/hogql/filters.py).
import { describe, expect, it } from 'vitest'
import { filtersCondition } from '../../../src/queries/hogql-filters.ts'

const NOW = Date.parse('2024-03-10T12:30:00Z')

describe('filtersCondition', () => {
  it('is undefined without filters, so {filters} stays true', () => {
    expect(filtersCondition(undefined, 'UTC', NOW)).toBeUndefined()
    expect(filtersCondition(null, 'UTC', NOW)).toBeUndefined()
    expect(filtersCondition({}, 'UTC', NOW)).toBeUndefined()
  })

  it('compares timestamp with date_to (<) and date_from (>=), absolute dates in the project zone', () => {
    expect(
      filtersCondition({ dateRange: { date_from: '2020-01-01', date_to: '2020-01-02' } }, 'UTC', NOW),
    ).toBe("(timestamp < '2020-01-02 00:00:00') AND (timestamp >= '2020-01-01 00:00:00')")
    // an explicit offset names an instant, shown in the project's zone
    expect(filtersCondition({ dateRange: { date_from: '2020-01-01T00:00:00Z' } }, 'Europe/Berlin', NOW)).toBe(
      "(timestamp >= '2020-01-01 01:00:00')",
    )
  })

  it('counts relative dates back from now without truncating them; all is no bound', () => {
    expect(filtersCondition({ dateRange: { date_from: '-7d' } }, 'UTC', NOW)).toBe(
      "(timestamp >= '2024-03-03 12:30:00')",
    )
    expect(filtersCondition({ dateRange: { date_from: 'all' } }, 'UTC', NOW)).toBe('1 = 1')
  })

  it('adds property filters on the events of the SELECT', () => {
    expect(
      filtersCondition(
        { properties: [{ key: 'index', operator: 'exact', value: '4', type: 'event' }] },
        'UTC',
        NOW,
      ),
    ).toBe("((ifNull(properties['index'] = '4', 0)))")
  })

  it('refuses a malformed filters object and a bad date', () => {
    expect(() => filtersCondition({ dateRange: 'soon' }, 'UTC', NOW)).toThrow(/Invalid filters/)
    expect(() => filtersCondition({ dateRange: { date_from: 'yesterday-ish' } }, 'UTC', NOW)).toThrow(
      /Invalid date/,
    )
  })
})

// HogQLQuery filters as the condition of {filters} (PostHog's posthog/hogql/filters.py).
import { describe, expect, it } from 'vitest'
import { filtersCondition } from '../../../src/queries/hogql-filters.ts'

const NOW = Date.parse('2024-03-10T12:30:00Z')

describe('filtersCondition', () => {
  it('is undefined without filters, so {filters} stays true', () => {
    expect(filtersCondition(undefined, { timezone: 'UTC' }, NOW)).toBeUndefined()
    expect(filtersCondition(null, { timezone: 'UTC' }, NOW)).toBeUndefined()
    expect(filtersCondition({}, { timezone: 'UTC' }, NOW)).toBeUndefined()
  })

  it('compares timestamp with date_to (<) and date_from (>=), absolute dates in the project zone', () => {
    expect(
      filtersCondition(
        { dateRange: { date_from: '2020-01-01', date_to: '2020-01-02' } },
        { timezone: 'UTC' },
        NOW,
      ),
    ).toBe("(timestamp < '2020-01-02 00:00:00') AND (timestamp >= '2020-01-01 00:00:00')")
    // an explicit offset names an instant, shown in the project's zone
    expect(
      filtersCondition(
        { dateRange: { date_from: '2020-01-01T00:00:00Z' } },
        { timezone: 'Europe/Berlin' },
        NOW,
      ),
    ).toBe("(timestamp >= '2020-01-01 01:00:00')")
  })

  it('counts relative dates back from now without truncating them; all is no bound', () => {
    expect(filtersCondition({ dateRange: { date_from: '-7d' } }, { timezone: 'UTC' }, NOW)).toBe(
      "(timestamp >= '2024-03-03 12:30:00')",
    )
    expect(filtersCondition({ dateRange: { date_from: 'all' } }, { timezone: 'UTC' }, NOW)).toBe('1 = 1')
  })

  it('adds property filters on the events of the SELECT', () => {
    expect(
      filtersCondition(
        { properties: [{ key: 'index', operator: 'exact', value: '4', type: 'event' }] },
        { timezone: 'UTC' },
        NOW,
      ),
    ).toBe("((ifNull(properties['index'] = '4', 0)))")
  })

  it('refuses a malformed filters object and a bad date', () => {
    expect(() => filtersCondition({ dateRange: 'soon' }, { timezone: 'UTC' }, NOW)).toThrow(/Invalid filters/)
    expect(() =>
      filtersCondition({ dateRange: { date_from: 'yesterday-ish' } }, { timezone: 'UTC' }, NOW),
    ).toThrow(/Invalid date/)
  })

  // PostHog's test_filters.py test_replace_filters_test_accounts: with filterTestAccounts the
  // team's filters are AND'ed (here an event property and a person property), and nothing is
  // added when the team has none or the flag is off.
  it('adds the project test-account filters when filterTestAccounts is set', () => {
    const project = {
      timezone: 'UTC',
      settings: {
        test_account_filters: [
          { key: 'email', operator: 'not_icontains', value: '@posthog.com', type: 'person' },
          { key: '$host', operator: 'is_not', value: 'localhost:8000', type: 'event' },
        ],
      },
    }
    expect(filtersCondition({ filterTestAccounts: true }, project, NOW)).toBe(
      "((ifNull(toString(person.properties['email']) NOT ILIKE '%@posthog.com%', 1)) AND (ifNull(properties['$host'] != 'localhost:8000', 1)))",
    )
    expect(filtersCondition({ filterTestAccounts: false }, project, NOW)).toBe('1 = 1')
    expect(
      filtersCondition(
        { filterTestAccounts: true },
        { timezone: 'UTC', settings: { test_account_filters: [] } },
        NOW,
      ),
    ).toBe('1 = 1')
  })

  it('refuses stored test-account filters that are not property filters', () => {
    const project = { timezone: 'UTC', settings: { test_account_filters: [{ value: 1 }] } }
    expect(() => filtersCondition({ filterTestAccounts: true }, project, NOW)).toThrow(/test_account_filters/)
  })
})

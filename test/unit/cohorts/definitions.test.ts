import { describe, expect, it } from 'vitest'
import type { Cohort, Group } from '../../../src/cohorts/document.ts'
import { groupsToFilters } from '../../../src/cohorts/document.ts'
import { byProperties, inCohort, localCohorts } from '../../../src/cohorts/flag-match.ts'
import { parseCohortCsv } from '../../../src/cohorts/static.ts'
import { negationClause } from '../../../src/cohorts/validate.ts'
import { matchProperty } from '../../../src/flags/match.ts'
import type { PropertyFilter } from '../../../src/flags/definition.ts'

const p = (negation = false) => ({ key: 'name', value: 'test', type: 'person' as const, negation })
const g = (type: 'AND' | 'OR', ...values: Group['values']): Group => ({ type, values })

// PostHog's TestCohortNegationValidation (check_negation_clause), answers as PostHog has them
describe('negations need a positive filter ANDed with them', () => {
  it.each([
    ['a negation beside a positive filter', g('AND', p(), p(true)), false, true],
    ['extra layers', g('OR', g('AND', p()), g('AND', g('OR', p(true)), g('OR', p()))), false, true],
    [
      'two negations ANDed, under an OR',
      g('OR', g('AND', p()), g('AND', g('OR', p(true)), g('OR', p(true)))),
      true,
      true,
    ],
    [
      'a top-level AND protecting two negations',
      g('AND', g('OR', p()), g('AND', g('OR', p(true)), g('OR', p(true)))),
      false,
      true,
    ],
    [
      'no positive filter at all',
      g('AND', g('OR', p(true)), g('AND', g('OR', p(true)), g('OR', p(true)))),
      true,
      false,
    ],
    ['an empty group', g('AND'), false, false],
    ['a negation alone', g('AND', p(true)), true, false],
    ['no negation', g('AND', p()), false, true],
  ])('%s', (_name, group, pending, positive) => {
    expect(negationClause(group)).toEqual({ pendingNegation: pending, positive })
  })
})

// PostHog's test_faulty_type, test_missing_type and test_old_old_style_properties
describe('legacy groups', () => {
  it('reads an event type as person, a missing type as person, and {key: value} groups', () => {
    expect(
      groupsToFilters([
        { properties: [{ key: 'email', type: 'event', value: ['fake@test.com'], operator: 'exact' }] },
        { properties: [{ key: 'email', value: ['fake@test.com'], operator: 'exact' }] },
        { properties: { abra: 'cadabra', name: 'alakazam' } },
      ]),
    ).toEqual({
      properties: {
        type: 'OR',
        values: [
          {
            type: 'AND',
            values: [{ key: 'email', value: ['fake@test.com'], operator: 'exact', type: 'person' }],
          },
          {
            type: 'AND',
            values: [{ key: 'email', value: ['fake@test.com'], operator: 'exact', type: 'person' }],
          },
          {
            type: 'AND',
            values: [
              { key: 'abra', value: 'cadabra', type: 'person' },
              { key: 'name', value: 'alakazam', type: 'person' },
            ],
          },
        ],
      },
    })
  })

  it('reads an action or event group as "performed it", as many times, in the last days', () => {
    const f = groupsToFilters([{ action_id: 3, days: 7, count: 2, count_operator: 'gte' }]) as {
      properties: Group
    }
    expect(f.properties.values[0]).toEqual({
      type: 'AND',
      values: [
        {
          key: 3,
          type: 'behavioral',
          value: 'performed_event_multiple',
          event_type: 'actions',
          time_interval: 'day',
          time_value: 7,
          operator: 'gte',
          operator_value: 2,
        },
      ],
    })
  })
})

const cohort = (id: number, properties: Group, extra: Partial<Cohort> = {}): Cohort =>
  ({
    id,
    team_id: 1,
    name: `c${id}`,
    deleted: false,
    is_static: false,
    filters: { properties },
    ...extra,
  }) as Cohort

describe('cohorts in flags', () => {
  const corp = cohort(1, g('OR', { key: 'email', value: '@corp.com', operator: 'icontains', type: 'person' }))
  const adults = cohort(
    2,
    g(
      'AND',
      { key: 'age', value: '18', operator: 'gte', type: 'person' },
      { key: 'id', value: 1, type: 'cohort', negation: true },
    ),
  )
  const listed = cohort(3, g('AND'), { is_static: true, filters: null })
  const viewers = cohort(
    4,
    g('OR', {
      key: '$pageview',
      value: 'performed_event',
      type: 'behavioral',
      event_type: 'events',
      time_value: 7,
      time_interval: 'day',
    }),
  )
  const withStatic = cohort(5, g('AND', { key: 'id', value: 3, type: 'cohort' }))
  const all = new Map([corp, adults, listed, viewers, withStatic].map((c) => [c.id, c]))
  const lookup = (id: number) => all.get(id)
  const ctx = (props: Record<string, unknown>, members?: Set<number>) => ({
    cohort: lookup,
    members,
    matchFilter: (f: { key: string; operator: string; value: unknown }) =>
      matchProperty({ ...f, type: 'person' } as PropertyFilter, props),
  })

  it('decides person-property cohorts, nested and negated, from the properties', () => {
    expect(byProperties(2, lookup)).toBe(true)
    expect(inCohort(2, ctx({ age: '30', email: 'a@example.com' }))).toBe(true)
    expect(inCohort(2, ctx({ age: '30', email: 'a@corp.com' }))).toBe(false)
    expect(inCohort(2, ctx({ age: '12', email: 'a@example.com' }))).toBe(false)
  })

  it('decides static and behavioural cohorts, and those containing one, by membership', () => {
    for (const id of [3, 4, 5]) expect(byProperties(id, lookup)).toBe(false)
    expect(inCohort(4, ctx({}, new Set([4])))).toBe(true)
    expect(inCohort(3, ctx({}, new Set([4])))).toBe(false)
    expect(() => inCohort(4, ctx({}))).toThrow('unavailable')
    expect(() => inCohort(99, ctx({}))).toThrow('does not exist')
  })

  it('sends SDKs only what they can evaluate', () => {
    expect(Object.keys(localCohorts([2, 4, 5], lookup)).sort()).toEqual(['1', '2'])
  })
})

// PostHog's CSV rules (posthog/api/cohort.py, test_static_cohort_csv_upload and the CSV tests)
describe('CSV uploads', () => {
  it('reads one column as distinct ids, header row included', () => {
    expect(parseCohortCsv('User ID,\nemail@example.org,\n123\n')).toEqual({
      kind: 'distinct_id',
      ids: ['User ID', 'email@example.org', '123'],
    })
  })
  it('reads a person_id or email header of one column, and the id column of several', () => {
    expect(parseCohortCsv('person_id\nabc\n')).toEqual({ kind: 'person_id', ids: ['abc'] })
    expect(parseCohortCsv('Email\na@b.c\n')).toEqual({ kind: 'email', ids: ['a@b.c'] })
    expect(parseCohortCsv('name,distinct_id\nx,d1\ny,d2\n')).toEqual({
      kind: 'distinct_id',
      ids: ['d1', 'd2'],
    })
    expect(parseCohortCsv('name,Person .id,email\nx,p1,e\n')).toEqual({ kind: 'person_id', ids: ['p1'] })
  })
  it('refuses an empty file, a file without an id column and one without ids', () => {
    expect(() => parseCohortCsv('\n\n')).toThrow('CSV file is empty')
    expect(() => parseCohortCsv('name,age\nx,1\n')).toThrow('Found columns: name, age')
    expect(() => parseCohortCsv('person_id\n')).toThrow('contains no valid person IDs')
  })
})

import { describe, expect, it } from 'vitest'
import { flagFiltersSchema } from '../../../src/flags/definition.ts'
import { slugify, withEnrollment } from '../../../src/early-access/flag.ts'

describe('slugify (Django’s, which names the flag of a new feature)', () => {
  it.each([
    [' Joel is a slug ', 'joel-is-a-slug'],
    ['New Dashboard!', 'new-dashboard'],
    ['Ünïcödé  --  names', 'unicode-names'],
    ['snake_case_kept', 'snake_case_kept'],
    ['!!!', ''],
  ])('%j → %j', (name, slug) => {
    expect(slugify(name)).toBe(slug)
  })
})

describe('withEnrollment', () => {
  it('sets or clears the marker, drops legacy super groups and applies overrides', () => {
    const filters = {
      ...flagFiltersSchema.parse({ groups: [{ rollout_percentage: 10 }] }),
      super_groups: [{}],
    }
    expect(withEnrollment(filters, true)).toEqual({
      groups: [{ properties: [], rollout_percentage: 10 }],
      payloads: {},
      feature_enrollment: true,
    })
    expect(withEnrollment(filters, null, { groups: [] })).toEqual({
      groups: [],
      payloads: {},
      feature_enrollment: null,
    })
  })
})

import { describe, expect, it } from 'vitest'
import {
  flagCreateSchema,
  flagDefinitionSchema,
  flagFiltersSchema,
  flagPatchSchema,
  propertyFilterSchema,
} from '../../../src/flags/definition.ts'

// Rules mirror PostHog's FeatureFlagSerializer (posthog/api/feature_flag.py): key charset,
// variant sum of exactly 100, existing variant overrides, aggregation-consistent filters,
// string values for regex/icontains/gt..., valid dates, at least one condition on create.

const posthogShaped = {
  id: 7,
  key: 'new-checkout_2',
  name: 'New checkout',
  active: true,
  deleted: false,
  ensure_experience_continuity: false,
  filters: {
    groups: [
      {
        properties: [{ key: 'email', value: '@corp.com', operator: 'icontains', type: 'person' }],
        rollout_percentage: 50,
        variant: null,
      },
    ],
    multivariate: {
      variants: [
        { key: 'control', name: 'Control', rollout_percentage: 50 },
        { key: 'test', name: 'Test', rollout_percentage: 50 },
      ],
    },
    payloads: { test: '{"price": 9}' },
    aggregation_group_type_index: null,
  },
}

describe('flagDefinitionSchema', () => {
  it('accepts a definition in PostHog body shape', () => {
    expect(flagDefinitionSchema.parse(posthogShaped)).toMatchObject(posthogShaped)
  })

  it('fills PostHog defaults', () => {
    const parsed = flagDefinitionSchema.parse({ id: 1, key: 'k', filters: { groups: [{}] } })
    expect(parsed).toEqual({
      id: 1,
      key: 'k',
      name: '',
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      filters: { groups: [{ properties: [] }], payloads: {} },
    })
    const filter = propertyFilterSchema.parse({ key: 'plan', value: 'pro' })
    expect(filter).toEqual({ key: 'plan', value: 'pro', operator: 'exact', type: 'person' })
  })

  it('rejects keys PostHog rejects', () => {
    for (const key of ['has space', 'dot.key', '', 'ümlaut']) {
      expect(flagDefinitionSchema.safeParse({ ...posthogShaped, key }).success, key).toBe(false)
    }
  })
})

describe('flagFiltersSchema', () => {
  const filters = (patch: Record<string, unknown>) =>
    flagFiltersSchema.safeParse({ ...posthogShaped.filters, ...patch })

  it('requires variant percentages to sum to 100', () => {
    const variants = (a: number, b: number) => ({
      variants: [
        { key: 'control', rollout_percentage: a },
        { key: 'test', rollout_percentage: b },
      ],
    })
    expect(filters({ multivariate: variants(50, 40) }).success).toBe(false)
    expect(filters({ multivariate: variants(60, 50) }).success).toBe(false)
    expect(filters({ multivariate: variants(33.4, 66.6) }).success).toBe(true)
    expect(
      filters({
        multivariate: {
          variants: [
            { key: 'a', rollout_percentage: 33.3 },
            { key: 'b', rollout_percentage: 33.3 },
            { key: 'c', rollout_percentage: 33.4 },
          ],
        },
        payloads: {},
      }).success,
    ).toBe(true)
  })

  it('rejects duplicate variant keys and overrides naming no variant', () => {
    const duplicate = {
      variants: [
        { key: 'control', rollout_percentage: 50 },
        { key: 'control', rollout_percentage: 50 },
      ],
    }
    expect(filters({ multivariate: duplicate }).success).toBe(false)
    expect(filters({ groups: [{ properties: [], variant: 'nope' }] }).success).toBe(false)
    expect(filters({ groups: [{ properties: [], variant: 'test' }] }).success).toBe(true)
    expect(filters({ multivariate: null, groups: [{ properties: [], variant: 'test' }] }).success).toBe(false)
  })

  it('bounds rollout percentages to 0..100', () => {
    expect(filters({ groups: [{ rollout_percentage: 101 }] }).success).toBe(false)
    expect(filters({ groups: [{ rollout_percentage: -1 }] }).success).toBe(false)
    expect(filters({ groups: [{ rollout_percentage: 0 }, { rollout_percentage: 100 }] }).success).toBe(true)
    const badVariant = {
      variants: [
        { key: 'a', rollout_percentage: 150 },
        { key: 'b', rollout_percentage: -50 },
      ],
    }
    expect(filters({ multivariate: badVariant, payloads: {} }).success).toBe(false)
  })

  it('keeps filters consistent with the flag aggregation', () => {
    const groupFilter = { key: 'tier', value: 'x', type: 'group', group_type_index: 0 }
    expect(filters({ groups: [{ properties: [groupFilter] }] }).success).toBe(false)
    expect(
      filters({ aggregation_group_type_index: 0, groups: [{ properties: [groupFilter] }] }).success,
    ).toBe(true)
    expect(
      filters({ aggregation_group_type_index: 1, groups: [{ properties: [groupFilter] }] }).success,
    ).toBe(false)
    const personFilter = { key: 'plan', value: 'x', type: 'person' }
    expect(
      filters({ aggregation_group_type_index: 0, groups: [{ properties: [personFilter] }] }).success,
    ).toBe(false)
  })
})

describe('propertyFilterSchema', () => {
  const ok = (value: Record<string, unknown>) =>
    propertyFilterSchema.safeParse({ key: 'p', ...value }).success

  it('accepts every supported operator', () => {
    expect(ok({ operator: 'exact', value: ['a', 'b'] })).toBe(true)
    expect(ok({ operator: 'is_not', value: 1 })).toBe(true)
    expect(ok({ operator: 'is_set' })).toBe(true)
    expect(ok({ operator: 'is_not_set' })).toBe(true)
    expect(ok({ operator: 'gte', value: '10' })).toBe(true)
    expect(ok({ operator: 'is_date_after', value: '-7d' })).toBe(true)
    expect(ok({ operator: 'is_date_before', value: '2024-01-01T00:00:00Z' })).toBe(true)
  })

  it('rejects unknown operators and unsupported property types', () => {
    expect(ok({ operator: 'like', value: 'a' })).toBe(false)
    expect(ok({ operator: 'in', value: 3, type: 'cohort' })).toBe(false)
    expect(ok({ type: 'event', value: 'a' })).toBe(false)
  })

  it('needs a value, a single one, of the right kind', () => {
    expect(ok({ operator: 'exact' })).toBe(false)
    expect(ok({ operator: 'icontains', value: ['a'] })).toBe(false)
    // PostHog insists on string values for these operators.
    expect(ok({ operator: 'gt', value: 10 })).toBe(false)
    expect(ok({ operator: 'regex', value: 5 })).toBe(false)
    expect(ok({ operator: 'is_date_after', value: 'yesterday-ish' })).toBe(false)
    expect(ok({ operator: 'is_date_after', value: 20240101 })).toBe(false)
  })

  it('reads stored filters without compiling their regexes (a bad one fails only its flag)', () => {
    expect(ok({ operator: 'regex', value: '(unclosed' })).toBe(true)
  })

  it('needs group_type_index on group filters', () => {
    expect(ok({ type: 'group', value: 'a' })).toBe(false)
    expect(ok({ type: 'group', value: 'a', group_type_index: 2 })).toBe(true)
    expect(ok({ type: 'group', value: 'a', group_type_index: 5 })).toBe(false)
  })
})

describe('create and patch schemas', () => {
  it('create has no id and needs a condition set', () => {
    const { id: _id, ...body } = posthogShaped
    expect(flagCreateSchema.parse(body)).toMatchObject({ key: 'new-checkout_2' })
    expect(flagCreateSchema.safeParse({ key: 'k' }).success).toBe(false)
    expect(flagCreateSchema.safeParse({ key: 'k', filters: { groups: [] } }).success).toBe(false)
    expect(flagCreateSchema.safeParse({ filters: posthogShaped.filters }).success).toBe(false)
  })

  it('patch takes any subset and validates filters as a whole', () => {
    expect(flagPatchSchema.parse({ active: false })).toEqual({ active: false })
    expect(flagPatchSchema.parse({})).toEqual({})
    expect(flagPatchSchema.safeParse({ key: 'bad key' }).success).toBe(false)
    expect(flagPatchSchema.safeParse({ filters: { groups: [{ rollout_percentage: 200 }] } }).success).toBe(
      false,
    )
    expect(flagPatchSchema.parse({ filters: { groups: [] } })).toEqual({
      filters: { groups: [], payloads: {} },
    })
  })

  it('refuses a regex RE2 cannot compile when a flag is written, naming where it is', () => {
    const withRegex = (value: string) => ({
      key: 'rx',
      filters: { groups: [{ properties: [{ key: 'email', operator: 'regex', value }] }] },
    })
    for (const bad of ['(unclosed', '?*', 'a(?=b)', '(x)\\1']) {
      const created = flagCreateSchema.safeParse(withRegex(bad))
      expect(created.success, bad).toBe(false)
      expect(created.error?.issues[0]?.path, bad).toEqual(['filters', 'groups', 0, 'properties', 0, 'value'])
      expect(flagPatchSchema.safeParse({ filters: withRegex(bad).filters }).success, bad).toBe(false)
    }
    expect(flagCreateSchema.safeParse(withRegex('^user-\\d*7@(?i)CORP')).success).toBe(true)
  })
})

import { describe, expect, it } from 'vitest'
import { evaluateFlag, evaluateFlags } from '../../../src/flags/evaluate.ts'
import { flag, input } from './fixtures.ts'

// Rollout outcomes for "simple-flag" at 45% come from PostHog's published consistency
// vectors (see hash.test.ts): distinct_id_0 is out, distinct_id_1 is in.

const plan = (value: string) => ({ key: 'plan', value, operator: 'exact' as const, type: 'person' as const })

describe('evaluateFlag: conditions and reasons', () => {
  it('reports the matched condition with a 1-based description', () => {
    const definition = flag('f', {
      groups: [{ properties: [plan('pro')] }, { properties: [], rollout_percentage: 100 }],
    })
    expect(evaluateFlag(definition, input('u', { personProperties: { plan: 'PRO' } }))).toEqual({
      key: 'f',
      enabled: true,
      variant: null,
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      payload: null,
    })
    const second = evaluateFlag(definition, input('u', { personProperties: { plan: 'free' } }))
    expect(second.reason).toEqual({
      code: 'condition_match',
      condition_index: 1,
      description: 'Matched condition set 2',
    })
  })

  it('applies the rollout after the properties match', () => {
    const definition = flag('simple-flag', { groups: [{ properties: [], rollout_percentage: 45 }] })
    const out = evaluateFlag(definition, input('distinct_id_0'))
    expect(out.enabled).toBe(false)
    expect(out.reason).toEqual({
      code: 'out_of_rollout_bound',
      condition_index: 0,
      description: 'Out of rollout bound',
    })
    expect(evaluateFlag(definition, input('distinct_id_1')).enabled).toBe(true)
  })

  it('reports the highest-ranked failure, the later condition on ties', () => {
    const rolloutSecond = flag('f', {
      groups: [{ properties: [plan('pro')] }, { properties: [], rollout_percentage: 0 }],
    })
    expect(evaluateFlag(rolloutSecond, input('u')).reason).toMatchObject({
      code: 'out_of_rollout_bound',
      condition_index: 1,
    })
    const rolloutFirst = flag('f', {
      groups: [{ properties: [], rollout_percentage: 0 }, { properties: [plan('pro')] }],
    })
    expect(evaluateFlag(rolloutFirst, input('u')).reason).toMatchObject({
      code: 'out_of_rollout_bound',
      condition_index: 0,
    })
    const twoMisses = flag('f', { groups: [{ properties: [plan('pro')] }, { properties: [plan('team')] }] })
    expect(evaluateFlag(twoMisses, input('u')).reason).toEqual({
      code: 'no_condition_match',
      condition_index: 1,
      description: 'No matching condition set',
    })
  })

  it('has no condition index when there is no condition', () => {
    const empty = flag('f', { groups: [] })
    expect(evaluateFlag(empty, input('u'))).toMatchObject({
      enabled: false,
      reason: { code: 'no_condition_match', condition_index: null },
    })
  })

  it('treats a missing rollout as 100% and ANDs the filters of a condition', () => {
    const both = flag('f', {
      groups: [{ properties: [plan('pro'), { key: 'age', value: '18', operator: 'gte' }] }],
    })
    expect(evaluateFlag(both, input('u', { personProperties: { plan: 'pro', age: 30 } })).enabled).toBe(true)
    expect(evaluateFlag(both, input('u', { personProperties: { plan: 'pro', age: 12 } })).enabled).toBe(false)
  })
})

describe('evaluateFlag: variants and payloads', () => {
  const variants = [
    { key: 'control', rollout_percentage: 50 },
    { key: 'test', rollout_percentage: 50 },
  ]

  it('picks the variant by hash and its payload', () => {
    const definition = flag('multivariate-flag', {
      groups: [{ properties: [], rollout_percentage: 55 }],
      multivariate: {
        variants: [
          { key: 'first-variant', rollout_percentage: 50 },
          { key: 'second-variant', rollout_percentage: 20 },
          { key: 'third-variant', rollout_percentage: 20 },
          { key: 'fourth-variant', rollout_percentage: 5 },
          { key: 'fifth-variant', rollout_percentage: 5 },
        ],
      },
      payloads: { 'second-variant': { color: 'blue' }, 'first-variant': 'plain text' },
    })
    // PostHog vectors: distinct_id_0 -> second-variant, distinct_id_2 -> first-variant,
    // distinct_id_3 -> false.
    expect(evaluateFlag(definition, input('distinct_id_0'))).toMatchObject({
      enabled: true,
      variant: 'second-variant',
      payload: '{"color":"blue"}',
    })
    expect(evaluateFlag(definition, input('distinct_id_2'))).toMatchObject({
      variant: 'first-variant',
      payload: 'plain text',
    })
    expect(evaluateFlag(definition, input('distinct_id_3'))).toMatchObject({
      enabled: false,
      variant: null,
      payload: null,
    })
  })

  it('uses a condition variant override', () => {
    const definition = flag('f', {
      groups: [{ properties: [plan('pro')], variant: 'test' }, { properties: [] }],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 100 },
          { key: 'test', rollout_percentage: 0 },
        ],
      },
    })
    expect(evaluateFlag(definition, input('u', { personProperties: { plan: 'pro' } })).variant).toBe('test')
    expect(evaluateFlag(definition, input('u', { personProperties: { plan: 'free' } })).variant).toBe(
      'control',
    )
  })

  it('evaluates conditions with a variant override first, as PostHog server does', () => {
    // flag_matching.rs get_match sorts override conditions to the top (stable); the
    // reported index is still the condition's own.
    const definition = flag('f', {
      groups: [{ properties: [] }, { properties: [], variant: 'test' }],
      multivariate: {
        variants: [
          { key: 'control', rollout_percentage: 100 },
          { key: 'test', rollout_percentage: 0 },
        ],
      },
    })
    expect(evaluateFlag(definition, input('u'))).toMatchObject({
      variant: 'test',
      reason: { code: 'condition_match', condition_index: 1 },
    })
  })

  it('uses the "true" payload for boolean flags and none when disabled', () => {
    const on = flag('f', { groups: [{ properties: [] }], payloads: { true: [1, 2] } })
    expect(evaluateFlag(on, input('u')).payload).toBe('[1,2]')
    const off = flag('f', { groups: [{ properties: [], rollout_percentage: 0 }], payloads: { true: 'x' } })
    expect(evaluateFlag(off, input('u')).payload).toBeNull()
  })

  it('splits users across variants by weight', () => {
    const definition = flag('split', { groups: [{ properties: [] }], multivariate: { variants } })
    let control = 0
    for (let i = 0; i < 4000; i++)
      if (evaluateFlag(definition, input(`user-${i}`)).variant === 'control') control++
    // Binomial(4000, 0.5): sd ~ 32.
    expect(control).toBeGreaterThan(1800)
    expect(control).toBeLessThan(2200)
  })
})

describe('evaluateFlag: group flags', () => {
  const mapping = { 0: 'company', 1: 'project' }
  const groupFlag = () =>
    flag('simple-flag', {
      aggregation_group_type_index: 0,
      groups: [
        {
          properties: [{ key: 'tier', value: 'enterprise', type: 'group', group_type_index: 0 }],
          rollout_percentage: 45,
        },
      ],
    })

  it('is off with no_group_type when the group is not sent or not mapped', () => {
    const noGroup = evaluateFlag(groupFlag(), input('u', { groupTypeIndexToName: mapping }))
    expect(noGroup).toEqual({
      key: 'simple-flag',
      enabled: false,
      variant: null,
      reason: { code: 'no_group_type', condition_index: null, description: 'No group type' },
      payload: null,
    })
    const unmapped = evaluateFlag(
      groupFlag(),
      input('u', { groups: { company: 'x' }, groupTypeIndexToName: {} }),
    )
    expect(unmapped.reason.code).toBe('no_group_type')
  })

  it('buckets by the group key and matches group properties', () => {
    const groupProperties = { company: { tier: 'Enterprise' } }
    // The group key takes the place of the distinct id in the hash: PostHog's vectors say
    // distinct_id_1 is inside a 45% "simple-flag" rollout and distinct_id_0 is not.
    const inside = input('whoever', {
      groups: { company: 'distinct_id_1' },
      groupProperties,
      groupTypeIndexToName: mapping,
    })
    expect(evaluateFlag(groupFlag(), inside).enabled).toBe(true)
    const outside = input('distinct_id_1', {
      groups: { company: 'distinct_id_0' },
      groupProperties,
      groupTypeIndexToName: mapping,
    })
    expect(evaluateFlag(groupFlag(), outside).reason.code).toBe('out_of_rollout_bound')
    const otherTier = input('u', {
      groups: { company: 'distinct_id_1' },
      groupProperties: { company: { tier: 'free' } },
      personProperties: { tier: 'enterprise' },
      groupTypeIndexToName: mapping,
    })
    expect(evaluateFlag(groupFlag(), otherTier).reason.code).toBe('no_condition_match')
  })
})

describe('evaluateFlags', () => {
  it('leaves out inactive and deleted flags', () => {
    const flags = [
      flag('on', { groups: [{ properties: [] }] }),
      flag('inactive', { groups: [{ properties: [] }] }, { active: false }),
      flag('deleted', { groups: [{ properties: [] }] }, { deleted: true }),
    ]
    const evaluation = evaluateFlags(flags, input('u'))
    expect(Object.keys(evaluation.results)).toEqual(['on'])
    expect(evaluation.errorsWhileComputingFlags).toBe(false)
  })

  it('isolates a flag whose evaluation fails and reports the error', () => {
    const flags = [
      flag('good', { groups: [{ properties: [] }] }),
      flag('bad-regex', {
        groups: [{ properties: [{ key: 'email', value: '(unclosed', operator: 'regex' }] }],
      }),
      flag('also-good', { groups: [{ properties: [plan('pro')] }] }),
    ]
    // The broken pattern fails the flag even for a person who lacks the property.
    for (const personProperties of [{ plan: 'pro', email: 'a@b.c' }, { plan: 'pro' }]) {
      const evaluation = evaluateFlags(flags, input('u', { personProperties }))
      expect(Object.keys(evaluation.results).sort()).toEqual(['also-good', 'good'])
      expect(evaluation.errorsWhileComputingFlags).toBe(true)
      expect(evaluation.errors['bad-regex']).toMatch(/invalid regex/)
    }
  })
})

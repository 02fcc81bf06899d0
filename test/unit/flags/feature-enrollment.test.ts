import { describe, expect, it } from 'vitest'
import { evaluateFlag } from '../../../src/flags/evaluate.ts'
import { flag, input } from './fixtures.ts'

// PostHog's feature enrollment (rust/feature-flags docs "Feature enrollment" and flag_matching.rs):
// with `filters.feature_enrollment`, the person property `$feature_enrollment/<key>` decides first —
// true or "true" enrols, any other present value opts out — and only its absence falls through.

const eaf = flag('new-dashboard', {
  groups: [{ properties: [], rollout_percentage: 0 }],
  feature_enrollment: true,
  payloads: { true: '{"banner":true}' },
})
const prop = '$feature_enrollment/new-dashboard'

describe('feature enrollment', () => {
  it.each([
    [true, true],
    ['true', true],
    [false, false],
    ['false', false],
    ['yes', false],
    [null, false],
  ])('decides by %j before any condition (enabled: %s)', (value, enabled) => {
    const r = evaluateFlag(eaf, input('u1', { personProperties: { [prop]: value } }))
    expect(r).toEqual({
      key: 'new-dashboard',
      enabled,
      variant: null,
      reason: { code: 'super_condition_value', condition_index: 0, description: 'Super condition value' },
      payload: enabled ? '{"banner":true}' : null,
    })
  })

  it('falls through to the conditions when the person has no such property', () => {
    expect(evaluateFlag(eaf, input('u1')).reason.code).toBe('out_of_rollout_bound')
    const everyone = flag('rolled-out', {
      groups: [{ properties: [], rollout_percentage: 100 }],
      feature_enrollment: true,
    })
    expect(evaluateFlag(everyone, input('u1')).enabled).toBe(true)
  })

  it('an opted-out person does not reach a condition that would match', () => {
    const everyone = flag('all-in', {
      groups: [{ properties: [], rollout_percentage: 100 }],
      feature_enrollment: true,
    })
    const r = evaluateFlag(
      everyone,
      input('u1', { personProperties: { '$feature_enrollment/all-in': false } }),
    )
    expect(r.enabled).toBe(false)
  })

  it('ignores the property on a flag without the marker', () => {
    const plain = flag('plain', { groups: [{ properties: [], rollout_percentage: 0 }] })
    const r = evaluateFlag(plain, input('u1', { personProperties: { '$feature_enrollment/plain': true } }))
    expect(r.enabled).toBe(false)
    expect(r.reason.code).toBe('out_of_rollout_bound')
  })
})

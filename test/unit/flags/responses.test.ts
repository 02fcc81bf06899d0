import { describe, expect, it } from 'vitest'
import { evaluateFlags } from '../../../src/flags/evaluate.ts'
import { decideV3Body, decideV4Body, flagsV2Body, localEvaluationBody } from '../../../src/flags/responses.ts'
import { flag, input } from './fixtures.ts'

const definitions = [
  flag('bool-on', { groups: [{ properties: [] }], payloads: { true: { a: 1 } } }, { version: 3 }),
  flag('bool-off', { groups: [{ properties: [], rollout_percentage: 0 }], payloads: { true: 'never' } }),
  flag('multi', {
    groups: [{ properties: [], variant: 'b' }],
    multivariate: {
      variants: [
        { key: 'a', rollout_percentage: 50 },
        { key: 'b', rollout_percentage: 50 },
      ],
    },
    payloads: { b: 'text payload' },
  }),
  flag('broken', { groups: [{ properties: [{ key: 'p', operator: 'regex', value: '[' }] }] }),
  flag('inactive', { groups: [{ properties: [] }] }, { active: false }),
  flag('gone', { groups: [{ properties: [] }] }, { deleted: true }),
]
const evaluation = evaluateFlags(definitions, input('user-1'))
const context = { requestId: '0190a6b4-0000-7000-8000-000000000000', evaluatedAt: 1_720_000_000_000 }

describe('decide v3 body', () => {
  it('has exactly the documented keys and flag values', () => {
    const body = decideV3Body(evaluation)
    expect(body).toEqual({
      config: { enable_collect_everything: true },
      toolbarParams: {},
      errorsWhileComputingFlags: true,
      isAuthenticated: false,
      supportedCompression: ['gzip', 'lz64'],
      featureFlags: { 'bool-on': true, 'bool-off': false, multi: 'b' },
      featureFlagPayloads: { 'bool-on': '{"a":1}', multi: 'text payload' },
    })
    expect(Object.hasOwn(body, 'quotaLimited')).toBe(false)
  })

  it('empties flags and payloads when the quota is exceeded', () => {
    const body = decideV3Body(evaluation, true)
    expect(body.quotaLimited).toEqual(['feature_flags'])
    expect(body.featureFlags).toEqual({})
    expect(body.featureFlagPayloads).toEqual({})
  })
})

describe('flags v2 and decide v4 bodies', () => {
  it('details every evaluated flag', () => {
    const body = flagsV2Body(evaluation, definitions, context)
    expect(Object.keys(body).sort()).toEqual([
      'errorsWhileComputingFlags',
      'evaluatedAt',
      'flags',
      'requestId',
    ])
    expect(body.requestId).toBe(context.requestId)
    expect(body.evaluatedAt).toBe(context.evaluatedAt)
    expect(body.errorsWhileComputingFlags).toBe(true)
    expect(Object.keys(body.flags).sort()).toEqual(['bool-off', 'bool-on', 'multi'])
    expect(body.flags['bool-on']).toEqual({
      key: 'bool-on',
      enabled: true,
      variant: null,
      reason: { code: 'condition_match', condition_index: 0, description: 'Matched condition set 1' },
      metadata: { id: definitions[0]!.id, version: 3, description: null, payload: '{"a":1}' },
    })
    expect(body.flags['bool-off']).toMatchObject({
      enabled: false,
      reason: { code: 'out_of_rollout_bound', condition_index: 0, description: 'Out of rollout bound' },
      metadata: { version: 0, payload: null },
    })
    expect(body.flags.multi).toMatchObject({
      enabled: true,
      variant: 'b',
      metadata: { payload: 'text payload' },
    })
  })

  it('reports the quota limit with no flags', () => {
    const body = flagsV2Body(evaluation, definitions, { ...context, quotaLimited: true })
    expect(body).toEqual({
      ...context,
      flags: {},
      errorsWhileComputingFlags: false,
      quotaLimited: ['feature_flags'],
    })
  })

  it('decide v4 adds the remote config fields', () => {
    const body = decideV4Body(evaluation, definitions, context)
    expect(body).toMatchObject({
      config: { enable_collect_everything: true },
      toolbarParams: {},
      isAuthenticated: false,
      supportedCompression: ['gzip', 'lz64'],
      requestId: context.requestId,
    })
    expect(body.flags).toEqual(flagsV2Body(evaluation, definitions, context).flags)
    expect(Object.hasOwn(body, 'featureFlags')).toBe(false)
  })
})

describe('local evaluation body', () => {
  it('lists non-deleted definitions with text payloads and the group type mapping', () => {
    const body = localEvaluationBody(definitions, { 0: 'company', 2: 'project' })
    expect(Object.keys(body).sort()).toEqual(['cohorts', 'flags', 'group_type_mapping'])
    expect(body.group_type_mapping).toEqual({ '0': 'company', '2': 'project' })
    expect(body.cohorts).toEqual({})
    expect(body.flags.map((f) => f.key)).toEqual(['bool-on', 'bool-off', 'multi', 'broken', 'inactive'])
    expect(body.flags[0]).toEqual({
      id: definitions[0]!.id,
      name: '',
      key: 'bool-on',
      active: true,
      deleted: false,
      ensure_experience_continuity: false,
      version: 3,
      filters: {
        groups: [{ properties: [] }],
        multivariate: null,
        aggregation_group_type_index: null,
        payloads: { true: '{"a":1}' },
      },
    })
    expect(body.flags.find((f) => f.key === 'inactive')?.active).toBe(false)
    // Survives a JSON round trip unchanged (what the HTTP layer will do).
    expect(JSON.parse(JSON.stringify(body))).toEqual(body)
  })
})

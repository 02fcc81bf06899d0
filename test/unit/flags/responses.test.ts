import { describe, expect, it } from 'vitest'
import { evaluateFlags } from '../../../src/flags/evaluate.ts'
import {
  decideV3Body,
  decideV4Body,
  flagsV2Body,
  flagsV2Json,
  localEvaluationBody,
} from '../../../src/flags/responses.ts'
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

describe('flags v2 JSON text', () => {
  // What changes how JSON and object key order work: integer-like keys come first in a JS object;
  // quotes, newlines and non-ASCII in variants and payloads need escaping.
  const odd = [
    flag('20', { groups: [{ properties: [] }] }),
    flag('3', { groups: [{ properties: [], rollout_percentage: 0 }] }, { version: 7 }),
    flag('payload_with_escapes', {
      groups: [{ properties: [] }],
      payloads: { true: 'line\nbreak "quoted" ünïcödé \u2028' },
    }),
    flag('multi-odd', {
      groups: [{ properties: [{ key: 'plan', operator: 'exact', value: 'pro' }] }, { properties: [] }],
      multivariate: { variants: [{ key: 'vär "x"', rollout_percentage: 100 }] },
      payloads: { 'vär "x"': { nested: ['a', 1, null] } },
    }),
  ]
  const all = [...definitions, ...odd]
  const oddEvaluation = evaluateFlags(all, input('user-2', { personProperties: { plan: 'free' } }))

  it('is the text of the v2 body, key order included', () => {
    for (const [ev, defs] of [
      [evaluation, definitions],
      [oddEvaluation, all],
    ] as const) {
      const text = flagsV2Json(ev, defs, context)
      expect(text).toBe(JSON.stringify(flagsV2Body(ev, defs, context)))
      // and again, from the parts remembered per definition
      expect(flagsV2Json(ev, defs, context)).toBe(text)
    }
    const parsed = JSON.parse(flagsV2Json(oddEvaluation, all, context))
    expect(Object.keys(parsed.flags).slice(0, 2)).toEqual(['3', '20'])
    expect(parsed.flags['3'].metadata).toEqual({
      id: odd[1]!.id,
      version: 7,
      description: null,
      payload: null,
    })
    expect(parsed.flags['multi-odd']).toEqual({
      key: 'multi-odd',
      enabled: true,
      variant: 'vär "x"',
      reason: { code: 'condition_match', condition_index: 1, description: 'Matched condition set 2' },
      metadata: { id: odd[3]!.id, version: 0, description: null, payload: '{"nested":["a",1,null]}' },
    })
  })

  it('follows a definition that changed, and a flag without a definition', () => {
    const before = flagsV2Json(evaluation, definitions, context)
    const changed = definitions.map((d) => (d.key === 'bool-on' ? { ...d, id: 999, version: 4 } : d))
    const after = JSON.parse(flagsV2Json(evaluation, changed, context))
    expect(after.flags['bool-on'].metadata).toMatchObject({ id: 999, version: 4 })
    expect(JSON.parse(before).flags['bool-on'].metadata).toMatchObject({ id: definitions[0]!.id, version: 3 })
    const orphan = JSON.parse(flagsV2Json(evaluation, [], context))
    expect(orphan.flags['bool-on'].metadata).toEqual({
      id: 0,
      version: 0,
      description: null,
      payload: '{"a":1}',
    })
  })

  it('reports the quota limit with no flags', () => {
    const limited = { ...context, quotaLimited: true }
    expect(flagsV2Json(evaluation, definitions, limited)).toBe(
      JSON.stringify(flagsV2Body(evaluation, definitions, limited)),
    )
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

import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FlagDefinition } from '../../../src/flags/definition.ts'
import { type EvalInput, evaluateFlags } from '../../../src/flags/evaluate.ts'
import { decideV3Body, localEvaluationBody } from '../../../src/flags/responses.ts'
import { flag } from './fixtures.ts'

// posthog-node evaluates flags itself from the local evaluation body; it must reach the
// same values as Burrow's server-side evaluation. The flags avoid the documented points
// where PostHog's SDK and its server differ (SDK: a missing property is "unknown" instead
// of a definite answer; conditions with a variant override are not moved first; invalid
// regexes and non-numeric gt/lt compare differently), except missing properties, which
// the comparison skips only where the SDK itself says it cannot decide.

const GROUP_TYPES = { 0: 'company' }

const flags: FlagDefinition[] = [
  flag('rollout-30', { groups: [{ properties: [], rollout_percentage: 30 }] }),
  flag('rollout-85', {
    groups: [{ properties: [], rollout_percentage: 85 }],
    payloads: { true: { on: true } },
  }),
  flag('three-way', {
    groups: [{ properties: [], rollout_percentage: 80 }],
    multivariate: {
      variants: [
        { key: 'red', rollout_percentage: 34 },
        { key: 'green', rollout_percentage: 33 },
        { key: 'blue', rollout_percentage: 33 },
      ],
    },
    payloads: { red: '{"hex":"#f00"}', blue: 'plain' },
  }),
  flag('targeted', {
    groups: [
      { properties: [{ key: 'email', operator: 'icontains', value: '@CORP.com' }], rollout_percentage: 100 },
      { properties: [{ key: 'country', operator: 'exact', value: ['US', 'ca'] }], rollout_percentage: 50 },
    ],
  }),
  flag('adults-paying', {
    groups: [
      {
        properties: [
          { key: 'age', operator: 'gte', value: '18' },
          { key: 'plan', operator: 'is_not', value: 'free' },
        ],
        rollout_percentage: 70,
      },
    ],
  }),
  flag('regex-users', {
    groups: [{ properties: [{ key: 'email', operator: 'regex', value: '^user-\\d*7@' }] }],
  }),
  flag('not-example', {
    groups: [
      { properties: [{ key: 'email', operator: 'not_icontains', value: 'example' }], rollout_percentage: 90 },
    ],
  }),
  flag('override-first', {
    groups: [
      { properties: [{ key: 'plan', operator: 'exact', value: 'pro' }], variant: 'treatment' },
      { properties: [], rollout_percentage: 50 },
    ],
    multivariate: {
      variants: [
        { key: 'control', rollout_percentage: 50 },
        { key: 'treatment', rollout_percentage: 50 },
      ],
    },
    payloads: { treatment: { price: 9 } },
  }),
  flag('recent-signups', {
    groups: [{ properties: [{ key: 'signup', operator: 'is_date_after', value: '2024-01-01' }] }],
  }),
  flag('beta-bool', { groups: [{ properties: [{ key: 'beta', operator: 'exact', value: ['true'] }] }] }),
  flag('big-companies', {
    aggregation_group_type_index: 0,
    groups: [
      {
        properties: [{ key: 'size', operator: 'gt', value: '100', type: 'group', group_type_index: 0 }],
        rollout_percentage: 60,
      },
    ],
  }),
  flag('all-companies', {
    aggregation_group_type_index: 0,
    groups: [{ properties: [], rollout_percentage: 40 }],
  }),
  flag('paused', { groups: [{ properties: [] }] }, { active: false }),
]

const COUNTRIES = ['US', 'ca', 'DE', 'us', 'FR']
const PLANS = ['free', 'pro', 'team']
const IDS = 500

function inputFor(i: number): EvalInput {
  const personProperties: Record<string, unknown> = {
    email: `user-${i}@${i % 3 === 0 ? 'corp.com' : 'example.com'}`,
    country: COUNTRIES[i % COUNTRIES.length],
    plan: PLANS[i % PLANS.length],
    signup: `202${3 + (i % 3)}-0${1 + (i % 9)}-1${i % 10}`,
    beta: i % 4 === 0 ? true : i % 4 === 1 ? 'TRUE' : 'no',
  }
  // Every seventh person has no age: the SDK cannot decide `adults-paying` for them.
  if (i % 7 !== 0) personProperties.age = i % 5 === 0 ? String(i % 40) : i % 40
  // Every eleventh request has no group, which turns group flags off.
  const withGroup = i % 11 !== 0
  const company = `company-${i % 37}`
  return {
    distinctId: `distinct-${i}-${(i * 7919) % 1000}`,
    personProperties,
    groups: withGroup ? { company } : {},
    groupProperties: withGroup ? { company: { size: (i * 37) % 300 } } : {},
    groupTypeIndexToName: GROUP_TYPES,
  }
}

function parsePayload(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

describe('posthog-node local evaluation agrees with evaluateFlags', () => {
  let client: PostHog
  const requestedUrls: string[] = []

  beforeAll(() => {
    const body = JSON.stringify(localEvaluationBody(flags, GROUP_TYPES))
    client = new PostHog('phc_parity', {
      host: 'http://burrow.invalid',
      personalApiKey: 'phx_parity',
      featureFlagsPollingInterval: null,
      flushAt: 1_000_000,
      fetch: async (url: string) => {
        requestedUrls.push(url)
        const isDefinitions =
          url.includes('/flags/definitions') || url.includes('/api/feature_flag/local_evaluation')
        return {
          status: isDefinitions ? 200 : 404,
          headers: new Headers(),
          text: async () => (isDefinitions ? body : '{}'),
          json: async () => JSON.parse(isDefinitions ? body : '{}'),
        }
      },
    })
  })

  afterAll(async () => {
    await client.shutdown()
  })

  it(`for ${IDS} distinct ids`, async () => {
    let compared = 0
    let undecided = 0
    const enabledCounts: Record<string, number> = {}
    for (let i = 0; i < IDS; i++) {
      const request = inputFor(i)
      const ours = decideV3Body(evaluateFlags(flags, request))
      const theirs = await client.getAllFlagsAndPayloads(request.distinctId, {
        personProperties: request.personProperties as Record<string, string>,
        groups: request.groups,
        groupProperties: request.groupProperties as Record<string, Record<string, string>>,
        onlyEvaluateLocally: true,
      })
      const theirFlags = theirs.featureFlags ?? {}
      for (const [key, value] of Object.entries(ours.featureFlags)) {
        if (!(key in theirFlags)) {
          // The SDK leaves a flag out only when it cannot decide it locally.
          expect(key, `distinct ${i}`).toBe('adults-paying')
          expect(request.personProperties.age, `distinct ${i}`).toBeUndefined()
          undecided++
          continue
        }
        expect(theirFlags[key], `${key} for ${request.distinctId}`).toEqual(value)
        compared++
        if (value !== false) enabledCounts[key] = (enabledCounts[key] ?? 0) + 1
      }
      for (const key of Object.keys(theirFlags)) {
        if (key === 'paused') expect(theirFlags[key]).toBe(false)
        else expect(ours.featureFlags, `${key} missing for ${request.distinctId}`).toHaveProperty(key)
      }
      const theirPayloads = theirs.featureFlagPayloads ?? {}
      for (const [key, text] of Object.entries(ours.featureFlagPayloads)) {
        if (key in theirFlags) expect(theirPayloads[key], `${key} payload`).toEqual(parsePayload(text))
      }
    }
    expect(requestedUrls.length).toBeGreaterThan(0)
    expect(requestedUrls.every((url) => url.includes('/flags/definitions'))).toBe(true)
    expect(compared).toBeGreaterThan(IDS * 10)
    expect(undecided).toBeGreaterThan(0)
    // Every flag is on for somebody and off for somebody, so the comparison means something.
    for (const definition of flags) {
      if (definition.key === 'paused') continue
      expect(enabledCounts[definition.key] ?? 0, definition.key).toBeGreaterThan(0)
      expect(enabledCounts[definition.key] ?? 0, definition.key).toBeLessThan(IDS)
    }
  })
})

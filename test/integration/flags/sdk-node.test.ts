import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject } from '../../harness/index.ts'
import { flagInput, insertGroup, post, startFlagsBurrow, stopFlagsBurrows } from './helpers.ts'

// The real posthog-node SDK against Burrow: remote evaluation (POST /flags), local evaluation
// (definitions from GET /flags/definitions, evaluated by the SDK) and Burrow's own /flags must
// give the same values and payloads for every distinct id.

const IDS = 150
const person = (p: string, operator: string, value: unknown) => ({ key: p, operator, value, type: 'person' })

const FLAGS = [
  flagInput('sdk-rollout-30', { groups: [{ properties: [], rollout_percentage: 30 }] }),
  flagInput('sdk-rollout-70', {
    groups: [{ properties: [], rollout_percentage: 70 }],
    payloads: { true: { discount: 10 } },
  }),
  flagInput('sdk-three-way', {
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
  flagInput('sdk-targeted', {
    groups: [
      { properties: [person('email', 'icontains', '@CORP.com')], rollout_percentage: 100 },
      { properties: [person('country', 'exact', ['US', 'ca'])], rollout_percentage: 50 },
    ],
  }),
  flagInput('sdk-adults', {
    groups: [
      { properties: [person('age', 'gte', '18'), person('plan', 'is_not', 'free')], rollout_percentage: 70 },
    ],
  }),
  flagInput('sdk-regex', { groups: [{ properties: [person('email', 'regex', '^user-\\d*7@')] }] }),
  flagInput('sdk-override', {
    groups: [
      { properties: [person('plan', 'exact', 'pro')], variant: 'treatment' },
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
  flagInput('sdk-signup', { groups: [{ properties: [person('signup', 'is_date_after', '2024-01-01')] }] }),
  flagInput('sdk-companies', {
    aggregation_group_type_index: 0,
    groups: [
      {
        properties: [{ key: 'size', operator: 'gt', value: '100', type: 'group', group_type_index: 0 }],
        rollout_percentage: 60,
      },
    ],
  }),
  flagInput('sdk-inactive', { groups: [{ properties: [] }] }, { active: false }),
]

const COUNTRIES = ['US', 'ca', 'DE', 'us', 'FR']
const PLANS = ['free', 'pro', 'team']

function subject(i: number) {
  const company = `company-${i % 23}`
  return {
    distinctId: `sdk-${i}-${(i * 7919) % 1000}`,
    personProperties: {
      email: `user-${i}@${i % 3 === 0 ? 'corp.com' : 'example.com'}`,
      country: COUNTRIES[i % COUNTRIES.length]!,
      plan: PLANS[i % PLANS.length]!,
      age: String(i % 40),
      signup: `202${3 + (i % 3)}-0${1 + (i % 9)}-1${i % 10}`,
    },
    groups: { company },
    groupProperties: { company: { size: String((i * 37) % 300) } },
  }
}

let burrow: RunningBurrow
let project: Project
let remote: PostHog
let local: PostHog

beforeAll(async () => {
  burrow = await startFlagsBurrow()
  project = await createTestProject('flags posthog-node')
  const call = api(burrow.url, await createTestKey(['feature_flag:write']))
  for (const f of FLAGS) {
    const r = await call('POST', `/api/projects/${project.id}/feature_flags/`, f)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
  }
  await insertGroup(clickhouse(), project.id, 0, 'company', 'company-0', { size: 1 })
  const common = { host: burrow.url, flushAt: 1000, flushInterval: 0, featureFlagsPollingInterval: 600_000 }
  remote = new PostHog(project.api_token, common)
  local = new PostHog(project.api_token, {
    ...common,
    personalApiKey: await createTestKey(['feature_flag:read']),
  })
})
afterAll(async () => {
  await remote?.shutdown()
  await local?.shutdown()
  await stopFlagsBurrows()
})

describe('posthog-node against Burrow', () => {
  it(`remote, local and /flags agree for ${IDS} distinct ids`, async () => {
    const active = FLAGS.filter((f) => (f as { active?: boolean }).active !== false).map((f) => f.key)
    const enabled: Record<string, number> = {}
    for (let i = 0; i < IDS; i++) {
      const s = subject(i)
      const opts = {
        personProperties: s.personProperties,
        groups: s.groups,
        groupProperties: s.groupProperties,
      }
      const theirsRemote = await remote.getAllFlagsAndPayloads(s.distinctId, opts)
      const theirsLocal = await local.getAllFlagsAndPayloads(s.distinctId, {
        ...opts,
        onlyEvaluateLocally: true,
      })
      const ours = await post(burrow.url, '/flags?v=2', {
        api_key: project.api_token,
        distinct_id: s.distinctId,
        person_properties: s.personProperties,
        groups: s.groups,
        group_properties: s.groupProperties,
      })
      const oursValues = Object.fromEntries(
        Object.values(
          ours.body.flags as Record<string, { key: string; enabled: boolean; variant: string | null }>,
        ).map((f) => [f.key, f.variant ?? f.enabled]),
      )
      expect(Object.keys(oursValues).sort()).toEqual([...active].sort())
      expect(theirsRemote.featureFlags, s.distinctId).toEqual(oursValues)
      // the SDK also answers inactive flags locally: always false
      expect(theirsLocal.featureFlags, s.distinctId).toEqual({ ...oursValues, 'sdk-inactive': false })
      expect(theirsLocal.featureFlagPayloads, s.distinctId).toEqual(theirsRemote.featureFlagPayloads)
      for (const [key, value] of Object.entries(oursValues)) {
        if (value !== false) enabled[key] = (enabled[key] ?? 0) + 1
        const payload = ours.body.flags[key].metadata.payload
        if (payload !== null) expect(theirsRemote.featureFlagPayloads?.[key]).toEqual(parse(payload))
      }
    }
    // every flag is on for some ids and off for others, so the agreement means something
    for (const key of active) {
      expect(enabled[key] ?? 0, key).toBeGreaterThan(0)
      expect(enabled[key] ?? 0, key).toBeLessThan(IDS)
    }
  })

  it('getFeatureFlag and getFeatureFlagPayload agree remotely and locally', async () => {
    for (let i = 0; i < 25; i++) {
      const s = subject(i)
      const opts = {
        personProperties: s.personProperties,
        groups: s.groups,
        groupProperties: s.groupProperties,
        sendFeatureFlagEvents: false,
      }
      for (const key of ['sdk-three-way', 'sdk-override', 'sdk-rollout-70', 'sdk-companies']) {
        const r = await remote.getFeatureFlag(key, s.distinctId, opts)
        const l = await local.getFeatureFlag(key, s.distinctId, { ...opts, onlyEvaluateLocally: true })
        expect(l, `${key} ${s.distinctId}`).toEqual(r)
        const rp = await remote.getFeatureFlagPayload(key, s.distinctId, undefined, opts)
        const lp = await local.getFeatureFlagPayload(key, s.distinctId, undefined, {
          ...opts,
          onlyEvaluateLocally: true,
        })
        expect(lp, `${key} payload ${s.distinctId}`).toEqual(rp)
      }
    }
    // an unknown flag is undefined remotely and locally
    expect(await remote.getFeatureFlag('sdk-missing', 'x')).toBeUndefined()
    expect(await local.getFeatureFlag('sdk-missing', 'x', { onlyEvaluateLocally: true })).toBeUndefined()
  })
})

function parse(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

import { randomUUID } from 'node:crypto'
import { PostHog } from 'posthog-node'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject } from '../../harness/index.ts'
import { insertDistinctIds, insertEvents, insertPersons } from '../hogql/fixtures.ts'
import { ago } from '../cohorts/helpers.ts'
import { flagInput, post, startFlagsBurrow, stopFlagsBurrows } from './helpers.ts'

// Flags that target cohorts, evaluated by posthog-node locally (the cohort definitions
// /flags/definitions sends) and by Burrow's /flags, for 1,000 persons: they must agree. Cohorts of
// person properties (nested and negated ones too) are evaluated locally; a static cohort and a
// behavioural one are not sent, so the SDK asks the server, which answers from the computed
// membership.

const PERSONS = 1000
const COUNTRIES = ['US', 'ca', 'DE', 'us', 'FR']
const PLANS = ['free', 'pro', 'team']

function subject(i: number) {
  return {
    distinctId: `cohort-sdk-${i}`,
    personProperties: {
      email: `user-${i}@${i % 4 === 0 ? 'corp.com' : 'example.com'}`,
      country: COUNTRIES[i % COUNTRIES.length]!,
      plan: PLANS[i % PLANS.length]!,
      age: String((i * 7) % 60),
    },
  }
}

const person = (key: string, operator: string, value: unknown, extra: Record<string, unknown> = {}) => ({
  key,
  operator,
  value,
  type: 'person',
  ...extra,
})
const inCohort = (id: number, operator = 'in') => ({ key: 'id', type: 'cohort', value: id, operator })

let burrow: RunningBurrow
let project: Project
let local: PostHog
let call: ReturnType<typeof api>
const ch = clickhouse()
const ids: Record<string, number> = {}

async function cohort(name: string, body: Record<string, unknown>): Promise<number> {
  const r = await call('POST', `/api/projects/${project.id}/cohorts/`, { name, ...body })
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  const end = Date.now() + 30_000
  for (;;) {
    const got = await call('GET', `/api/projects/${project.id}/cohorts/${r.body.id}/`)
    if (!got.body.is_calculating) {
      expect(got.body.errors_calculating).toBe(0)
      return r.body.id
    }
    if (Date.now() > end) throw new Error(`cohort ${name} not calculated`)
    await new Promise((res) => setTimeout(res, 100))
  }
}

beforeAll(async () => {
  burrow = await startFlagsBurrow()
  project = await createTestProject('flags cohorts posthog-node')
  call = api(burrow.url, await createTestKey(['*']))
  const rows = Array.from({ length: PERSONS }, (_, i) => ({ ...subject(i), id: randomUUID() }))
  await insertPersons(
    ch,
    rows.map((r) => ({
      team: project.id,
      id: r.id,
      createdAt: ago({ days: 30 }),
      properties: r.personProperties,
      version: 1,
    })),
  )
  await insertDistinctIds(
    ch,
    rows.map((r) => ({ team: project.id, distinctId: r.distinctId, personId: r.id, version: 1 })),
  )
  // every third person viewed a page this week
  await insertEvents(
    ch,
    rows
      .filter((_, i) => i % 3 === 0)
      .map((r) => ({
        team: project.id,
        uuid: randomUUID(),
        event: '$pageview',
        distinctId: r.distinctId,
        personId: r.id,
        timestamp: ago({ days: 1 }),
      })),
  )

  ids.corp = await cohort('corp or north america pro', {
    filters: {
      properties: {
        type: 'OR',
        values: [
          { type: 'AND', values: [person('email', 'icontains', '@corp.com')] },
          { type: 'AND', values: [person('plan', 'exact', 'pro'), person('country', 'exact', ['US', 'ca'])] },
        ],
      },
    },
  })
  ids.adults = await cohort('adults outside corp', {
    filters: {
      properties: {
        type: 'AND',
        values: [person('age', 'gte', '18'), { key: 'id', type: 'cohort', value: ids.corp, negation: true }],
      },
    },
  })
  ids.listed = await cohort('listed', {
    is_static: true,
    _create_static_person_ids: rows.filter((_, i) => i % 5 === 0).map((r) => r.id),
  })
  ids.viewers = await cohort('viewers', {
    filters: {
      properties: {
        type: 'OR',
        values: [
          {
            key: '$pageview',
            type: 'behavioral',
            value: 'performed_event',
            event_type: 'events',
            time_value: 7,
            time_interval: 'day',
          },
        ],
      },
    },
  })
  const flags = [
    flagInput('cohort-corp', { groups: [{ properties: [inCohort(ids.corp)], rollout_percentage: 70 }] }),
    flagInput('cohort-not-adults', { groups: [{ properties: [inCohort(ids.adults, 'not_in')] }] }),
    flagInput('cohort-mixed', {
      groups: [
        { properties: [inCohort(ids.adults), person('plan', 'is_not', 'team')], variant: 'b' },
        { properties: [inCohort(ids.corp)], rollout_percentage: 50 },
      ],
      multivariate: {
        variants: [
          { key: 'a', rollout_percentage: 50 },
          { key: 'b', rollout_percentage: 50 },
        ],
      },
    }),
    flagInput('cohort-static', { groups: [{ properties: [inCohort(ids.listed)] }] }),
    flagInput('cohort-behavioural', { groups: [{ properties: [inCohort(ids.viewers)] }] }),
  ]
  for (const f of flags) {
    const r = await call('POST', `/api/projects/${project.id}/feature_flags/`, f)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
  }
  local = new PostHog(project.api_token, {
    host: burrow.url,
    personalApiKey: await createTestKey(['feature_flag:read']),
    flushAt: 1000,
    flushInterval: 0,
    featureFlagsPollingInterval: 600_000,
  })
})

afterAll(async () => {
  await local?.shutdown()
  await stopFlagsBurrows()
})

const LOCAL = ['cohort-corp', 'cohort-not-adults', 'cohort-mixed']
const SERVER = ['cohort-static', 'cohort-behavioural']

describe('cohort flags, posthog-node against Burrow', () => {
  it('sends the person-property cohorts only, as posthog-node reads them', async () => {
    const res = await fetch(
      `${burrow.url}/api/feature_flag/local_evaluation?token=${project.api_token}&send_cohorts`,
      {
        headers: { authorization: `Bearer ${await createTestKey(['feature_flag:read'])}` },
      },
    )
    const body = (await res.json()) as { cohorts: Record<string, unknown> }
    expect(Object.keys(body.cohorts).sort()).toEqual([String(ids.corp), String(ids.adults)].sort())
    expect(body.cohorts[String(ids.adults)]).toMatchObject({
      type: 'AND',
      values: [{ key: 'age' }, { type: 'cohort', negation: true }],
    })
  })

  it(`local evaluation agrees with /flags for ${PERSONS} persons`, async () => {
    const enabled: Record<string, number> = {}
    for (let i = 0; i < PERSONS; i++) {
      const s = subject(i)
      const ours = await post(burrow.url, '/flags?v=2', {
        api_key: project.api_token,
        distinct_id: s.distinctId,
        person_properties: s.personProperties,
      })
      expect(ours.status).toBe(200)
      expect(ours.body.errorsWhileComputingFlags, s.distinctId).toBe(false)
      const values = Object.fromEntries(
        Object.values(
          ours.body.flags as Record<string, { key: string; enabled: boolean; variant: string | null }>,
        ).map((f) => [f.key, f.variant ?? f.enabled]),
      )
      const onlyLocal = await local.getAllFlags(s.distinctId, {
        personProperties: s.personProperties,
        onlyEvaluateLocally: true,
      })
      for (const key of LOCAL) expect(onlyLocal[key], `${key} ${s.distinctId}`).toEqual(values[key])
      // what needs the computed membership is not decided locally
      for (const key of SERVER) expect(onlyLocal[key], `${key} ${s.distinctId}`).toBeUndefined()
      if (i % 10 === 0) {
        // with the fallback, the SDK asks /flags for those and answers the same
        const all = await local.getAllFlags(s.distinctId, { personProperties: s.personProperties })
        expect(all, s.distinctId).toEqual(values)
      }
      for (const [key, value] of Object.entries(values))
        if (value !== false) enabled[key] = (enabled[key] ?? 0) + 1
    }
    // every flag is on for some persons and off for others, so the agreement means something
    for (const key of [...LOCAL, ...SERVER]) {
      expect(enabled[key] ?? 0, key).toBeGreaterThan(0)
      expect(enabled[key] ?? 0, key).toBeLessThan(PERSONS)
    }
    // the computed memberships: every fifth person is listed, every third viewed a page
    expect(enabled['cohort-static']).toBe(PERSONS / 5)
    expect(enabled['cohort-behavioural']).toBe(Math.ceil(PERSONS / 3))
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { AccountStore } from '../../../src/accounts/store.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, createTestKey, createTestProject, nats } from '../../harness/index.ts'
import { DECIDE_REMOTE_CONFIG, flagInput, post, startFlagsBurrow, stopFlagsBurrows } from './helpers.ts'

let burrow: RunningBurrow
let first: Project
let sibling: Project
let foreign: Project

beforeAll(async () => {
  burrow = await startFlagsBurrow({ FLAGS_QUOTA_PER_MINUTE: '3' })
  const call = api(burrow.url, await createTestKey(['feature_flag:write']))
  first = await createTestProject('quota a')
  sibling = await createTestProject('quota b (same organization)')
  const store = await AccountStore.open(await nats())
  const org = await store.createOrganization('quota other org')
  foreign = await store.createProject({ name: 'quota c', organization_id: org.id })
  const body = flagInput('quota-flag', {
    groups: [{ properties: [], rollout_percentage: 100 }],
    payloads: { true: 'p' },
  })
  for (const p of [first, sibling]) {
    expect((await call('POST', `/api/projects/${p.id}/feature_flags/`, body)).status).toBe(201)
  }
})
afterAll(stopFlagsBurrows)

describe('feature flag quota per organization', () => {
  it('answers quotaLimited with empty flags once the organization used its requests', async () => {
    const ask = (p: Project, path = '/decide?v=3') =>
      post(burrow.url, path, { api_key: p.api_token, distinct_id: 'quota-user' })
    // three requests of the organization pass, whichever of its projects they name
    expect((await ask(first)).body.featureFlags).toEqual({ 'quota-flag': true })
    expect((await ask(sibling)).body.featureFlags).toEqual({ 'quota-flag': true })
    expect((await ask(first, '/flags?v=2')).body.flags['quota-flag'].enabled).toBe(true)

    const limited = await ask(first)
    expect(limited.status).toBe(200)
    expect(limited.body).toEqual({
      ...DECIDE_REMOTE_CONFIG,
      config: { enable_collect_everything: true },
      toolbarParams: {},
      isAuthenticated: false,
      supportedCompression: ['gzip', 'lz64'],
      errorsWhileComputingFlags: false,
      featureFlags: {},
      featureFlagPayloads: {},
      quotaLimited: ['feature_flags'],
    })
    const v2 = await ask(sibling, '/flags?v=2')
    expect(v2.body).toMatchObject({ flags: {}, quotaLimited: ['feature_flags'] })
    const plain = await ask(first, '/flags')
    expect(plain.body).toMatchObject({
      featureFlags: {},
      featureFlagPayloads: {},
      quotaLimited: ['feature_flags'],
    })

    // another organization has its own quota; it has no flags, and no quotaLimited key
    const other = await ask(foreign)
    expect(other.body.featureFlags).toEqual({})
    expect(other.body).not.toHaveProperty('quotaLimited')
  })
})

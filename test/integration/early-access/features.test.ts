import { beforeAll, describe, expect, it } from 'vitest'
import { createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'
import { post } from '../flags/helpers.ts'

// Early access features (PostHog's EarlyAccessFeatureViewSet and /api/early_access_features/) and
// the feature flag each one drives through `filters.feature_enrollment`.

let env: Env
const features = (p = env.project.id) => `/api/projects/${p}/early_access_feature/`

beforeAll(async () => {
  env = await managementEnv()
})

const flagOf = async (project: number, id: number) =>
  (await env.call('GET', `/api/projects/${project}/feature_flags/${id}/`)).body

describe('early access features', () => {
  it('creates a feature with its own flag, rolled out to nobody and marked for enrollment when active', async () => {
    const r = await env.call('POST', features(), {
      name: 'New Dashboard!',
      description: 'Charts, faster',
      stage: 'beta',
      documentation_url: 'https://docs.example.com/dash',
    })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'New Dashboard!',
      description: 'Charts, faster',
      stage: 'beta',
      documentation_url: 'https://docs.example.com/dash',
      payload: {},
      created_by: { id: 1 },
      assignee: { type: 'user', id: 1 },
      feature_flag: { key: 'new-dashboard', name: 'Feature Flag for Early Access Feature New Dashboard!' },
    })
    const flag = await flagOf(env.project.id, r.body.feature_flag.id)
    expect(flag.filters).toMatchObject({
      groups: [{ properties: [], rollout_percentage: 0, variant: null }],
      feature_enrollment: true,
    })
    // a person who opted in gets it, others do not; one who opted out does not either
    const ask = (props: Record<string, unknown>) =>
      post(env.burrow.url, '/flags/?v=2', {
        token: env.project.api_token,
        distinct_id: 'p1',
        person_properties: props,
      })
    const enrolled = await ask({ '$feature_enrollment/new-dashboard': true })
    expect(enrolled.body.flags['new-dashboard']).toMatchObject({
      enabled: true,
      reason: { code: 'super_condition_value', description: 'Super condition value' },
    })
    expect(
      (await ask({ '$feature_enrollment/new-dashboard': 'true' })).body.flags['new-dashboard'].enabled,
    ).toBe(true)
    expect(
      (await ask({ '$feature_enrollment/new-dashboard': false })).body.flags['new-dashboard'].enabled,
    ).toBe(false)
    expect((await ask({})).body.flags['new-dashboard']).toMatchObject({
      enabled: false,
      reason: { code: 'out_of_rollout_bound' },
    })
  })

  it('links an existing flag, refusing a flag already linked, a group flag and a multivariate one', async () => {
    const mk = async (key: string, filters: Record<string, unknown>) =>
      (await env.call('POST', `/api/projects/${env.project.id}/feature_flags/`, { key, filters })).body
    const plain = await mk('linkable', { groups: [{ properties: [], rollout_percentage: 20 }] })
    const r = await env.call('POST', features(), {
      name: 'Linked',
      stage: 'alpha',
      feature_flag_id: plain.id,
    })
    expect(r.status).toBe(201)
    expect(r.body.feature_flag.key).toBe('linkable')
    const after = await flagOf(env.project.id, plain.id)
    expect(after.filters).toMatchObject({ feature_enrollment: true, groups: [{ rollout_percentage: 20 }] })
    const again = await env.call('POST', features(), {
      name: 'Again',
      stage: 'beta',
      feature_flag_id: plain.id,
    })
    expect(again.status).toBe(400)
    expect(again.body.detail).toBe('Linked feature flag linkable already has a feature attached to it.')
    const multi = await mk('multi', {
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: { variants: [{ key: 'a', rollout_percentage: 100 }] },
    })
    const m = await env.call('POST', features(), { name: 'Multi', stage: 'beta', feature_flag_id: multi.id })
    expect(m.body.detail).toBe('Multivariate feature flags are not supported for Early Access Features.')
    const missing = await env.call('POST', features(), {
      name: 'Missing',
      stage: 'beta',
      feature_flag_id: 999999,
    })
    expect(missing.body.detail).toBe('Feature Flag with this ID does not exist')
  })

  it('moves the enrollment marker with the stage, rolls out to all at GA, and clears it on delete', async () => {
    const r = await env.call('POST', features(), { name: 'Staged', stage: 'concept' })
    const flagId = r.body.feature_flag.id
    expect((await flagOf(env.project.id, flagId)).filters.feature_enrollment).toBeUndefined()
    await env.call('PATCH', `${features()}${r.body.id}/`, { stage: 'alpha' })
    expect((await flagOf(env.project.id, flagId)).filters.feature_enrollment).toBe(true)
    await env.call('PATCH', `${features()}${r.body.id}/`, { stage: 'draft' })
    expect((await flagOf(env.project.id, flagId)).filters.feature_enrollment).toBeNull()
    await env.call('PATCH', `${features()}${r.body.id}/`, { stage: 'beta' })
    const ga = await env.call('PATCH', `${features()}${r.body.id}/`, {
      stage: 'general-availability',
      rollout_to_all: true,
      payload: { banner: 'new' },
    })
    expect(ga.body).toMatchObject({ stage: 'general-availability', payload: { banner: 'new' } })
    expect((await flagOf(env.project.id, flagId)).filters).toMatchObject({
      feature_enrollment: null,
      groups: [{ properties: [], rollout_percentage: 100 }],
    })
    await env.call('PATCH', `${features()}${r.body.id}/`, { stage: 'beta' })
    expect((await env.call('DELETE', `${features()}${r.body.id}/`)).status).toBe(204)
    const flag = await flagOf(env.project.id, flagId)
    expect(flag.deleted).toBe(false)
    expect(flag.filters.feature_enrollment).toBeNull()
    expect((await env.call('GET', `${features()}${r.body.id}/`)).status).toBe(404)
  })

  it('lists beta features to posthog-js by default and other stages on request', async () => {
    const project = await createTestProject('eaf public')
    for (const [name, stage] of [
      ['Beta one', 'beta'],
      ['Alpha one', 'alpha'],
      ['Draft one', 'draft'],
    ]) {
      expect(
        (await env.call('POST', features(project.id), { name, stage, payload: { n: name } })).status,
      ).toBe(201)
    }
    const r = await fetch(`${env.burrow.url}/api/early_access_features/?token=${project.api_token}`)
    expect(r.status).toBe(200)
    const body = (await r.json()) as { earlyAccessFeatures: Record<string, unknown>[] }
    expect(body.earlyAccessFeatures).toEqual([
      {
        id: expect.any(String),
        name: 'Beta one',
        description: '',
        stage: 'beta',
        documentationUrl: '',
        flagKey: 'beta-one',
        payload: { n: 'Beta one' },
        // the creator is the assignee by default; only a display name is public
        assignee: { type: 'user', name: 'Admin' },
      },
    ])
    const two = await fetch(
      `${env.burrow.url}/api/early_access_features/?token=${project.api_token}&stage=alpha&stage=draft`,
    )
    const names = ((await two.json()) as { earlyAccessFeatures: { name: string }[] }).earlyAccessFeatures.map(
      (f) => f.name,
    )
    expect(names.sort()).toEqual(['Alpha one', 'Draft one'])
    const missing = await fetch(`${env.burrow.url}/api/early_access_features/`)
    expect(missing.status).toBe(401)
    expect(await missing.json()).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' })
    const unknown = await fetch(`${env.burrow.url}/api/early_access_features/?token=phc_nope`)
    expect(unknown.status).toBe(401)
    expect(await unknown.json()).toMatchObject({ code: 'invalid_api_key' })
  })

  it('validates fields and scopes like PostHog', async () => {
    expect((await env.call('POST', features(), { name: 'x', stage: 'someday' })).status).toBe(400)
    const url = await env.call('POST', features(), {
      name: 'x',
      stage: 'beta',
      documentation_url: 'not a url',
    })
    expect(url.status).toBe(400)
    expect(url.body.attr).toBe('documentation_url')
    const role = await env.call('POST', features(), {
      name: 'x',
      stage: 'beta',
      assignee: { type: 'role', id: 'r' },
    })
    expect(role.body).toMatchObject({
      attr: 'assignee',
      detail: 'Assignee role does not belong to this organization.',
    })
    // creating a feature creates a flag, which takes feature_flag:write as well
    const eafOnly = await env.as(['early_access_feature:write'])
    expect((await eafOnly('POST', features(), { name: 'No flag rights', stage: 'beta' })).status).toBe(403)
    expect((await eafOnly('GET', features())).status).toBe(200)
    const reader = await env.as(['early_access_feature:read'])
    expect((await reader('POST', features(), { name: 'no', stage: 'beta' })).status).toBe(403)
    const elsewhere = await env.as(['early_access_feature:read'], [env.other.id])
    expect((await elsewhere('GET', features())).status).toBe(404)
  })
})

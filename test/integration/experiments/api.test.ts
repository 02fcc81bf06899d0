import { beforeAll, describe, expect, it } from 'vitest'
import { type Env, managementEnv } from '../../harness/management.ts'

// The experiments API (PostHog's EnterpriseExperimentsViewSet and ExperimentSerializer): the flag an
// experiment creates or reuses, launch and end, archive and delete, and PostHog's guards.

let env: Env
const experiments = (p = env.project.id) => `/api/projects/${p}/experiments/`
const flagOf = async (id: number) =>
  (await env.call('GET', `/api/projects/${env.project.id}/feature_flags/${id}/`)).body

beforeAll(async () => {
  env = await managementEnv()
})

describe('experiments API', () => {
  it('creates a draft with a control/test flag, inactive until launch; launch and end set the dates', async () => {
    const r = await env.call('POST', experiments(), {
      name: 'Checkout button',
      feature_flag_key: 'checkout-button',
    })
    expect(r.status, r.text).toBe(201)
    expect(r.body).toMatchObject({
      id: expect.any(Number),
      name: 'Checkout button',
      feature_flag_key: 'checkout-button',
      start_date: null,
      end_date: null,
      archived: false,
      status: 'draft',
      metrics: [],
      created_by: { id: 1 },
      feature_flag: {
        key: 'checkout-button',
        name: 'Feature Flag for Experiment Checkout button',
        active: false,
      },
    })
    const flag = await flagOf(r.body.feature_flag.id)
    expect(flag.filters).toMatchObject({
      groups: [{ properties: [], rollout_percentage: 100 }],
      multivariate: {
        variants: [
          { key: 'control', name: 'Control Group', rollout_percentage: 50 },
          { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
        ],
      },
    })
    const launched = await env.call('POST', `${experiments()}${r.body.id}/launch/`)
    expect(launched.status, launched.text).toBe(200)
    expect(launched.body.status).toBe('running')
    expect(Date.parse(launched.body.start_date)).toBeGreaterThan(Date.now() - 60_000)
    expect((await flagOf(r.body.feature_flag.id)).active).toBe(true)
    const again = await env.call('POST', `${experiments()}${r.body.id}/launch/`)
    expect(again.status).toBe(400)
    const ended = await env.call('POST', `${experiments()}${r.body.id}/end/`)
    expect(ended.body.status).toBe('complete')
    expect(Date.parse(ended.body.end_date)).toBeGreaterThanOrEqual(Date.parse(launched.body.start_date))
  })

  it('creates the variants and rollout asked for, and refuses variants without control', async () => {
    const variants = [
      { key: 'control', rollout_percentage: 34 },
      { key: 'red', rollout_percentage: 33 },
      { key: 'blue', rollout_percentage: 33 },
    ]
    const r = await env.call('POST', experiments(), {
      name: 'Colours',
      feature_flag_key: 'colours',
      parameters: { feature_flag_variants: variants, rollout_percentage: 40, minimum_detectable_effect: 10 },
    })
    expect(r.status, r.text).toBe(201)
    const flag = await flagOf(r.body.feature_flag.id)
    expect(flag.filters.groups).toEqual([{ properties: [], rollout_percentage: 40 }])
    expect(flag.filters.multivariate.variants.map((v: { key: string }) => v.key)).toEqual([
      'control',
      'red',
      'blue',
    ])
    const bad = await env.call('POST', experiments(), {
      name: 'No control',
      feature_flag_key: 'no-control',
      parameters: {
        feature_flag_variants: [
          { key: 'a', rollout_percentage: 50 },
          { key: 'b', rollout_percentage: 50 },
        ],
      },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.detail).toBe('Feature flag variants must contain a control variant')
  })

  it('reuses an existing multivariate flag, and refuses one that is not multivariate or lacks control first', async () => {
    const mk = async (key: string, variants?: { key: string; rollout_percentage: number }[]) =>
      (
        await env.call('POST', `/api/projects/${env.project.id}/feature_flags/`, {
          key,
          filters: {
            groups: [{ properties: [], rollout_percentage: 100 }],
            ...(variants ? { multivariate: { variants } } : {}),
          },
        })
      ).body
    const existing = await mk('existing-ab', [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 50 },
    ])
    const r = await env.call('POST', experiments(), { name: 'From a flag', feature_flag_key: 'existing-ab' })
    expect(r.status, r.text).toBe(201)
    expect(r.body.feature_flag.id).toBe(existing.id)
    await mk('boolean-flag')
    const plain = await env.call('POST', experiments(), { name: 'Boolean', feature_flag_key: 'boolean-flag' })
    expect(plain.status).toBe(400)
    expect(plain.body.detail).toBe('Feature flag is not eligible for experiments.')
    await mk('control-second', [
      { key: 'test', rollout_percentage: 50 },
      { key: 'control', rollout_percentage: 50 },
    ])
    const second = await env.call('POST', experiments(), {
      name: 'Second',
      feature_flag_key: 'control-second',
    })
    expect(second.body.detail).toBe('Feature flag must have control as the first variant.')
  })

  it("changes a draft's variants on its flag, and refuses new variants once it runs", async () => {
    const r = await env.call('POST', experiments(), { name: 'Variants', feature_flag_key: 'variants-change' })
    const three = [
      { key: 'control', rollout_percentage: 50 },
      { key: 'test', rollout_percentage: 25 },
      { key: 'test-2', rollout_percentage: 25 },
    ]
    const draft = await env.call('PATCH', `${experiments()}${r.body.id}/`, {
      parameters: { feature_flag_variants: three },
    })
    expect(draft.status, draft.text).toBe(200)
    expect(
      (await flagOf(r.body.feature_flag.id)).filters.multivariate.variants.map((v: { key: string }) => v.key),
    ).toEqual(['control', 'test', 'test-2'])
    const start = await env.call('PATCH', `${experiments()}${r.body.id}/`, {
      start_date: '2024-01-01T00:00:00Z',
    })
    expect(start.body.status).toBe('running')
    expect((await flagOf(r.body.feature_flag.id)).active).toBe(true)
    const refused = await env.call('PATCH', `${experiments()}${r.body.id}/`, {
      parameters: { feature_flag_variants: [three[0], { key: 'other', rollout_percentage: 50 }] },
    })
    expect(refused.status).toBe(400)
    expect(refused.body.detail).toBe("Can't update feature_flag_variants on Experiment")
    // the same keys (a new split) are accepted, as PostHog accepts them
    const same = await env.call('PATCH', `${experiments()}${r.body.id}/`, {
      parameters: { feature_flag_variants: three, minimum_detectable_effect: 5 },
    })
    expect(same.status, same.text).toBe(200)
    const key = await env.call('PATCH', `${experiments()}${r.body.id}/`, { feature_flag_key: 'another-key' })
    expect(key.body.detail).toBe("Can't update keys: get_feature_flag_key on Experiment")
    const dates = await env.call('PATCH', `${experiments()}${r.body.id}/`, {
      end_date: '2023-12-31T00:00:00Z',
    })
    expect(dates.body.detail).toBe('End date must be after start date')
  })

  it('stores metrics as ExperimentMetric and refuses a malformed one, naming the field', async () => {
    const metric = {
      kind: 'ExperimentMetric',
      metric_type: 'mean',
      source: { kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' },
    }
    const r = await env.call('POST', experiments(), {
      name: 'Revenue',
      feature_flag_key: 'revenue',
      metrics: [metric],
      metrics_secondary: [{ metric_type: 'funnel', series: [{ kind: 'EventsNode', event: 'signup' }] }],
      exposure_criteria: { multiple_variant_handling: 'first_seen' },
    })
    expect(r.status, r.text).toBe(201)
    expect(r.body.metrics).toEqual([metric])
    expect(r.body.exposure_criteria).toEqual({ multiple_variant_handling: 'first_seen' })
    const bad = await env.call('POST', experiments(), {
      name: 'Bad',
      feature_flag_key: 'bad-metric',
      metrics: [{ metric_type: 'mean', source: { event: 'purchase', math: 'sum' } }],
    })
    expect(bad.status).toBe(400)
    expect(bad.body.type).toBe('validation_error')
    expect(JSON.stringify(bad.body)).toContain('math_property')
  })

  it('archives out of the default list, deletes with a PATCH (and its flag), refuses DELETE', async () => {
    const r = await env.call('POST', experiments(), { name: 'Old', feature_flag_key: 'old-experiment' })
    await env.call('PATCH', `${experiments()}${r.body.id}/`, { archived: true })
    const ids = async (q = '') =>
      (await env.call('GET', `${experiments()}${q}`)).body.results.map((e: { id: number }) => e.id)
    expect(await ids()).not.toContain(r.body.id)
    expect(await ids('?archived=true')).toContain(r.body.id)
    expect((await env.call('DELETE', `${experiments()}${r.body.id}/`)).status).toBe(405)
    const del = await env.call('PATCH', `${experiments()}${r.body.id}/`, { deleted: true })
    expect(del.status).toBe(200)
    expect((await env.call('GET', `${experiments()}${r.body.id}/`)).status).toBe(404)
    expect((await flagOf(r.body.feature_flag.id)).deleted).toBe(true)
  })

  it("keeps one project's experiments from another project and from keys without the scope", async () => {
    const r = await env.call('POST', experiments(), { name: 'Mine', feature_flag_key: 'mine' })
    expect((await env.call('GET', `${experiments(env.other.id)}${r.body.id}/`)).status).toBe(404)
    const readOnly = await env.as(['experiment:read'])
    expect((await readOnly('GET', `${experiments()}${r.body.id}/`)).status).toBe(200)
    expect((await readOnly('POST', experiments(), { name: 'x', feature_flag_key: 'x' })).status).toBe(403)
    // an experiment key without feature_flag:write cannot create a flag
    const noFlags = await env.as(['experiment:write'])
    expect((await noFlags('POST', experiments(), { name: 'y', feature_flag_key: 'y' })).status).toBe(403)
  })
})

import { runInNewContext } from 'node:vm'
import { beforeAll, describe, expect, it } from 'vitest'
import { AccountStore } from '../../../src/accounts/store.ts'
import { type Env, managementEnv } from '../../harness/management.ts'
import { createTestProject, nats } from '../../harness/index.ts'
import { DECIDE_REMOTE_CONFIG, post } from '../flags/helpers.ts'
import { until } from '../sdk/helpers.ts'

// /array/<token>/config and config.js as posthog-js loads them, built from the project settings
// changed through PATCH /api/projects/{id}/, and the same settings in /decide and /flags.

let env: Env

beforeAll(async () => {
  env = await managementEnv()
})

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${env.burrow.url}${path}`, { headers })

// PostHog's document for a new team (posthog/models/test/__snapshots__/test_remote_config.ambr),
// as its hypercache server sends it: no token, recording off with the reason.
const FRESH = {
  supportedCompression: ['gzip', 'gzip-js'],
  hasFeatureFlags: false,
  // the rest is what /decide adds for such a project (flags/helpers.ts)
  ...DECIDE_REMOTE_CONFIG,
}

describe('GET /array/<token>/config', () => {
  it("answers a new project's document with cache and CORS headers for any origin", async () => {
    const r = await get(`/array/${env.project.api_token}/config`, { origin: 'https://shop.example.com' })
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('application/json')
    expect(r.headers.get('cache-control')).toBe('public, max-age=300')
    expect(r.headers.get('vary')).toContain('Origin')
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    expect(r.headers.get('access-control-allow-credentials')).toBeNull()
    expect(await r.json()).toEqual(FRESH)
  })

  it('answers config.js that registers the same document under the token', async () => {
    const r = await get(`/array/${env.project.api_token}/config.js`)
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('application/javascript')
    expect(r.headers.get('cache-control')).toBe('public, max-age=300')
    expect(r.headers.get('access-control-allow-origin')).toBe('*')
    const window: { _POSTHOG_REMOTE_CONFIG?: Record<string, { config: unknown; siteApps: unknown }> } = {
      _POSTHOG_REMOTE_CONFIG: { other: { config: {}, siteApps: [] } },
    }
    runInNewContext(await r.text(), { window })
    expect(window._POSTHOG_REMOTE_CONFIG![env.project.api_token]).toEqual({ config: FRESH, siteApps: [] })
    // what another project registered stays
    expect(window._POSTHOG_REMOTE_CONFIG!.other).toEqual({ config: {}, siteApps: [] })
  })

  it('answers HEAD with the headers only', async () => {
    const r = await fetch(`${env.burrow.url}/array/${env.project.api_token}/config`, { method: 'HEAD' })
    expect(r.status).toBe(200)
    expect(r.headers.get('cache-control')).toBe('public, max-age=300')
    expect(await r.text()).toBe('')
  })

  it('refuses a malformed token (400) and does not know an unknown one (404)', async () => {
    const bad = await get('/array/not%20a%20token/config')
    expect(bad.status).toBe(400)
    expect((await bad.json()).type).toBe('validation_error')
    const unknown = await get('/array/phc_doesnotexist/config.js')
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toMatchObject({ type: 'invalid_request', code: 'not_found' })
  })

  it('parses a project document written before settings existed, with PostHog defaults', async () => {
    const p = await createTestProject('old document')
    const store = await AccountStore.open(await nats())
    const { settings: _s, ...old } = p
    await store.kv.put(`project.${p.id}`, new TextEncoder().encode(JSON.stringify(old)))
    const r = await env.call('GET', `/api/projects/${p.id}/`)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      id: p.id,
      autocapture_opt_out: null,
      capture_performance_opt_in: true,
      capture_console_log_opt_in: true,
      session_recording_opt_in: false,
      session_recording_sample_rate: null,
      recording_domains: null,
      surveys_opt_in: null,
      heatmaps_opt_in: null,
    })
    expect((await (await get(`/array/${p.api_token}/config`)).json()).sessionRecording).toBe(false)
  })
})

describe('PATCH /api/projects/{id}/ settings', () => {
  it('changes the settings, and the remote config, /decide and /flags?config=true follow', async () => {
    const project = await createTestProject('recording on')
    const patch = await env.call('PATCH', `/api/projects/${project.id}/`, {
      session_recording_opt_in: true,
      session_recording_sample_rate: 0.5,
      session_recording_minimum_duration_milliseconds: 2000,
      session_recording_linked_flag: { id: 7, key: 'record-me', variant: 'test' },
      session_recording_masking_config: { maskAllInputs: true },
      recording_domains: ['https://*.example.com', null, ''],
      heatmaps_opt_in: true,
      autocapture_exceptions_opt_in: true,
      capture_dead_clicks: true,
    })
    expect(patch.status).toBe(200)
    expect(patch.body).toMatchObject({
      id: project.id,
      session_recording_opt_in: true,
      session_recording_sample_rate: '0.50',
      session_recording_minimum_duration_milliseconds: 2000,
      session_recording_linked_flag: { id: 7, key: 'record-me', variant: 'test' },
      recording_domains: ['https://*.example.com'],
      heatmaps_opt_in: true,
    })
    const url = `/array/${project.api_token}/config`
    const allowed = await until(
      async () => (await get(url, { origin: 'https://app.example.com' })).json(),
      (c) => c.sessionRecording !== false,
    )
    // _build_session_recording_config: sample rate normalised, variant flag as an object, domains gone
    expect(allowed).toMatchObject({
      autocaptureExceptions: true,
      errorTracking: { autocaptureExceptions: true, suppressionRules: [] },
      heatmaps: true,
      captureDeadClicks: true,
      sessionRecording: {
        endpoint: '/s/',
        consoleLogRecordingEnabled: true,
        recorderVersion: 'v2',
        minimumDurationMilliseconds: 2000,
        networkPayloadCapture: null,
        masking: { maskAllInputs: true },
        urlBlocklist: [],
        scriptConfig: { script: 'posthog-recorder' },
        recordCanvas: false,
        canvasFps: null,
        canvasQuality: null,
        version: 1,
        sampleRate: '0.5',
        linkedFlag: { flag: 'record-me', variant: 'test' },
        urlTriggers: [],
        eventTriggers: [],
        triggerMatchType: null,
      },
    })
    expect(allowed.sessionRecording.domains).toBeUndefined()
    expect(allowed.sessionRecordingDisabledReason).toBeUndefined()
    // a page on a domain off the list gets no recording, and the reason
    const denied = await (await get(url, { origin: 'https://example.org' })).json()
    expect(denied.sessionRecording).toBe(false)
    expect(denied.sessionRecordingDisabledReason).toBe('domain_not_allowed')
    const referer = await (await get(`${url}.js`, { referer: 'https://www.shop.example.com/cart' })).text()
    expect(referer).toContain('"endpoint":"/s/"')

    const body = { api_key: project.api_token, distinct_id: 'someone' }
    const headers = { origin: 'https://app.example.com' }
    const decide = await post(env.burrow.url, '/decide/?v=3', body, { headers })
    expect(decide.body).toMatchObject({
      sessionRecording: allowed.sessionRecording,
      heatmaps: true,
      autocapture_opt_out: false,
      surveys: false,
      featureFlags: {},
      // the spec's values of the flag evaluation response stay
      supportedCompression: ['gzip', 'lz64'],
      config: { enable_collect_everything: true },
    })
    expect(decide.body.hasFeatureFlags).toBeUndefined()
    const flags = await post(env.burrow.url, '/flags/?v=2&config=true', body, { headers })
    expect(flags.body).toMatchObject({
      sessionRecording: allowed.sessionRecording,
      heatmaps: true,
      flags: {},
    })
    const noConfig = await post(env.burrow.url, '/flags/?v=2', body, { headers })
    expect(noConfig.body.sessionRecording).toBeUndefined()
  })

  it('answers the same through /api/environments/{id}/ and keeps fields it was not given', async () => {
    const project = await createTestProject('environments')
    const a = await env.call('PATCH', `/api/environments/${project.id}/`, { autocapture_opt_out: true })
    expect(a.status).toBe(200)
    const b = await env.call('PATCH', `/api/projects/${project.id}/`, {
      surveys_opt_in: true,
      name: 'renamed',
    })
    expect(b.body).toMatchObject({ autocapture_opt_out: true, surveys_opt_in: true, name: 'renamed' })
    const got = await env.call('GET', `/api/environments/${project.id}/`)
    expect(got.body).toMatchObject({ autocapture_opt_out: true, surveys_opt_in: true, name: 'renamed' })
    const config = await until(
      async () => (await get(`/array/${project.api_token}/config`)).json(),
      (c) => c.autocapture_opt_out === true,
    )
    expect(config.autocapture_opt_out).toBe(true)
    // surveys stay off while the project has none
    expect(config.surveys).toBe(false)
  })

  it.each([
    [{ session_recording_sample_rate: 0.555 }, 'Ensure that there are no more than 2 decimal places.'],
    [{ session_recording_sample_rate: 1.5 }, 'Ensure this value is less than or equal to 1.'],
    [
      { session_recording_linked_flag: { id: 1 } },
      "Must provide a dictionary with only 'id' and 'key' keys. _or_ only 'id', 'key', and 'variant' keys.",
    ],
    [
      { session_recording_network_payload_capture_config: { recordEverything: true } },
      "Must provide a dictionary with only 'recordHeaders' and/or 'recordBody' keys.",
    ],
    [{ session_recording_masking_config: { maskAllInputs: 'yes' } }, 'maskAllInputs must be a boolean.'],
    [
      { session_recording_trigger_match_type_config: 'some' },
      "Must provide a valid trigger match type. Only 'all' or 'any' or None are allowed.",
    ],
  ])('refuses %j with PostHog’s message', async (body, message) => {
    const r = await env.call('PATCH', `/api/projects/${env.project.id}/`, body)
    expect(r.status).toBe(400)
    expect(r.body.type).toBe('validation_error')
    expect(r.body.attr).toBe(Object.keys(body)[0])
    expect(r.body.detail).toContain(message)
  })

  it('needs project:write, and hides projects of other organizations', async () => {
    const reader = await env.as(['project:read'])
    const r = await reader('PATCH', `/api/projects/${env.project.id}/`, { heatmaps_opt_in: true })
    expect(r.status).toBe(403)
    expect((await reader('GET', `/api/environments/${env.project.id}/`)).status).toBe(200)
    const limited = await env.as(['project:write'], [env.other.id])
    expect(
      (await limited('PATCH', `/api/projects/${env.project.id}/`, { heatmaps_opt_in: true })).status,
    ).toBe(404)
    expect((await env.call('PATCH', `/api/projects/999999/`, { heatmaps_opt_in: true })).status).toBe(404)
  })

  it('says hasFeatureFlags once the project has an active flag', async () => {
    const project = await createTestProject('with a flag')
    const url = `/array/${project.api_token}/config`
    expect((await (await get(url)).json()).hasFeatureFlags).toBe(false)
    const created = await env.call('POST', `/api/projects/${project.id}/feature_flags/`, {
      key: 'on',
      filters: { groups: [{ properties: [], rollout_percentage: 100 }] },
    })
    expect(created.status).toBe(201)
    const after = await until(
      async () => (await get(url)).json(),
      (c) => c.hasFeatureFlags === true,
    )
    expect(after.hasFeatureFlags).toBe(true)
    await env.call('PATCH', `/api/projects/${project.id}/feature_flags/${created.body.id}/`, {
      active: false,
    })
    const off = await until(
      async () => (await get(url)).json(),
      (c) => c.hasFeatureFlags === false,
    )
    expect(off.hasFeatureFlags).toBe(false)
  })
})

describe('GET /static/… (the SDK scripts posthog-js loads lazily)', () => {
  it('serves the installed posthog-js files, versioned and not, to any origin', async () => {
    const { version } = (await import('posthog-js/package.json', { with: { type: 'json' } })).default
    const v = await get(`/static/${version}/surveys.js`, { 'accept-encoding': 'gzip' })
    expect(v.status).toBe(200)
    expect(v.headers.get('content-type')).toContain('application/javascript')
    expect(v.headers.get('access-control-allow-origin')).toBe('*')
    expect(v.headers.get('cache-control')).toContain('immutable')
    const text = await v.text()
    expect(text.length).toBeGreaterThan(10_000)
    const plain = await get(`/static/posthog-recorder.js?v=${version}`)
    expect(plain.status).toBe(200)
    expect(plain.headers.get('cache-control')).toBe('public, max-age=300')
    // another SDK version falls back to the unversioned path
    expect((await get('/static/0.0.1/surveys.js')).status).toBe(404)
    expect((await get('/static/not-a-file.js')).status).toBe(404)
    expect((await get('/static/..%2Fpackage.json')).status).toBe(404)
  })
})

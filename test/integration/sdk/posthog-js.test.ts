import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { post } from '../flags/helpers.ts'
import { humanTab, launchChromium, untilProjected } from './helpers.ts'
import { type Isolated, isolatedBurrow } from './isolated.ts'

// The contract with posthog-js as users run it: the SDK's own snippet bundle, initialised with
// nothing but `api_host`, in Debian's Chromium, against a project whose settings turn on
// autocapture, session recording and surveys. Every request the SDK makes to Burrow is recorded
// and none may fail.

const require = createRequire(import.meta.url)
const SDK_VERSION = (
  JSON.parse(readFileSync(require.resolve('posthog-js/package.json'), 'utf8')) as { version: string }
).version

interface Seen {
  method: string
  path: string
  status: number
  contentType: string | null
  body: Buffer | null
}

let env: Isolated
let page: Server
let pageUrl: string
let browser: Browser
let tab: Page
let surveyId: string
let featureFlagKey: string
const seen: Seen[] = []
const consoleErrors: string[] = []

beforeAll(async () => {
  env = await isolatedBurrow('posthog-js contract')
  const settings = await env.call('PATCH', `/api/projects/${env.project.id}/`, {
    session_recording_opt_in: true,
    surveys_opt_in: true,
    autocapture_opt_out: false,
  })
  expect(settings.status).toBe(200)
  const survey = await env.call('POST', `/api/projects/${env.project.id}/surveys/`, {
    name: 'How are we doing?',
    type: 'popover',
    questions: [{ type: 'open', question: 'Anything to tell us?' }],
    start_date: '2026-01-01T00:00:00Z',
  })
  expect(survey.status).toBe(201)
  surveyId = survey.body.id
  const feature = await env.call('POST', `/api/projects/${env.project.id}/early_access_feature/`, {
    name: 'Faster charts',
    stage: 'beta',
  })
  expect(feature.status).toBe(201)
  featureFlagKey = feature.body.feature_flag.key

  const bundle = readFileSync(require.resolve('posthog-js/dist/array.js'))
  const html = `<!doctype html><html><head><title>shop</title>
<script src="/array.js"></script>
<script>posthog.init(${JSON.stringify(env.project.api_token)}, { api_host: ${JSON.stringify(env.burrow.url)} })</script>
</head><body><h1>Shop</h1><button id="buy" class="cta primary">Buy now</button></body></html>`
  page = createServer((req, res) => {
    if (req.url === '/array.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' })
      res.end(bundle)
    } else if (req.url === '/favicon.ico') {
      res.writeHead(204)
      res.end()
    } else {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(html)
    }
  })
  await new Promise<void>((r) => page.listen(0, '127.0.0.1', r))
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`

  browser = await launchChromium()
  tab = await humanTab(browser)
  tab.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text())
  })
  tab.on('pageerror', (e) => consoleErrors.push(String(e)))
  tab.on('requestfailed', (r) => {
    if (r.url().startsWith(env.burrow.url)) {
      const u = new URL(r.url())
      seen.push({ method: r.method(), path: u.pathname, status: 0, contentType: null, body: null })
    }
  })
  tab.on('response', (res) => {
    const r = res.request()
    if (!r.url().startsWith(env.burrow.url)) return
    const u = new URL(r.url())
    seen.push({
      method: r.method(),
      path: u.pathname,
      status: res.status(),
      contentType: r.headers()['content-type'] ?? null,
      body: r.postDataBuffer(),
    })
  })
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await new Promise<void>((r) => page.close(() => r()))
  // every request of the SDK, for the test log
  console.log(seen.map((s) => `${s.method} ${s.path} ${s.status}`).join('\n'))
})

const waitIn = untilProjected
const requests = (method: string, path: RegExp) =>
  seen.filter((s) => s.method === method && path.test(s.path))
const hogql = async (query: string) =>
  (
    await env.call('POST', `/api/projects/${env.project.id}/query/`, {
      query: { kind: 'HogQLQuery', query },
      refresh: 'force_blocking',
    })
  ).body.results as unknown[][]

describe('posthog-js with only api_host', () => {
  it('loads its remote config from config.js and turns on what the project settings say', async () => {
    await tab.goto(pageUrl)
    const config = await tab.waitForFunction(
      (token) =>
        (window as unknown as { _POSTHOG_REMOTE_CONFIG?: Record<string, { config: unknown }> })
          ._POSTHOG_REMOTE_CONFIG?.[token]?.config,
      env.project.api_token,
      { timeout: 20_000 },
    )
    expect(await config.jsonValue()).toMatchObject({
      autocapture_opt_out: false,
      sessionRecording: { endpoint: '/s/' },
    })
    expect(
      requests('GET', new RegExp(`^/array/${env.project.api_token}/config\\.js$`)).map((r) => r.status),
    ).toEqual([200])
    // config.js worked, so the JSON fallback was never needed
    expect(requests('GET', /\/config$/)).toEqual([])
    // the recorder and the surveys scripts come from Burrow's /static/
    await waitIn(
      () => requests('GET', /^\/static\//).length,
      (n) => n >= 2,
    )
    expect(
      requests('GET', new RegExp(`^/static/${SDK_VERSION}/posthog-recorder\\.js$`)).map((r) => r.status),
    ).toEqual([200])
    expect(requests('GET', new RegExp(`^/static/${SDK_VERSION}/surveys\\.js$`)).map((r) => r.status)).toEqual(
      [200],
    )
    const recording = await tab.evaluate(() =>
      (
        window as unknown as { posthog: { sessionRecordingStarted(): boolean } }
      ).posthog.sessionRecordingStarted(),
    )
    expect(recording).toBe(true)
  })

  it('sends a click as $autocapture with its elements chain, gzip-compressed', async () => {
    await tab.click('#buy')
    const rows = await waitIn(
      () => hogql(`SELECT elements_chain FROM events WHERE event = '$autocapture'`),
      (r) => r.length > 0,
    )
    const chain = String(rows[0]![0])
    expect(chain).toMatch(/^button\.cta\.primary:/)
    expect(chain).toContain('attr__id="buy"')
    expect(chain).toContain('text="Buy now"')
    // every event batch after the config arrived went out as gzip, detected by its magic bytes
    const capture = requests('POST', /^\/(e|i\/v0\/e)\/?$/)
    expect(capture.length).toBeGreaterThan(0)
    for (const c of capture) {
      expect(c.status).toBe(200)
      expect([...c.body!.subarray(0, 2)]).toEqual([0x1f, 0x8b])
    }
    // the SDK followed analytics.endpoint from the config
    expect(capture.some((c) => c.path.startsWith('/i/v0/e'))).toBe(true)
  })

  it('records the session to /s/', async () => {
    await waitIn(
      () => requests('POST', /^\/s\/?$/).length,
      (n) => n > 0,
    )
    expect(requests('POST', /^\/s\/?$/).every((r) => r.status === 200)).toBe(true)
  })

  it('loads surveys and early access features, and enrolment reaches the person and the flag', async () => {
    const surveys = await tab.evaluate(
      () =>
        new Promise<{ id: string }[]>((resolve) =>
          (
            window as unknown as {
              posthog: { getSurveys(cb: (s: { id: string }[]) => void, force: boolean): void }
            }
          ).posthog.getSurveys(resolve, true),
        ),
    )
    expect(surveys.map((s) => s.id)).toContain(surveyId)
    const features = await tab.evaluate(
      () =>
        new Promise<{ flagKey: string; name: string }[]>((resolve) =>
          (
            window as unknown as {
              posthog: {
                getEarlyAccessFeatures(
                  cb: (f: { flagKey: string; name: string }[]) => void,
                  force: boolean,
                ): void
              }
            }
          ).posthog.getEarlyAccessFeatures(resolve, true),
        ),
    )
    expect(features).toEqual([expect.objectContaining({ name: 'Faster charts', flagKey: featureFlagKey })])
    expect(requests('GET', /^\/api\/surveys\/?$/).map((r) => r.status)).toContain(200)
    expect(requests('GET', /^\/api\/early_access_features\/?$/).map((r) => r.status)).toEqual([200])

    // person processing starts with identify; the enrolment's $set then lands on the person
    await tab.evaluate(() =>
      (window as unknown as { posthog: { identify(id: string, p: object): void } }).posthog.identify(
        'user-42',
        { email: 'ada@example.com' },
      ),
    )
    await tab.evaluate(
      (key) =>
        (
          window as unknown as {
            posthog: { updateEarlyAccessFeatureEnrollment(k: string, v: boolean): void }
          }
        ).posthog.updateEarlyAccessFeatureEnrollment(key, true),
      featureFlagKey,
    )
    const person = await waitIn(
      () => env.personOf('user-42'),
      (p) => p[`$feature_enrollment/${featureFlagKey}`] === true,
    )
    expect(person[`$feature_enrollment/${featureFlagKey}`]).toBe(true)
    // the flag then matches from the stored person property alone (flags read persons from a
    // mirror the projector's change feed keeps current just after ClickHouse: docs/flags.md)
    const flags = await waitIn(
      () => post(env.burrow.url, '/flags/?v=2', { token: env.project.api_token, distinct_id: 'user-42' }),
      (r) => r.body.flags[featureFlagKey]?.enabled === true,
    )
    expect(flags.body.flags[featureFlagKey]).toMatchObject({
      enabled: true,
      reason: { code: 'super_condition_value' },
    })
  })

  it('puts identify(id, {email}) on the person', async () => {
    const person = await waitIn(
      () => env.personOf('user-42'),
      (p) => p.email === 'ada@example.com',
    )
    expect(person.email).toBe('ada@example.com')
  })

  it('got no 4xx or 5xx for any request and logged no console error', async () => {
    expect(seen.length).toBeGreaterThan(5)
    expect(
      seen.filter((s) => s.status === 0 || s.status >= 400).map((s) => `${s.method} ${s.path} ${s.status}`),
    ).toEqual([])
    expect(consoleErrors).toEqual([])
  })
})

// The console in a real browser (Debian's Chromium driven by playwright-core): every page is used
// the way a person would, against a real Burrow, NATS and ClickHouse. Expected values are worked by
// hand from the events this file captures. Screenshots go to a temp folder, or to docs/console/
// with CONSOLE_SCREENSHOTS=1 (how the pictures in the docs are made).
import { mkdirSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { DESKTOP_CHROME_UA, launchChromium } from '../../harness/browser.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { dom, postSnapshots, rr } from '../recordings/helpers.ts'
import { at, consolePage, SHOTS } from './helpers.ts'

let burrow: RunningBurrow
let project: Project
let key: string
let call: ReturnType<typeof api>
let browser: Browser
let page: Page

// By hand: $pageview 5 (alice 3, bob 1, carol 1), "signed up" 2 (alice, bob). Funnel $pageview →
// signed up within 14 days: alice and bob convert, carol does not: 3 → 2.
const DATASET = [
  { event: '$pageview', distinct_id: 'alice', timestamp: at(3, '10:00:00') },
  {
    event: 'signed up',
    distinct_id: 'alice',
    timestamp: at(3, '10:05:00'),
    properties: { $set: { email: 'alice@example.com', plan: 'pro' } },
  },
  { event: '$pageview', distinct_id: 'alice', timestamp: at(2, '09:00:00') },
  { event: '$pageview', distinct_id: 'alice', timestamp: at(1, '09:00:00') },
  { event: '$pageview', distinct_id: 'bob', timestamp: at(3, '11:00:00') },
  {
    event: 'signed up',
    distinct_id: 'bob',
    timestamp: at(2, '11:00:00'),
    properties: { $set: { email: 'bob@example.com', plan: 'free' } },
  },
  { event: '$pageview', distinct_id: 'carol', timestamp: at(2, '12:00:00') },
]

async function capture(events: { event: string; distinct_id: string; timestamp?: string }[]) {
  const res = await fetch(`${burrow.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.api_token, batch: events }),
  })
  expect(res.status).toBe(200)
}

async function hogql(query: string) {
  const res = await call('POST', `/api/projects/${project.id}/query/`, {
    query: { kind: 'HogQLQuery', query },
    refresh: 'force_blocking',
  })
  expect(res.status).toBe(200)
  return res.body.results as unknown[][]
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await read()
    if (ok(v) || Date.now() > deadline) return v
    await new Promise((r) => setTimeout(r, 250))
  }
}

/** Polls an assertion for up to 30 s (pages update on their own schedule: streams, queries). */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 200 })

const pageErrors: string[] = []

const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })

/** The number shown in a Live stat card. */
async function statValue(label: string): Promise<number> {
  const text = await page
    .locator('.stat', { has: page.locator('.stat-label', { hasText: new RegExp(`^${label}$`) }) })
    .locator('.stat-value')
    .innerText()
  return Number(text.replace(/,/g, ''))
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('Console demo')
  key = await createTestKey(['*'])
  call = api(burrow.url, key)
  await capture(DATASET)
  // The insights below read ClickHouse: wait until the projectors wrote every row.
  const rows = await until(
    () => hogql('SELECT count() FROM events'),
    (r) => Number(r[0]![0]) === DATASET.length,
  )
  expect(Number(rows[0]![0])).toBe(DATASET.length)
  browser = await launchChromium()
  page = await consolePage(browser, pageErrors)
  // Open on this file's project (the key reaches every project of the shared test organization).
  await page.addInitScript((id) => sessionStorage.setItem('burrow.project_id', String(id)), project.id)
})

afterAll(async () => {
  await browser?.close()
})

describe('the console in Chromium', () => {
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail')
      await shot(`failed-${ctx.task.name.slice(0, 20).replace(/\W+/g, '-')}`)
    // A script error on any page fails the test that caused it.
    expect(pageErrors.splice(0)).toEqual([])
  })

  it('serves the page and its modules with a CSP that allows only its own scripts', async () => {
    const res = await fetch(`${burrow.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/html')
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/)
    const mod = await fetch(`${burrow.url}/console/vendor/preact.js`)
    expect(mod.status).toBe(200)
    expect(mod.headers.get('content-type')).toContain('text/javascript')
    const again = await fetch(`${burrow.url}/console/vendor/preact.js`, {
      headers: { 'if-none-match': mod.headers.get('etag')! },
    })
    expect(again.status).toBe(304)
    expect((await fetch(`${burrow.url}/console/../package.json`)).status).toBe(404)
    expect((await fetch(`${burrow.url}/console/nothing.js`)).status).toBe(404)
    expect((await fetch(`${burrow.url}/static/array.js`)).status).toBe(200)
    // The live endpoints are part of the API description; the page's files are not.
    const paths = Object.keys((await (await fetch(`${burrow.url}/api/schema/`)).json()).paths)
    expect(paths).toContain('/api/projects/{project_id}/live/stats/')
    expect(paths).toContain('/api/environments/{project_id}/live/events/')
    expect(paths.filter((p) => p === '/' || p.startsWith('/console') || p.startsWith('/static'))).toEqual([])
  })

  it('refuses a wrong key and signs in with a personal API key', async () => {
    await page.goto(`${burrow.url}/`)
    await page.getByLabel('Personal API key').fill('phx_not_a_key')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await poll(() => page.getByRole('alert').innerText()).toContain('not valid')
    await shot('sign-in')
    await page.getByLabel('Personal API key').fill(key)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: /^Live/ }).waitFor()
    expect(await page.getByLabel('Project', { exact: true }).inputValue()).toBe(String(project.id))
  })

  it('Live: the counter and the tail move when events are captured, pause holds them', async () => {
    await page.locator('.conn.live').waitFor()
    await poll(() => statValue('Captured')).toBe(DATASET.length)
    await capture([1, 2, 3].map((i) => ({ event: 'console live', distinct_id: `live-${i}` })))
    await poll(() => statValue('Captured')).toBe(DATASET.length + 3)
    const tail = page.getByRole('log', { name: 'Incoming events' })
    await poll(() => tail.getByText('console live').count()).toBe(3)
    // The projectors catch up: nothing waits, and the projected total reaches the captured one.
    await poll(() => statValue('Waiting to be projected')).toBe(0)
    const stats = await call('GET', `/api/projects/${project.id}/live/stats/`)
    expect(stats.body.totals).toEqual({ captured: DATASET.length + 3, projected: DATASET.length + 3 })

    // Filter by distinct id: the listed rows of other ids go, new events of other ids do not come.
    await page.getByLabel('Distinct id').fill('live-2')
    await poll(() => tail.locator('tbody tr').count()).toBe(1)
    await capture([
      { event: 'console filtered', distinct_id: 'live-2' },
      { event: 'console filtered', distinct_id: 'live-9' },
    ])
    await poll(() => tail.locator('tbody tr').count()).toBe(2)
    expect(await tail.locator('tbody tr').first().innerText()).toMatch(/console filtered\tlive-2/)

    // Paused: new events are counted on the button, not listed, until resumed.
    await page.getByRole('button', { name: 'Pause' }).click()
    await capture([{ event: 'console paused', distinct_id: 'live-2' }])
    await page.getByRole('button', { name: 'Resume (1 new)' }).waitFor({ timeout: 15_000 })
    expect(await tail.locator('tbody tr').count()).toBe(2)
    await page.getByRole('button', { name: /Resume/ }).click()
    expect(await tail.locator('tbody tr').count()).toBe(3)
    expect(await tail.locator('tbody tr').first().innerText()).toContain('console paused')
    await page.getByLabel('Distinct id').fill('')
    await poll(() => statValue('Captured')).toBe(DATASET.length + 6)
    await page.waitForTimeout(1500) // one more chart frame, for the picture
    await shot('live')
  })

  it('Explore: runs HogQL with Ctrl-Enter, shows rows and a bar chart, and marks an error where it is', async () => {
    await page.goto(`${burrow.url}/#/explore`)
    const editor = page.getByLabel('HogQL', { exact: true })
    await editor.fill(
      "SELECT event, count() AS c FROM events WHERE event IN ('$pageview', 'signed up') GROUP BY event ORDER BY c DESC",
    )
    await editor.press('Control+Enter')
    const table = page.getByRole('region', { name: /Results, 2 rows/ })
    await table.waitFor({ timeout: 30_000 })
    const rows = await table.locator('tbody tr').allInnerTexts()
    expect(rows.map((r) => r.split('\t'))).toEqual([
      ['$pageview', '5'],
      ['signed up', '2'],
    ])
    await page.getByRole('tab', { name: 'bar' }).click()
    const chart = page.getByRole('img', { name: /Bar chart of c by event/ })
    expect(await chart.locator('rect').count()).toBe(2)
    await shot('explore-bar')

    await editor.fill(
      'SELECT toDate(timestamp) AS day, count() AS events FROM events GROUP BY day ORDER BY day',
    )
    await page.getByRole('button', { name: 'Run' }).click()
    await page.getByRole('tab', { name: 'line' }).click()
    await page
      .getByRole('img', { name: /Line chart of events over day/ })
      .locator('canvas')
      .first()
      .waitFor()
    await shot('explore')

    await editor.fill('SELECT event FROM events WHERE nosuchfunction(event)')
    await editor.press('Control+Enter')
    await poll(() => page.getByRole('alert').innerText()).toMatch(/nosuchfunction/)
    expect((await page.locator('.editor mark.err').allInnerTexts()).join('')).toBe('nosuchfunction(event)')
  })

  it('Insights: a trend, a funnel, retention and lifecycle from the captured events', async () => {
    await page.goto(`${burrow.url}/#/insights/trends`)
    await page.getByLabel('Event A').fill('signed up')
    await page.getByLabel('Date range').selectOption('-14d')
    await page.getByRole('button', { name: 'Show trend' }).click()
    const totals = page.locator('table.plain', { hasText: 'Total' })
    await totals.waitFor({ timeout: 30_000 })
    expect(await totals.locator('tbody tr').innerText()).toBe('signed up\t2')
    await page.locator('.chart canvas').first().waitFor()
    await shot('insights-trends')

    await page.getByRole('link', { name: 'Funnel' }).click()
    await page.getByLabel('Step 2').fill('signed up')
    await page.getByRole('button', { name: 'Show funnel' }).click()
    const steps = page.getByRole('list', { name: 'Funnel steps' }).locator('li')
    await poll(() => steps.count()).toBe(2)
    expect(await steps.nth(0).innerText()).toContain('3 persons')
    expect(await steps.nth(1).innerText()).toContain('2 persons · 66.7% of step 1')
    await shot('insights-funnel')

    await page.getByRole('link', { name: 'Retention' }).click()
    await page.getByRole('button', { name: 'Show retention' }).click()
    await page.locator('table.retention').waitFor({ timeout: 30_000 })
    await shot('insights-retention')

    await page.getByRole('link', { name: 'Lifecycle' }).click()
    await page.getByRole('button', { name: 'Show lifecycle' }).click()
    const lifecycle = page.getByRole('img', { name: /^Lifecycle:/ })
    await lifecycle.waitFor({ timeout: 30_000 })
    // Three persons had their first $pageview in the range: "new" sums to 3.
    expect(await lifecycle.getAttribute('aria-label')).toContain('new 3')
    await shot('insights-lifecycle')
  })

  it('People: finds a person by distinct id and shows their properties and events', async () => {
    await page.goto(`${burrow.url}/#/people`)
    await page.getByLabel('Distinct id, email or any property text').fill('alice')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('link', { name: 'alice@example.com' }).click()
    await page.getByRole('heading', { name: 'alice@example.com' }).waitFor()
    const props = page.locator('section', { has: page.getByRole('heading', { name: 'Properties' }) })
    expect(await props.locator('tr', { hasText: 'plan' }).innerText()).toBe('plan\tpro')
    const timeline = page.getByRole('region', { name: /Event timeline, 4 rows/ })
    await timeline.waitFor({ timeout: 30_000 })
    expect(await timeline.locator('tbody tr').first().innerText()).toContain('$pageview')
    await shot('person')
  })

  it("People: lists a person's session recording with its duration and plays it", async () => {
    // As posthog-js sends it with compress_events (cv "2024-10"): the full snapshot's data and the
    // mutation's lists gzipped into strings, one character per byte. The page must unpack them for
    // the replayer, so the replayed DOM showing the snapshot's text proves it did.
    const packed = (v: unknown) => gzipSync(JSON.stringify(v)).toString('latin1')
    const t0 = Date.now() - 60_000
    const session = `01930000-0000-7000-8000-${String(Date.now()).padStart(12, '0').slice(-12)}`
    const added = { type: 3, textContent: 'added by a mutation', id: 900 }
    const events = [
      rr.meta(t0, 'https://shop.example/cart'),
      { ...rr.full(t0), data: packed(dom(3)), cv: '2024-10' },
      {
        type: 3,
        timestamp: t0 + 1000,
        cv: '2024-10',
        data: {
          source: 0,
          adds: packed([{ parentId: 2, nextId: null, node: added }]),
          removes: packed([]),
          texts: packed([]),
          attributes: packed([]),
        },
      },
      rr.click(t0 + 2000),
      rr.move(t0 + 5000),
    ]
    const sent = await postSnapshots(burrow.url, project.api_token, [
      { session, window: 'w1', distinctId: 'alice', events },
    ])
    expect(sent.status).toBe(200)
    const listed = await until(
      () => call('GET', `/api/projects/${project.id}/session_recordings/`),
      (r) => r.body.results?.some((x: { id: string }) => x.id === session),
    )
    expect(listed.body.results.map((x: { id: string }) => x.id)).toContain(session)

    await page.goto(`${burrow.url}/#/people`)
    await page.getByLabel('Distinct id, email or any property text').fill('alice')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('link', { name: 'alice@example.com' }).click()
    const recordings = page.getByRole('list', { name: 'Session recordings' })
    await recordings.waitFor({ timeout: 30_000 })
    expect(await recordings.getByRole('listitem').count()).toBe(1)
    // first event t0, last t0 + 5 s
    expect(await recordings.getByRole('listitem').innerText()).toContain('0:05')
    await recordings.getByRole('button', { name: /Play recording from .*, 0:05 long/ }).click()
    await page.locator('.rr-player iframe').waitFor({ timeout: 30_000 })
    const replayed = page.frameLocator('.rr-player iframe').locator('body')
    await poll(() => replayed.innerText()).toContain('item 0 of the list')
    await poll(() => replayed.innerText()).toContain('added by a mutation')
    await shot('person-recording')
    // The list is the person's own: bob recorded nothing.
    await page.goto(`${burrow.url}/#/people`)
    await page.getByLabel('Distinct id, email or any property text').fill('bob')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('link', { name: 'bob@example.com' }).click()
    await page.getByText('No session recordings for this person.').waitFor({ timeout: 30_000 })
  })

  it('Flags: creates a flag with a rollout and variants, then switches it off', async () => {
    await page.goto(`${burrow.url}/#/flags/new`)
    await page.getByLabel('Key').fill('console-checkout')
    await page.getByLabel('Description').fill('New checkout')
    await page.getByLabel(/Set 1.*rollout %/).fill('50')
    await page.getByRole('button', { name: 'Add variant' }).click()
    await page.getByRole('button', { name: 'Add variant' }).click()
    await page.getByLabel('Variant 1 key').fill('control')
    await page.locator('#variant-pct-0').fill('50')
    await page.getByLabel('Variant 2 key').fill('test')
    await page.locator('#variant-pct-1').fill('50')
    await page.getByRole('button', { name: 'Create flag' }).click()
    await page.getByRole('heading', { name: 'Flag console-checkout' }).waitFor()
    const list = await call('GET', `/api/projects/${project.id}/feature_flags/?search=console-checkout`)
    const created = list.body.results[0]
    expect(created.active).toBe(true)
    expect(created.filters.groups[0].rollout_percentage).toBe(50)
    expect(created.filters.multivariate.variants.map((v: { key: string }) => v.key)).toEqual([
      'control',
      'test',
    ])

    await page.getByRole('link', { name: '← All flags' }).click()
    const toggle = page.getByRole('switch', { name: 'Enable console-checkout' })
    expect(await toggle.getAttribute('aria-checked')).toBe('true')
    await toggle.click()
    await poll(() => toggle.getAttribute('aria-checked')).toBe('false')
    const after = await call('GET', `/api/projects/${project.id}/feature_flags/${created.id}/`)
    expect(after.body.active).toBe(false)
    await shot('flags')
  })

  it('Projects: creates a project and shows its key and SDK snippets', async () => {
    await page.goto(`${burrow.url}/#/projects`)
    await page.getByLabel('Name').fill('Console created')
    await page.getByRole('button', { name: 'Create project' }).click()
    await page.getByRole('heading', { name: 'Send events to Console created' }).waitFor()
    const listed = await call('GET', '/api/projects/?limit=1000')
    const created = listed.body.results.find((p: { name: string }) => p.name === 'Console created')
    expect(created).toBeDefined()
    expect(await page.getByLabel('Project', { exact: true }).inputValue()).toBe(String(created.id))
    const node = page.getByLabel('posthog-node', { exact: true })
    expect(await node.innerText()).toContain(`new PostHog('${created.api_token}', { host: '${burrow.url}' })`)
    await shot('projects')
  })

  it('a new project: the Live page shows the snippet, and the event it sends arrives in the tail', async () => {
    // The project created above is the current one and has no event yet.
    await page.goto(`${burrow.url}/#/live`)
    await page.getByRole('heading', { name: 'Waiting for the first event' }).waitFor()
    await page.getByRole('tab', { name: 'posthog-js (HTML)' }).click()
    const snippet = await page.getByLabel('posthog-js (HTML)', { exact: true }).innerText()
    // A site of the user's, on another origin, with the snippet pasted into its <head>.
    const site = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><html><head><title>my site</title>${snippet}</head><body>hello</body></html>`)
    })
    await new Promise<void>((r) => site.listen(0, '127.0.0.1', r))
    const visitor = await browser.newPage({ userAgent: DESKTOP_CHROME_UA })
    try {
      await visitor.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`)
      const tail = page.getByRole('log', { name: 'Incoming events' })
      await poll(() => tail.getByText('$pageview').count()).toBeGreaterThan(0)
      await poll(() => page.getByRole('heading', { name: 'Waiting for the first event' }).count()).toBe(0)
      await shot('first-event')
    } finally {
      await visitor.close()
      await new Promise<void>((r) => site.close(() => r()))
    }
  })
})

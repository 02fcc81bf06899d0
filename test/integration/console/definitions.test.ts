// The Cohorts and Actions pages in a real browser (Debian's Chromium driven by playwright-core, as
// console.test.ts), and both picked in an insight. Expected values are worked by hand from the
// events this file captures. Screenshots go to a temp folder, or to docs/console/ with
// CONSOLE_SCREENSHOTS=1.
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { launchChromium } from '../../harness/browser.ts'
import { api, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { at, consolePage, SHOTS } from './helpers.ts'

let burrow: RunningBurrow
let project: Project
let key: string
let call: ReturnType<typeof api>
let browser: Browser
let page: Page

// By hand: alice (plan pro) viewed /pricing twice and /home once; bob (plan free) viewed /pricing
// once; carol (no plan) viewed /home once. Cohort "Pro" = {alice}. Action "Viewed pricing"
// ($pageview, URL contains /pricing) = 3 events. $pageview among "Pro" = 3 events.
const url = (path: string) => `https://example.com${path}`
const DATASET = [
  {
    event: '$identify',
    distinct_id: 'alice',
    timestamp: at(3, '09:00:00'),
    properties: { $set: { plan: 'pro' } },
  },
  {
    event: '$identify',
    distinct_id: 'bob',
    timestamp: at(3, '09:00:00'),
    properties: { $set: { plan: 'free' } },
  },
  {
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: at(3, '10:00:00'),
    properties: { $current_url: url('/pricing') },
  },
  {
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: at(2, '10:00:00'),
    properties: { $current_url: url('/pricing') },
  },
  {
    event: '$pageview',
    distinct_id: 'alice',
    timestamp: at(1, '10:00:00'),
    properties: { $current_url: url('/home') },
  },
  {
    event: '$pageview',
    distinct_id: 'bob',
    timestamp: at(2, '11:00:00'),
    properties: { $current_url: url('/pricing') },
  },
  {
    event: '$pageview',
    distinct_id: 'carol',
    timestamp: at(2, '12:00:00'),
    properties: { $current_url: url('/home') },
  },
]

const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 60_000, interval: 250 })
const pageErrors: string[] = []
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })

async function eventCount(): Promise<number> {
  const res = await call('POST', `/api/projects/${project.id}/query/`, {
    query: { kind: 'HogQLQuery', query: 'SELECT count() FROM events' },
    refresh: 'force_blocking',
  })
  return Number(res.body.results?.[0]?.[0] ?? 0)
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true })
  burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('Console definitions')
  key = await createTestKey(['*'])
  call = api(burrow.url, key)
  const res = await fetch(`${burrow.url}/batch/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: project.api_token, batch: DATASET }),
  })
  expect(res.status).toBe(200)
  // The insights read ClickHouse: wait until the projectors wrote every row.
  const deadline = Date.now() + 30_000
  while ((await eventCount()) < DATASET.length && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 250))
  expect(await eventCount()).toBe(DATASET.length)
  browser = await launchChromium()
  page = await consolePage(browser, pageErrors)
  await page.addInitScript(
    ([k, id]) => {
      sessionStorage.setItem('burrow.personal_api_key', k)
      sessionStorage.setItem('burrow.project_id', id)
    },
    [key, String(project.id)] as const,
  )
})

afterAll(async () => {
  await browser?.close()
})

describe('cohorts and actions in the console', () => {
  afterEach(async (ctx) => {
    if (ctx.task.result?.state === 'fail')
      await shot(`failed-${ctx.task.name.slice(0, 20).replace(/\W+/g, '-')}`)
    expect(pageErrors.splice(0)).toEqual([])
  })

  it('Cohorts: refuses an invalid regex naming the field, makes a cohort and lists its members', async () => {
    await page.goto(`${burrow.url}/#/cohorts`)
    await page.getByRole('heading', { level: 1, name: 'Cohorts' }).waitFor()
    await page.getByLabel('Name').fill('Broken')
    await page.getByLabel('Person property').fill('plan')
    await page.getByLabel('is', { exact: true }).selectOption('regex')
    await page.getByLabel('Value').fill('(')
    await page.getByRole('button', { name: 'Create cohort' }).click()
    await poll(() => page.getByRole('alert').innerText()).toMatch(/regex.*\(filters/i)

    await page.getByLabel('Name').fill('Pro')
    await page.getByLabel('is', { exact: true }).selectOption('exact')
    await page.getByLabel('Value').fill('pro')
    await page.getByRole('button', { name: 'Create cohort' }).click()
    const row = page.getByRole('table', { name: 'Cohorts' }).locator('tbody tr', { hasText: 'Pro' })
    await poll(() => row.innerText()).toMatch(/Pro\tdynamic\t1\tup to date/)
    const members = page.getByRole('table', { name: 'Members' }).locator('tbody tr')
    await poll(() => members.allInnerTexts()).toEqual([expect.stringContaining('alice')])
    await shot('cohorts')
  })

  it('Actions: refuses an invalid URL regex, makes an action from an event and a URL', async () => {
    await page.goto(`${burrow.url}/#/actions`)
    await page.getByRole('heading', { level: 1, name: 'Actions' }).waitFor()
    await page.getByLabel('Name').fill('Broken')
    await page.getByLabel('URL', { exact: true }).fill('[')
    await page.getByLabel('URL match').selectOption('regex')
    await page.getByRole('button', { name: 'Create action' }).click()
    await poll(() => page.getByRole('alert').innerText()).toContain('steps.0.url')

    await page.getByLabel('Name').fill('Viewed pricing')
    await page.getByLabel('URL', { exact: true }).fill('/pricing')
    await page.getByLabel('URL match').selectOption('contains')
    await page.getByRole('button', { name: 'Create action' }).click()
    const row = page
      .getByRole('table', { name: 'Actions' })
      .locator('tbody tr', { hasText: 'Viewed pricing' })
    await poll(() => row.innerText()).toContain('$pageview, URL contains /pricing')
    await shot('actions')
  })

  it('Insights: an action as a series, a cohort as a filter', async () => {
    await page.goto(`${burrow.url}/#/insights/trends`)
    await page.getByLabel('Event A').fill('action: Viewed pricing')
    await page.getByLabel('Date range').selectOption('-14d')
    await page.getByRole('button', { name: 'Show trend' }).click()
    const totals = page.locator('table.plain', { hasText: 'Total' })
    await poll(() => totals.locator('tbody tr').innerText()).toBe('Viewed pricing\t3')

    await page.getByLabel('Event A').fill('$pageview')
    await page.getByLabel('Persons in cohort').selectOption({ label: 'Pro' })
    await page.getByRole('button', { name: 'Show trend' }).click()
    await poll(() => totals.locator('tbody tr').innerText()).toBe('$pageview\t3')
    await shot('insights-cohort-filter')

    await page.getByRole('link', { name: 'Funnel' }).click()
    await page.getByLabel('Step 1').fill('action: Viewed pricing')
    await page.getByLabel('Step 2').fill('$pageview')
    await page.getByRole('button', { name: 'Show funnel' }).click()
    const steps = page.getByRole('list', { name: 'Funnel steps' }).locator('li')
    await poll(() => steps.count()).toBe(2)
    // alice and bob viewed /pricing; carol did not. Then only alice viewed another page.
    await poll(() => steps.nth(0).innerText()).toContain('2 persons')
    expect(await steps.nth(1).innerText()).toMatch(/\b1 persons? /)
    await shot('insights-action-funnel')
  })
})

// The Cohorts and Actions pages in a real browser (Debian's Chromium driven by playwright-core, as
// console.test.ts), and both picked in an insight. Expected values are worked by hand from the
// events this file captures. Screenshots go to a temp folder, or to docs/console/ with
// CONSOLE_SCREENSHOTS=1.
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { at, checkPage, SHOTS, startConsole } from './helpers.ts'

let burrow: RunningBurrow
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

beforeAll(async () => {
  ;({ burrow, browser, page } = await startConsole('Console definitions', DATASET, pageErrors))
})

afterAll(async () => {
  await browser?.close()
})

describe('cohorts and actions in the console', () => {
  afterEach((ctx) => checkPage(ctx, page, pageErrors))

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

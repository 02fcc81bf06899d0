// The console's saved insights, dashboards and shared links in Chromium (playwright-core), against a
// real Burrow: save an insight and find it in the list; build a dashboard from saved insights and a
// text card with a date filter over all of it; open its shared link in a private window (no key),
// and see it gone once sharing is off; event and property pickers offer the taxonomy's names.
// Expected values by hand from the events below. Screenshots go to docs/console/ with
// CONSOLE_SCREENSHOTS=1.
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import type { api } from '../../harness/index.ts'
import { until } from '../dashboards/helpers.ts'
import { at, checkPage, SHOTS, startConsole } from './helpers.ts'

let burrow: RunningBurrow
let project: Project
let call: ReturnType<typeof api>
let browser: Browser
let page: Page

// By hand: checkout_started 3 in the last 7 days (2 three days ago, 1 yesterday) and 1 more 20 days
// ago: 4 in the last 30 days; order_completed 1 (yesterday).
const DATASET = [
  {
    event: 'checkout_started',
    distinct_id: 'ana',
    timestamp: at(3, '10:00:00'),
    properties: { cart_value: 30, coupon_code: 'X' },
  },
  {
    event: 'checkout_started',
    distinct_id: 'ben',
    timestamp: at(3, '11:00:00'),
    properties: { cart_value: 12 },
  },
  {
    event: 'checkout_started',
    distinct_id: 'ana',
    timestamp: at(1, '09:00:00'),
    properties: { cart_value: 8 },
  },
  {
    event: 'checkout_started',
    distinct_id: 'cyd',
    timestamp: at(20, '09:00:00'),
    properties: { cart_value: 5 },
  },
  {
    event: 'order_completed',
    distinct_id: 'ana',
    timestamp: at(1, '09:05:00'),
    properties: { $set: { loyalty_tier: 'gold' } },
  },
]

const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 200 })

const pageErrors: string[] = []
const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })

beforeAll(async () => {
  ;({ burrow, project, call, browser, page } = await startConsole('Console dashboards', DATASET, pageErrors))
  // the pickers read the taxonomy too
  const defs = await until(
    async () => (await call('GET', `/api/projects/${project.id}/event_definitions/`)).body.count,
    (n) => n === 2,
  )
  expect(defs).toBe(2)
})

afterAll(async () => {
  await browser?.close()
})

describe('dashboards in the console', () => {
  afterEach((ctx) => checkPage(ctx, page, pageErrors))

  it('offers the taxonomy names as you type an event or a property', async () => {
    await page.goto(`${burrow.url}/#/insights/trends`)
    const event = page.getByLabel('Event A')
    await event.fill('check')
    await poll(() =>
      page
        .locator('#trend-event-0-names option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(['checkout_started'])
    await page.getByLabel('Breakdown by event property').fill('cou')
    await poll(() =>
      page
        .locator('#trend-breakdown-names option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(['coupon_code'])
    await page.getByLabel('Breakdown by event property').fill('')
    await page.goto(`${burrow.url}/#/people`)
    await page.getByLabel('Person property').fill('loyal')
    await poll(() =>
      page
        .locator('#person-key-names option')
        .evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).toEqual(['loyalty_tier'])
  })

  it('saves an insight and finds it in the saved list', async () => {
    await page.goto(`${burrow.url}/#/insights/trends`)
    await page.getByLabel('Event A').fill('checkout_started')
    await page.getByLabel('Date range').selectOption('-7d')
    await page.getByRole('button', { name: 'Show trend' }).click()
    const totals = page.locator('table.plain', { hasText: 'Total' })
    await totals.waitFor({ timeout: 30_000 })
    expect(await totals.locator('tbody tr').innerText()).toBe('checkout_started\t3')
    await page.getByLabel('Insight name').fill('Checkouts')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').getByText('Checkouts').waitFor()
    // a second one, for the dashboard
    await page.getByLabel('Event A').fill('order_completed')
    await page.getByRole('button', { name: 'Show trend' }).click()
    await poll(() => totals.locator('tbody tr').innerText()).toBe('order_completed\t1')
    await page.getByLabel('Insight name').fill('Orders')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').getByText('Orders').waitFor()

    await page.getByRole('link', { name: 'Saved insights' }).click()
    const list = page.getByRole('table', { name: 'Saved insights' })
    await poll(() => list.locator('tbody tr').count()).toBe(2)
    await page.getByLabel('Search saved insights').fill('check')
    await poll(() => list.locator('tbody tr').allInnerTexts()).toEqual([
      expect.stringContaining('Checkouts\tTrendsQuery\t0'),
    ])
    await page.getByLabel('Search saved insights').fill('')
    await poll(() => list.locator('tbody tr').count()).toBe(2)
    await shot(page, 'insights-saved')
  })

  it('builds a dashboard from saved insights and text, with a date filter over all of it', async () => {
    await page.goto(`${burrow.url}/#/dashboards`)
    await page.getByLabel('Dashboard name').fill('Checkout health')
    await page.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { level: 2, name: 'Checkout health' }).waitFor()
    for (const name of ['Checkouts', 'Orders']) {
      await page.getByLabel('Add a saved insight').selectOption({ label: name })
      await page.getByRole('button', { name: 'Add', exact: true }).click()
      await page.getByRole('article', { name }).waitFor()
    }
    await page.getByLabel('Add a text card').fill('Checkouts and orders, every morning.')
    await page.getByRole('button', { name: 'Add text' }).click()
    await page.getByRole('article', { name: 'Text' }).getByText('every morning').waitFor()
    const checkouts = page.getByRole('article', { name: 'Checkouts' })
    // the insight's own range: the last 7 days
    await poll(() => checkouts.locator('.tile-total').innerText()).toBe('3 checkout_started')
    await page.getByLabel('Date range of every tile').selectOption('-30d')
    await poll(() => checkouts.locator('.tile-total').innerText()).toBe('4 checkout_started')
    await poll(() => page.getByRole('article', { name: 'Orders' }).locator('.tile-total').innerText()).toBe(
      '1 order_completed',
    )
    await checkouts.locator('canvas').first().waitFor()
    await shot(page, 'dashboard')
    // what the API says: the filter is saved on the dashboard
    const list = await call('GET', `/api/projects/${project.id}/dashboards/`)
    const d = list.body.results.find((x: { name: string }) => x.name === 'Checkout health')
    expect((await call('GET', `/api/projects/${project.id}/dashboards/${d.id}/`)).body.filters).toEqual({
      date_from: '-30d',
    })
  })

  it('opens the shared link in a private window, and not once sharing is off', async () => {
    await page.getByLabel('Share publicly').check()
    const link = await page.locator('#share-link').getAttribute('href')
    expect(link).toMatch(/\/shared\/[A-Za-z0-9_-]{30}$/)
    // a private window: its own context, no key in its storage
    const privateWindow = await browser.newContext({ viewport: { width: 1360, height: 900 } })
    const anon = await privateWindow.newPage()
    anon.on('pageerror', (err) => pageErrors.push(err.message))
    await anon.goto(link!)
    await anon.getByRole('heading', { level: 1, name: 'Checkout health' }).waitFor()
    expect(await anon.evaluate(() => sessionStorage.length)).toBe(0)
    await poll(() =>
      anon.getByRole('article', { name: 'Checkouts' }).locator('.tile-total').innerText(),
    ).toBe('4 checkout_started')
    await anon.getByText('every morning').waitFor()
    expect(await anon.getByRole('button').count()).toBe(0)
    await shot(anon, 'dashboard-shared')
    await page.getByLabel('Share publicly').uncheck()
    await poll(
      async () => (await call('GET', `/api/projects/${project.id}/dashboards/`)).body.results[0].is_shared,
    ).toBe(false)
    const gone = await anon.goto(link!)
    expect(gone?.status()).toBe(404)
    await privateWindow.close()
  })
})

// The console's web analytics page and the paths insight in Chromium (playwright-core), against a
// real Burrow: page views captured with sessions, referrers, utm, browser, device and country over
// this week and the one before; the overview's tiles against the previous period, and paths as a
// Sankey diagram. Every expected value is worked by hand from DATASET below. Screenshots go to a
// temp folder, or to docs/console/ with CONSOLE_SCREENSHOTS=1.
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { at, checkPage, SHOTS, startConsole } from './helpers.ts'

let burrow: RunningBurrow
let browser: Browser
let page: Page

const SITE = 'https://shop.example'

interface Visit {
  who: string
  daysAgo: number
  /** `[HH:MM:SS, path]` page views of one session */
  views: [string, string][]
  referrer?: string
  utm_source?: string
  browser: string
  os: string
  device: string
  country: string
}

// By hand. This week (1-3 days ago), one session each:
//   alice  / → /pricing → /signup   60 s  (google)
//   bob    /                         0 s  bounce (direct)
//   carol  /blog → /pricing         30 s  (news.ycombinator.com, utm_source hn)
//   dan    / → /pricing → /signup   45 s  (google)
//   erin   / → /pricing             10 s  (direct; two page views: no bounce)
//   → visitors 5, views 11, sessions 5, mean duration 145 / 5 = 29 s, bounce rate 1/5 = 20%.
// The week before (9-11 days ago):
//   fay    / → /pricing             20 s
//   gus    /blog                     0 s  bounce
//   hal    /                         0 s  bounce
//   → visitors 3, views 4, sessions 3, mean duration 20 / 3 = 6.67 s, bounce rate 2/3 = 66.7%.
// Changes (whole percent): visitors and sessions 100·2/3 = +67%, views 100·7/4 = +175%, duration
// 100·(29 − 20/3)/(20/3) = +335%, bounce rate 100·(20 − 66.67)/66.67 = −70% (lower is better).
const VISITS: Visit[] = [
  {
    who: 'alice',
    daysAgo: 2,
    views: [
      ['10:00:00', '/'],
      ['10:00:40', '/pricing'],
      ['10:01:00', '/signup'],
    ],
    referrer: 'https://www.google.com/',
    browser: 'Chrome',
    os: 'Mac OS X',
    device: 'Desktop',
    country: 'US',
  },
  {
    who: 'bob',
    daysAgo: 2,
    views: [['11:00:00', '/']],
    browser: 'Safari',
    os: 'iOS',
    device: 'Mobile',
    country: 'GB',
  },
  {
    who: 'carol',
    daysAgo: 1,
    views: [
      ['09:00:00', '/blog'],
      ['09:00:30', '/pricing'],
    ],
    referrer: 'https://news.ycombinator.com/item?id=1',
    utm_source: 'hn',
    browser: 'Firefox',
    os: 'Linux',
    device: 'Desktop',
    country: 'DE',
  },
  {
    who: 'dan',
    daysAgo: 1,
    views: [
      ['12:00:00', '/'],
      ['12:00:15', '/pricing'],
      ['12:00:45', '/signup'],
    ],
    referrer: 'https://www.google.com/',
    browser: 'Chrome',
    os: 'Windows',
    device: 'Desktop',
    country: 'US',
  },
  {
    who: 'erin',
    daysAgo: 3,
    views: [
      ['08:00:00', '/'],
      ['08:00:10', '/pricing'],
    ],
    browser: 'Chrome',
    os: 'Android',
    device: 'Mobile',
    country: 'US',
  },
  {
    who: 'fay',
    daysAgo: 10,
    views: [
      ['10:00:00', '/'],
      ['10:00:20', '/pricing'],
    ],
    referrer: 'https://www.google.com/',
    browser: 'Chrome',
    os: 'Windows',
    device: 'Desktop',
    country: 'US',
  },
  {
    who: 'gus',
    daysAgo: 10,
    views: [['11:00:00', '/blog']],
    browser: 'Safari',
    os: 'iOS',
    device: 'Mobile',
    country: 'GB',
  },
  {
    who: 'hal',
    daysAgo: 11,
    views: [['09:00:00', '/']],
    browser: 'Firefox',
    os: 'Linux',
    device: 'Desktop',
    country: 'FR',
  },
]

/** The page views posthog-js would send for the visits (the properties it sets on each). */
const DATASET = VISITS.flatMap((v) =>
  v.views.map(([time, path]) => ({
    event: '$pageview',
    distinct_id: v.who,
    timestamp: at(v.daysAgo, time),
    properties: {
      $session_id: `session-${v.who}`,
      $current_url: `${SITE}${path}`,
      $pathname: path,
      $host: 'shop.example',
      $referrer: v.referrer ?? '$direct',
      $referring_domain: v.referrer ? new URL(v.referrer).hostname : '$direct',
      ...(v.utm_source ? { utm_source: v.utm_source } : {}),
      $browser: v.browser,
      $os: v.os,
      $device_type: v.device,
      $geoip_country_code: v.country,
    },
  })),
)

const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 30_000, interval: 200 })

const pageErrors: string[] = []
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })

/** Each overview tile as `[label, value, change]` (change '' when none is shown). */
const tiles = () =>
  page
    .locator('.web-overview .stat')
    .evaluateAll((els) =>
      els.map((el) => [
        el.querySelector('.stat-label')?.textContent ?? '',
        el.querySelector('.stat-value')?.textContent ?? '',
        (el.querySelector('.change')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      ]),
    )

/** The change badges' tones, by tile key: good, bad or flat. */
const tones = () =>
  page
    .locator('.web-overview .stat')
    .evaluateAll((els) =>
      Object.fromEntries(
        els.map((el) => [
          (el as HTMLElement).dataset.key,
          ['good', 'bad', 'flat'].find((t) => el.querySelector('.change')?.classList.contains(t)) ?? null,
        ]),
      ),
    )

/** The Sankey's nodes as `label count`, and its links as `source → target: value`, both sorted. */
const sankeyNodes = () =>
  page
    .locator('.sankey g.sankey-node')
    .evaluateAll((gs) =>
      gs
        .map(
          (g) =>
            `${g.querySelector('.sankey-label')?.textContent} ${g.querySelector('.sankey-count')?.textContent}`,
        )
        .sort(),
    )
const sankeyLinks = () =>
  page
    .locator('.sankey path.sankey-link')
    .evaluateAll((ps) =>
      ps
        .map(
          (p) =>
            `${p.getAttribute('data-source')} → ${p.getAttribute('data-target')}: ${p.getAttribute('data-value')}`,
        )
        .sort(),
    )

beforeAll(async () => {
  ;({ burrow, browser, page } = await startConsole('Shop demo', DATASET, pageErrors))
})

afterAll(async () => {
  await browser?.close()
})

describe('web analytics and paths in the console', () => {
  afterEach((ctx) => checkPage(ctx, page, pageErrors))

  it('serves d3-sankey and the d3 modules it imports from node_modules', async () => {
    for (const path of [
      'd3-sankey/index.js',
      'd3-sankey/sankey.js',
      'd3-array/index.js',
      'internmap/index.js',
    ]) {
      const r = await fetch(`${burrow.url}/console/vendor/${path}`)
      expect(r.status, path).toBe(200)
      expect(r.headers.get('content-type')).toContain('text/javascript')
    }
    expect((await fetch(`${burrow.url}/console/vendor/d3-sankey/../package.json`)).status).toBe(404)
  })

  it('the overview: this week against the week before, a lower bounce rate in green', async () => {
    await page.goto(`${burrow.url}/#/web`)
    await page.getByRole('heading', { level: 1, name: 'Web analytics' }).waitFor()
    expect(await page.getByLabel('Compare with previous period').isChecked()).toBe(true)
    expect(await page.getByLabel('Date range').inputValue()).toBe('-7d')
    await poll(tiles).toEqual([
      ['Visitors', '5', '↑ +67%'],
      ['Page views', '11', '↑ +175%'],
      ['Sessions', '5', '↑ +67%'],
      ['Session duration', '29s', '↑ +335%'],
      ['Bounce rate', '20%', '↓ -70%'],
    ])
    expect(await tones()).toEqual({
      visitors: 'good',
      views: 'good',
      sessions: 'good',
      'session duration': 'good',
      'bounce rate': 'good',
    })
    const notes = await page.locator('.web-overview .stat-note .muted').allInnerTexts()
    expect(notes).toEqual(['was 3', 'was 4', 'was 3', 'was 7s', 'was 66.7%'])
    await shot('web-analytics')

    // without the comparison: the same figures, no change
    await page.getByLabel('Compare with previous period').uncheck()
    await poll(tiles).toEqual([
      ['Visitors', '5', ''],
      ['Page views', '11', ''],
      ['Sessions', '5', ''],
      ['Session duration', '29s', ''],
      ['Bounce rate', '20%', ''],
    ])
    await page.getByLabel('Compare with previous period').check()

    // 14 days hold both weeks: 8 visitors, 15 views, 8 sessions, (145 + 20) / 8 = 20.6 s, 3/8 bounce;
    // the 14 days before are empty, so there is no change to show
    await page.getByLabel('Date range').selectOption('-14d')
    await poll(tiles).toEqual([
      ['Visitors', '8', ''],
      ['Page views', '15', ''],
      ['Sessions', '8', ''],
      ['Session duration', '21s', ''],
      ['Bounce rate', '37.5%', ''],
    ])
  })

  it('paths as a Sankey: nodes per step with counts, links with their counts, a start point', async () => {
    await page.goto(`${burrow.url}/#/insights/paths`)
    expect(await page.getByLabel('Event type').inputValue()).toBe('$pageview')
    await page.getByRole('button', { name: 'Show paths' }).click()
    // This week's sessions by person: alice and dan / → /pricing → /signup, erin / → /pricing,
    // carol /blog → /pricing, bob / alone (no edge). A node counts the larger of what enters and
    // what leaves it: /pricing at step 2 has 3 + 1 in.
    await poll(sankeyLinks).toEqual([
      `1_${SITE} → 2_${SITE}/pricing: 3`,
      `1_${SITE}/blog → 2_${SITE}/pricing: 1`,
      `2_${SITE}/pricing → 3_${SITE}/signup: 2`,
    ])
    expect(await sankeyNodes()).toEqual(['/ 3', '/blog 1', '/pricing 4', '/signup 2'])
    // the link's count; its time is the mean of 40, 15 and 10 s
    await page.getByRole('button', { name: `/ (step 1) → /pricing (step 2): 3` }).click()
    await poll(() => page.locator('.sankey-picked').innerText()).toBe(
      '3 went from / (step 1) to /pricing (step 2), in 22s on average.',
    )
    await shot('insights-paths')

    // from /pricing on: alice and dan go on to /signup; carol and erin stop there
    await page.getByLabel('Starts at').fill(`${SITE}/pricing`)
    await page.getByRole('button', { name: 'Show paths' }).click()
    await poll(sankeyLinks).toEqual([`1_${SITE}/pricing → 2_${SITE}/signup: 2`])
    expect(await sankeyNodes()).toEqual(['/pricing 2', '/signup 2'])

    // up to /pricing, at most 2 steps: the last two steps before the first /pricing of each session
    await page.getByLabel('Starts at').fill('')
    await page.getByLabel('Ends at').fill(`${SITE}/pricing`)
    await page.getByLabel('Step limit').fill('2')
    await page.getByRole('button', { name: 'Show paths' }).click()
    await poll(sankeyLinks).toEqual([
      `1_${SITE} → 2_${SITE}/pricing: 3`,
      `1_${SITE}/blog → 2_${SITE}/pricing: 1`,
    ])
  })
})

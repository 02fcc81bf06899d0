// The console's web analytics page and the paths insight in Chromium (playwright-core), against a
// real Burrow: page views captured with sessions, referrers, utm, browser, device and country over
// this week and the one before; the overview's tiles and the breakdown tables against the previous
// period, and paths as a Sankey diagram. Every expected value is worked by hand from DATASET below.
// Screenshots go to a temp folder, or to docs/console/ with CONSOLE_SCREENSHOTS=1.
import { join } from 'node:path'
import type { Browser, Locator, Page } from 'playwright-core'
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
//   carol  /blog → /pricing         30 s  (partner.example.org, utm_source partner)
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
    referrer: 'https://partner.example.org/post',
    utm_source: 'partner',
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
const sankeyLinks = (scope: Page | Locator = page) =>
  scope
    .locator('.sankey path.sankey-link')
    .evaluateAll((ps) =>
      ps
        .map(
          (p) =>
            `${p.getAttribute('data-source')} → ${p.getAttribute('data-target')}: ${p.getAttribute('data-value')}`,
        )
        .sort(),
    )

/** A breakdown table's header and rows, each row's cells (value, and change when shown) joined by ` | `. */
const table = (name: string) =>
  page
    .getByRole('table', { name, exact: true })
    .evaluate((t) =>
      [...t.querySelectorAll('tr')].map((tr) =>
        [...tr.children].map((c) => (c.textContent ?? '').replace(/\s+/g, ' ').trim()).join(' | '),
      ),
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

  it('the breakdown tables: this week against the week before, by page, source, device and country', async () => {
    // a fresh page: the last 7 days, compared
    await page.goto(`${burrow.url}/#/web`)
    await page.reload()
    const tab = (card: string, name: string) =>
      page.getByRole('region', { name: card }).getByRole('button', { name, exact: true }).click()
    const rows = (name: string) => poll(() => table(name).catch(() => []))
    // Rows are in PostHog's order: by the [current, previous] visitors, then views, as tuples (a tie
    // this week goes to the larger previous figure), then by name.
    // Pages: persons and views per $pathname; the bounce rate of the sessions that entered there
    // (/: bob of alice, bob, dan, erin against hal of fay, hal; /blog: none of carol against gus)
    await rows('Pages').toEqual([
      'Page | Visitors | Views | Bounce rate',
      '/ | 4 ↑ +100% | 4 ↑ +100% | 25% ↓ -50%',
      '/pricing | 4 ↑ +300% | 4 ↑ +300% | –',
      '/signup | 2 | 2 | –',
      '/blog | 1 → 0% | 1 → 0% | 0% ↓ -100%',
    ])
    // Entry pages: sessions by their first page, views all of the session's
    await tab('Paths', 'Entry pages')
    await rows('Entry pages').toEqual([
      'Entry page | Visitors | Views | Bounce rate',
      '/ | 4 ↑ +100% | 9 ↑ +200% | 25% ↓ -50%',
      '/blog | 1 → 0% | 2 ↑ +100% | 0% ↓ -100%',
    ])
    // Exit pages: by the last page; /blog was gus's last page the week before only
    await tab('Paths', 'Exit pages')
    await rows('Exit pages').toEqual([
      'Exit page | Visitors | Views',
      '/pricing | 2 ↑ +100% | 4 ↑ +100%',
      '/signup | 2 | 6',
      '/ | 1 → 0% | 1 → 0%',
      '/blog | 0 ↓ -100% | 0 ↓ -100%',
    ])
    // Channels: google without ads is Organic Search, no referrer Direct, partner.example.org
    // (in no list) a Referral
    await rows('Channels').toEqual([
      'Channel | Visitors | Views',
      'Direct | 2 → 0% | 3 ↑ +50%',
      'Organic Search | 2 ↑ +100% | 6 ↑ +200%',
      'Referral | 1 | 2',
    ])
    await tab('Sources', 'Referrers')
    await rows('Referrers').toEqual([
      'Referring domain | Visitors | Views',
      '$direct | 2 → 0% | 3 ↑ +50%',
      'www.google.com | 2 ↑ +100% | 6 ↑ +200%',
      'partner.example.org | 1 | 2',
    ])
    // as PostHog, the sessions without a utm_source are a row too: 4 persons against 3, views
    // 3 + 1 + 3 + 2 = 9 against 2 + 1 + 1 = 4
    await tab('Sources', 'UTM sources')
    await rows('UTM sources').toEqual([
      'UTM source | Visitors | Views',
      '(none) | 4 ↑ +33% | 9 ↑ +125%',
      'partner | 1 | 2',
    ])
    // event properties: persons and page views with each value
    await rows('Device types').toEqual([
      'Device type | Visitors | Views',
      'Desktop | 3 ↑ +50% | 8 ↑ +167%',
      'Mobile | 2 ↑ +100% | 3 ↑ +200%',
    ])
    await tab('Devices', 'Browsers')
    await rows('Browsers').toEqual([
      'Browser | Visitors | Views',
      'Chrome | 3 ↑ +200% | 8 ↑ +300%',
      'Firefox | 1 → 0% | 2 ↑ +100%',
      'Safari | 1 → 0% | 1 → 0%',
    ])
    await tab('Devices', 'OS')
    await rows('OS').toEqual([
      'OS | Visitors | Views',
      'Windows | 1 → 0% | 3 ↑ +50%',
      'Linux | 1 → 0% | 2 ↑ +100%',
      'iOS | 1 → 0% | 1 → 0%',
      'Mac OS X | 1 | 3',
      'Android | 1 | 2',
    ])
    await rows('Countries').toEqual([
      'Country | Visitors | Views',
      'US | 3 ↑ +200% | 8 ↑ +300%',
      'GB | 1 → 0% | 1 → 0%',
      'DE | 1 | 2',
      'FR | 0 ↓ -100% | 0 ↓ -100%',
    ])
    // the change is good or bad news: fewer bounces on / are good, fewer visitors from FR bad
    const tone = (name: string, row: string, col: number) =>
      page
        .getByRole('table', { name, exact: true })
        .locator('tbody tr', { hasText: row })
        .locator('td')
        .nth(col)
        .locator('.change')
        .getAttribute('class')
    expect(await tone('Countries', 'FR', 0)).toBe('change bad')
    await page
      .getByRole('region', { name: 'Paths' })
      .getByRole('button', { name: 'Pages', exact: true })
      .click()
    await poll(() => tone('Pages', '/blog', 2)).toBe('change good')
    await shot('web-analytics')
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

    // saved, and on a dashboard: the same diagram in the tile
    await page.getByLabel('Insight name').fill('Ways to pricing')
    await page.getByRole('button', { name: 'Save insight' }).click()
    await page.getByRole('status').getByText('Ways to pricing').waitFor()
    await page.goto(`${burrow.url}/#/dashboards`)
    await page.getByLabel('Dashboard name').fill('Funnel health')
    await page.getByRole('button', { name: 'Create dashboard' }).click()
    await page.getByRole('heading', { level: 2, name: 'Funnel health' }).waitFor()
    await page.getByLabel('Add a saved insight').selectOption({ label: 'Ways to pricing' })
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    const tile = page.getByRole('article', { name: 'Ways to pricing' })
    await poll(() => sankeyLinks(tile)).toEqual([
      `1_${SITE} → 2_${SITE}/pricing: 3`,
      `1_${SITE}/blog → 2_${SITE}/pricing: 1`,
    ])
  })
})

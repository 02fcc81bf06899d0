// The web analytics page's and the paths diagram's pure modules (plain ES modules of the browser
// code, loaded here as they are served). The tables are fed answers of PostHog's own
// WebStatsTableQuery tests (posthog/hogql_queries/web_analytics/test/test_web_stats_table.py:
// test_comparison, test_scroll_depth_bounce_rate); what they show is worked out by hand.
import { pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'

const web = (f: string) => pathToFileURL(resolve(import.meta.dirname, '../../../src/console/web/lib', f)).href

/* eslint-disable @typescript-eslint/no-explicit-any -- untyped browser modules */
const stats: any = await import(web('web-stats.js'))
const sankey: any = await import(web('sankey.js'))
/* eslint-enable @typescript-eslint/no-explicit-any */

const C = (names: string[]) => names.map((n) => `context.columns.${n}`)
const texts = (t: {
  rows: { cells: { text: string; change: { text: string; good: boolean | null } | null }[] }[]
}) =>
  t.rows.map((r) => r.cells.map((c) => (c.change ? `${c.text} ${c.change.text} ${c.change.good}` : c.text)))

describe('the breakdown tables (WebStatsTableQuery answers)', () => {
  it("test_comparison: headers from the columns, each tuple's current value and change", () => {
    const t = stats.statsTable(
      C(['breakdown_value', 'visitors', 'views', 'cross_sell']),
      [
        ['/', [1, 1], [1, 1], ''],
        ['/docs', [1, 0], [1, 0], ''],
        ['/login', [0, 1], [0, 1], ''],
      ],
      'Page',
    )
    // cross_sell is PostHog's UI helper, not a figure
    expect(t.headers).toEqual(['Page', 'Visitors', 'Views'])
    expect(t.numeric).toEqual([false, true, true])
    expect(texts(t)).toEqual([
      // same as before: 0%, neither good nor bad
      ['/', '1 0% null', '1 0% null'],
      // nothing before: no change to show
      ['/docs', '1', '1'],
      // all gone: -100%, bad
      ['/login', '0 -100% false', '0 -100% false'],
    ])
    // the bar behind each row: its share of the largest first metric
    expect(t.rows.map((r: { fill: number }) => r.fill)).toEqual([1, 1, 0])
  })

  it('test_scroll_depth_bounce_rate: fractions as percentages, no change without compare', () => {
    const t = stats.statsTable(
      C([
        'breakdown_value',
        'visitors',
        'views',
        'bounce_rate',
        'average_scroll_percentage',
        'scroll_gt80_percentage',
        'cross_sell',
      ]),
      [
        ['/a', [3, 0], [4, 0], [1 / 3, null], [0.5, null], [0.5, null], ''],
        ['/b', [2, 0], [2, 0], [null, null], [0.2, null], [0, null], ''],
      ],
      'Page',
    )
    expect(t.headers).toEqual([
      'Page',
      'Visitors',
      'Views',
      'Bounce rate',
      'Average scroll percentage',
      'Scroll gt80 percentage',
    ])
    expect(texts(t)).toEqual([
      ['/a', '3', '4', '33.3%', '50%', '50%'],
      ['/b', '2', '2', '–', '20%', '0%'],
    ])
  })

  it('a lower bounce rate is good news, a higher one bad; a missing breakdown value reads (none)', () => {
    const t = stats.statsTable(
      C(['breakdown_value', 'visitors', 'bounce_rate']),
      [
        ['Chrome', [4, 2], [0.25, 0.5]],
        [null, [1, 2], [0.5, 0.25]],
      ],
      'Browser',
    )
    expect(texts(t)).toEqual([
      ['Chrome', '4 +100% true', '25% -50% true'],
      ['(none)', '1 -50% false', '50% +100% false'],
    ])
  })

  it('an empty answer: headers and no rows', () => {
    const t = stats.statsTable(C(['breakdown_value', 'visitors']), [], 'Country')
    expect(t.headers).toEqual(['Country', 'Visitors'])
    expect(t.rows).toEqual([])
  })
})

describe('the overview tiles (WebOverviewQuery items)', () => {
  it("test_increase_in_users' figures: labels, values by kind, changes", () => {
    // the items PostHog's test_increase_in_users asserts for visitors and views, with a duration and
    // a bounce rate (percentages arrive times 100, as PostHog's to_data makes them)
    const tiles = stats.overviewTiles([
      {
        key: 'visitors',
        kind: 'unit',
        isIncreaseBad: null,
        value: 2,
        previous: 1,
        changeFromPreviousPct: 100,
      },
      { key: 'views', kind: 'unit', isIncreaseBad: null, value: 2, previous: 2, changeFromPreviousPct: 0 },
      {
        key: 'session duration',
        kind: 'duration_s',
        isIncreaseBad: null,
        value: 125,
        previous: null,
        changeFromPreviousPct: null,
      },
      {
        key: 'bounce rate',
        kind: 'percentage',
        isIncreaseBad: true,
        value: 50,
        previous: 100,
        changeFromPreviousPct: -50,
      },
    ])
    expect(
      tiles.map(
        (t: {
          label: string
          value: string
          previous: string | null
          change: { text: string; good: boolean | null } | null
        }) => [t.label, t.value, t.previous, t.change && `${t.change.text} ${t.change.good}`],
      ),
    ).toEqual([
      ['Visitors', '2', '1', '+100% true'],
      ['Page views', '2', '2', '0% null'],
      ['Session duration', '2m 5s', null, null],
      ['Bounce rate', '50%', '100%', '-50% true'],
    ])
  })

  it('durations to two units', () => {
    expect([0, 29, 60, 61, 3600, 3725, 7200].map(stats.duration)).toEqual([
      '0s',
      '29s',
      '1m',
      '1m 1s',
      '1h',
      '1h 2m',
      '2h',
    ])
  })
})

describe('the paths diagram (PathsQuery edges through d3-sankey)', () => {
  // docs/paths.md's shape: the item at step N as `N_item`
  const edges = [
    {
      source: '1_https://x.example',
      target: '2_https://x.example/pricing',
      value: 3,
      average_conversion_time: 20_000,
    },
    {
      source: '2_https://x.example/pricing',
      target: '3_https://x.example/signup',
      value: 2,
      average_conversion_time: 5_000,
    },
    {
      source: '1_https://x.example/blog',
      target: '2_https://x.example/pricing',
      value: 1,
      average_conversion_time: 1_000,
    },
  ]

  it('names nodes as PostHog shows them: a URL without its origin, events as they are', () => {
    expect(sankey.parseNodeKey('2_https://x.example/a_b')).toEqual({ step: 2, item: 'https://x.example/a_b' })
    expect(sankey.itemLabel('https://x.example')).toBe('/')
    expect(sankey.itemLabel('https://x.example/p?q=1#h')).toBe('/p?q=1#h')
    expect(sankey.itemLabel('signed up')).toBe('signed up')
    expect(sankey.itemLabel('')).toBe('(empty)')
  })

  it('a node per step and item, a column per step, links as wide as their counts', () => {
    const { nodes, links } = sankey.layoutPaths(edges, 900, 300)
    const byId = Object.fromEntries(nodes.map((n: { id: string }) => [n.id, n]))
    // a node counts the larger of what enters and what leaves it
    expect(
      nodes.map((n: { label: string; step: number; value: number }) => [n.label, n.step, n.value]).sort(),
    ).toEqual([
      ['/', 1, 3],
      ['/blog', 1, 1],
      ['/pricing', 2, 4],
      ['/signup', 3, 2],
    ])
    // steps left to right, the first and the last at the box's edges
    const x = (id: string) => byId[id].x0
    expect(x('1_https://x.example')).toBe(x('1_https://x.example/blog'))
    expect(x('1_https://x.example')).toBeLessThan(x('2_https://x.example/pricing'))
    expect(x('2_https://x.example/pricing')).toBeLessThan(x('3_https://x.example/signup'))
    expect(byId['3_https://x.example/signup'].x1).toBe(899)
    // widths in proportion: 3 : 2 : 1
    const w = links.map((l: { width: number }) => l.width)
    expect(w[0] / w[2]).toBeCloseTo(3, 6)
    expect(w[1] / w[2]).toBeCloseTo(2, 6)
    expect(links.every((l: { path: string }) => /^M[\d.]+,[\d.]+C/.test(l.path))).toBe(true)
  })

  it('no edges: nothing to draw', () => {
    expect(sankey.layoutPaths([], 900, 300)).toEqual({ nodes: [], links: [] })
  })
})

describe('query requests from one tab', () => {
  it('at most 3 in flight (the API allows a key 4); one aborted while waiting is never sent', async () => {
    /* eslint-disable-next-line @typescript-eslint/no-explicit-any -- a plain ES module of the console */
    const api: any = await import(web('api.js'))
    let inFlight = 0
    let most = 0
    const sent: (number | string)[] = []
    const release: (() => void)[] = []
    const realFetch = globalThis.fetch
    globalThis.fetch = (async (_url: string, init: RequestInit) => {
      sent.push(init.body ? JSON.parse(String(init.body)).query.n : 'GET')
      inFlight++
      most = Math.max(most, inFlight)
      await new Promise<void>((r) => release.push(r))
      inFlight--
      return new Response('{"results":[]}')
    }) as typeof fetch
    try {
      const client = api.createApi('phx_x')
      const path = api.projectPath(1, 'query/')
      const gone = new AbortController()
      const asks = [1, 2, 3, 4, 5].map((n) =>
        client.post(path, { query: { n } }, n === 4 ? gone.signal : undefined).then(
          () => 'answered',
          (e: Error) => e.name,
        ),
      )
      // other calls are not queued
      const other = client.get(api.projectPath(1, 'insights/'))
      await new Promise((r) => setTimeout(r, 10))
      expect(new Set(sent)).toEqual(new Set([1, 2, 3, 'GET']))
      gone.abort()
      while (release.length) {
        release.shift()!()
        await new Promise((r) => setTimeout(r, 10))
      }
      const outcomes = await Promise.all([...asks, other.then(() => 'answered')])
      expect(outcomes).toEqual(['answered', 'answered', 'answered', 'AbortError', 'answered', 'answered'])
      // the 4th was dropped from the line; the 5th went when a slot came free
      expect(sent.filter((n) => n !== 'GET')).toEqual([1, 2, 3, 5])
      expect(most).toBe(4) // three queries and the GET beside them
    } finally {
      globalThis.fetch = realFetch
    }
  })
})

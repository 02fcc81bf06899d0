// PathsQuery through POST /query/ on the harness's ClickHouse. Each case is one of PostHog's
// (posthog/hogql_queries/insights/test/test_paths_query_runner.py): the events it creates per
// person and the edges it asserts. Each case has a project of its own. PostHog's events without a
// timestamp are created one after another "now"; here they get explicit times a second apart, in
// the order PostHog creates them (PostHog's result does not depend on the gaps).
import { beforeAll, describe, expect, it } from 'vitest'
import { links, ONE_MINUTE, projectWith, seconds, startPathsBurrow } from './helpers.ts'

beforeAll(startPathsBurrow)

describe('PathsQuery', () => {
  it('page views: edges by step, trailing slashes, date ranges (test_current_url_paths_and_logic)', async () => {
    const { run } = await projectWith('current url', [
      { person: 'fake', url: '/', ts: '2012-01-01 03:21:34' },
      { person: 'fake', url: '/about', ts: '2012-01-01 03:21:34' },
      { person: 'p1', url: '/', ts: '2012-01-14 03:21:34' },
      { person: 'p1', url: '/about', ts: '2012-01-14 03:28:34' },
      { person: 'p2', distinctId: 'p2a', url: '/', ts: '2012-01-14 03:21:34' },
      { person: 'p2', distinctId: 'p2b', url: '/pricing', ts: '2012-01-14 03:28:34' },
      { person: 'p2', distinctId: 'p2a', url: '/about', ts: '2012-01-14 03:29:34' },
      { person: 'p3', url: '/pricing', ts: '2012-01-14 03:21:34' },
      { person: 'p3', url: '/', ts: '2012-01-14 03:28:34' },
      { person: 'p4', url: '/', ts: '2012-01-14 03:21:34' },
      { person: 'p4', url: '/pricing', ts: '2012-01-14 03:28:34' },
    ])
    // PostHog asks with time frozen at 2012-01-15 03:21:34 and the default range (-7d): Jan 8-15
    const week = { date_from: '2012-01-08', date_to: '2012-01-15' }
    const res = await run({ dateRange: week, pathsFilter: {} })
    expect(links(res)).toEqual([
      ['1_/', '2_/pricing', 2],
      ['1_/', '2_/about', 1],
      ['1_/pricing', '2_/', 1],
      ['2_/pricing', '3_/about', 1],
    ])
    // p1: 7 minutes; p2 and p4 7 minutes to /pricing; p3 7 minutes; p2 1 minute on to /about
    expect(res.map((r) => r.average_conversion_time)).toEqual([
      7 * ONE_MINUTE,
      7 * ONE_MINUTE,
      7 * ONE_MINUTE,
      ONE_MINUTE,
    ])
    expect(await run({ dateRange: { date_from: '2012-01-08' }, pathsFilter: {} })).toHaveLength(4)
    expect(await run({ dateRange: { date_from: '2012-01-22' }, pathsFilter: {} })).toHaveLength(0)
    expect(await run({ dateRange: { date_from: '2012-01-02', date_to: '2012-01-08' } })).toHaveLength(0)
    const both = { date_from: '2012-01-08', date_to: '2012-01-22' }
    expect(await run({ dateRange: both, pathsFilter: {} })).toHaveLength(4)
    // Burrow projects define no test-account filters (PostHog's default one drops p1's email)
    expect(await run({ dateRange: both, filterTestAccounts: true, pathsFilter: {} })).toHaveLength(4)
    expect(await run({ dateRange: { date_from: '2012-01-22', date_to: '2012-01-08' } })).toHaveLength(0)
    // PostHog's `fake` person: two events in the same second, before the week
    expect(links(await run({ dateRange: { date_from: '2012-01-01', date_to: '2012-01-01' } }))).toEqual([
      ['1_/', '2_/about', 1],
    ])
  })

  const customEvents = (props: Record<string, unknown> = {}) => {
    const t = seconds('2024-05-01 10:00:00')
    const e = (person: string, event: string, properties = props) => ({ person, event, properties, ts: t() })
    return [
      e('p1', 'custom_event_1'),
      e('p1', 'custom_event_3'),
      { person: 'p1', url: '/', ts: t() }, // should be ignored
      e('p2', 'custom_event_1'),
      e('p2', 'custom_event_2'),
      e('p2', 'custom_event_3'),
      e('p3', 'custom_event_2'),
      e('p3', 'custom_event_1'),
      e('p4', 'custom_event_1'),
      e('p4', 'custom_event_2'),
    ]
  }
  const may = { date_from: '2024-05-01', date_to: '2024-05-02' }

  it('custom events (test_custom_event_paths)', async () => {
    const { run } = await projectWith('custom', customEvents())
    const res = await run({ dateRange: may, pathsFilter: { includeEventTypes: ['custom_event'] } })
    expect(links(res)).toEqual([
      ['1_custom_event_1', '2_custom_event_2', 2],
      ['1_custom_event_1', '2_custom_event_3', 1],
      ['1_custom_event_2', '2_custom_event_1', 1],
      ['2_custom_event_2', '3_custom_event_3', 1],
    ])
  })

  it('a HogQL expression names the events (test_custom_hogql_paths)', async () => {
    const { run, post } = await projectWith('hogql', customEvents({ a: '!' }))
    const pathsFilter = { includeEventTypes: ['hogql'], pathsHogQLExpression: 'event || properties.a' }
    const res = await run({ dateRange: may, pathsFilter })
    // PostHog asserts the first four; the fifth is p1's `$pageview`, which the `hogql` type alone
    // does not leave out, named '$pageview' (HogQL's concat reads the missing `a` as '')
    expect(links(res)).toEqual([
      ['1_custom_event_1!', '2_custom_event_2!', 2],
      ['1_custom_event_1!', '2_custom_event_3!', 1],
      ['1_custom_event_2!', '2_custom_event_1!', 1],
      ['2_custom_event_2!', '3_custom_event_3!', 1],
      ['2_custom_event_3!', '3_$pageview', 1],
    ])
    const bad = await post({
      kind: 'PathsQuery',
      pathsFilter: { ...pathsFilter, pathsHogQLExpression: 'nope(' },
    })
    expect(bad.status, bad.text).toBe(400)
    const missing = await post({ kind: 'PathsQuery', pathsFilter: { includeEventTypes: ['hogql'] } })
    expect(missing.status).toBe(400)
    expect(missing.body.detail ?? missing.text).toMatch(/pathsHogQLExpression/)
  })
  // PostHog's test_screen_paths and test_paths_properties_filter create their events in this order
  const siteEvents = (screens: boolean, chrome = false) => {
    const t = seconds('2024-05-01 10:00:00')
    const e = (person: string, name: string, c = false, distinctId = person) =>
      screens
        ? { person, distinctId, screen: name, ts: t() }
        : { person, distinctId, url: name, ts: t(), properties: c ? { $browser: 'Chrome' } : {} }
    return [
      e('p1', '/', chrome),
      e('p1', '/about', chrome),
      e('p2', '/', chrome, 'p2b'),
      e('p2', '/pricing', chrome, 'p2a'),
      e('p2', '/about', chrome, 'p2b'),
      e('p3', '/pricing'),
      e('p3', '/'),
      e('p4', '/'),
      e('p4', '/pricing'),
    ]
  }

  it('screens (test_screen_paths)', async () => {
    const { run } = await projectWith('screens', siteEvents(true))
    expect(links(await run({ dateRange: may, pathsFilter: { includeEventTypes: ['$screen'] } }))).toEqual([
      ['1_/', '2_/pricing', 2],
      ['1_/', '2_/about', 1],
      ['1_/pricing', '2_/', 1],
      ['2_/pricing', '3_/about', 1],
    ])
  })

  it('event property filters (test_paths_properties_filter)', async () => {
    const { run } = await projectWith('properties', siteEvents(false, true))
    const chrome = { key: '$browser', operator: 'exact', type: 'event', value: ['Chrome'] }
    const properties = { type: 'AND', values: [{ type: 'AND', values: [chrome] }] }
    expect(links(await run({ dateRange: may, pathsFilter: {}, properties }))).toEqual([
      ['1_/', '2_/about', 1],
      ['1_/', '2_/pricing', 1],
      ['2_/pricing', '3_/about', 1],
    ])
  })

  it('a start point, with or without its trailing slash (test_paths_start)', async () => {
    const t = seconds('2024-05-01 10:00:00')
    const e = (person: string, url: string, distinctId = person) => ({ person, distinctId, url, ts: t() })
    const { run } = await projectWith('start', [
      e('p1', '/'),
      e('p1', '/about/'),
      e('p2', '/'),
      e('p2', '/pricing/'),
      e('p2', '/about'),
      e('p3', '/pricing'),
      e('p3', '/'),
      e('p3', '/about/'),
      e('p4', '/'),
      e('p4', '/pricing/'),
      e('p5', '/pricing', 'p5a'),
      e('p5', '/about', 'p5b'),
      e('p5', '/pricing/', 'p5a'),
      e('p5', '/help', 'p5b'),
    ])
    const fromPricing = [
      ['1_/pricing', '2_/about', 2],
      ['1_/pricing', '2_/', 1],
      ['2_/', '3_/about', 1],
      ['2_/about', '3_/pricing', 1],
      ['3_/pricing', '4_/help', 1],
    ]
    expect(links(await run({ dateRange: may, pathsFilter: { startPoint: '/pricing' } }))).toEqual(fromPricing)
    expect(links(await run({ dateRange: may, pathsFilter: { startPoint: '/pricing/' } }))).toEqual(
      fromPricing,
    )
    expect(links(await run({ dateRange: may, pathsFilter: { startPoint: '/' } }))).toEqual([
      ['1_/', '2_/about', 2],
      ['1_/', '2_/pricing', 2],
      ['2_/pricing', '3_/about', 1],
    ])
  })

  it('each session is a path of its own (test_paths_in_window)', async () => {
    const { run } = await projectWith('window', [
      { person: 'p1', url: '/', ts: '2020-04-14 03:25:34' },
      { person: 'p1', url: '/about', ts: '2020-04-14 03:30:34' },
      { person: 'p1', url: '/', ts: '2020-04-15 03:25:34' },
      { person: 'p1', url: '/about', ts: '2020-04-15 03:30:34' },
    ])
    const res = await run({ dateRange: { date_from: '2020-04-13', date_to: '2020-04-16' }, pathsFilter: {} })
    expect(res).toEqual([
      { source: '1_/', target: '2_/about', value: 2, average_conversion_time: 5 * ONE_MINUTE },
    ])
  })
})

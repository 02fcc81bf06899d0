// PathsQuery and the actors of its edges, on PostHog's cases of
// posthog/hogql_queries/insights/test/test_paths_query_runner_ee.py (the events each creates and
// the edges and persons it asserts; PostHog's `_get_people_at_path` is the `people` helper here).
// The last cases (cleaning, edge weights, the 400s) are worked out by hand. PostHog's time is frozen
// where its default range (-7d) matters; here the ranges are absolute.
import { beforeAll, describe, expect, it } from 'vitest'
import { type Ev, link, links, ONE_MINUTE, projectWith, startPathsBurrow } from './helpers.ts'

beforeAll(startPathsBurrow)

const at = (person: string, url: string, ts: string): Ev => ({ person, url, ts })
const custom = (person: string, event: string, ts: string): Ev => ({ person, event, ts })

// four page views of one person 1, 2 and 3 minutes apart (test_step_limit)
const fourPages = [
  at('fake', '/1', '2012-01-01 03:21:34'),
  at('fake', '/2', '2012-01-01 03:22:34'),
  at('fake', '/3', '2012-01-01 03:24:34'),
  at('fake', '/4', '2012-01-01 03:27:34'),
]
const jan = { date_from: '2012-01-01', date_to: '2012-01-07' }

// five persons /1 .. /after a minute apart; two more /2, /a or /b, /x, /about (30 s, 30 s, 1 min)
const orphanEvents = (): Ev[] => {
  const route = ['/1', '/2', '/3', '/4', '/5', '/about', '/after']
  const events = [0, 1, 2, 3, 4].flatMap((i) =>
    route.map((u, k) => at(`person_${i}`, u, `2021-05-01 00:0${k + 1}:00`)),
  )
  for (const [p, via] of [
    ['person_r_2', '/a'],
    ['person_r_3', '/b'],
  ] as const) {
    events.push(at(p, '/2', '2021-05-01 00:01:00'), at(p, via, '2021-05-01 00:01:30'))
    events.push(at(p, '/x', '2021-05-01 00:02:00'), at(p, '/about', '2021-05-01 00:03:00'))
  }
  return events
}
const may2021 = { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' }
const heavy = [
  link('1_/2', '2_/3', 5, ONE_MINUTE),
  link('2_/3', '3_/4', 5, ONE_MINUTE),
  link('3_/4', '4_/5', 5, ONE_MINUTE),
  link('4_/5', '5_/about', 5, ONE_MINUTE),
]

describe('PathsQuery (PostHog ee cases)', () => {
  it('step limits and the persons on an edge (test_step_limit)', async () => {
    const { run, people } = await projectWith('step limit', fourPages)
    const q = (stepLimit: number) => ({ dateRange: jan, pathsFilter: { stepLimit } })
    expect(await run(q(2))).toEqual([link('1_/1', '2_/2', 1, ONE_MINUTE)])
    expect(await people(q(2), { pathStartKey: '1_/1', pathEndKey: '2_/2' })).toEqual(['fake'])
    expect(await people(q(2), { pathStartKey: '2_/2', pathEndKey: '3_/3' })).toEqual([])
    expect(await run(q(3))).toEqual([
      link('1_/1', '2_/2', 1, ONE_MINUTE),
      link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
    ])
    expect(await people(q(3), { pathStartKey: '2_/2', pathEndKey: '3_/3' })).toEqual(['fake'])
    expect(await run(q(4))).toEqual([
      link('1_/1', '2_/2', 1, ONE_MINUTE),
      link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
      link('3_/3', '4_/4', 1, 3 * ONE_MINUTE),
    ])
    for (const [s, e] of [
      ['1_/1', '2_/2'],
      ['2_/2', '3_/3'],
      ['3_/3', '4_/4'],
    ]) {
      expect(await people(q(4), { pathStartKey: s!, pathEndKey: e! })).toEqual(['fake'])
    }
  })

  it('conversion times are averaged per edge (test_step_conversion_times)', async () => {
    const { run } = await projectWith('conversion times', [
      ...fourPages,
      at('fake2', '/1', '2012-01-01 03:21:34'),
      at('fake2', '/2', '2012-01-01 03:23:34'),
      at('fake2', '/3', '2012-01-01 03:27:34'),
    ])
    const res = await run({ dateRange: { date_from: '2012-01-01' }, pathsFilter: { stepLimit: 4 } })
    expect(res).toEqual([
      link('1_/1', '2_/2', 2, 1.5 * ONE_MINUTE),
      link('2_/2', '3_/3', 2, 3 * ONE_MINUTE),
      link('3_/3', '4_/4', 1, 3 * ONE_MINUTE),
    ])
  })

  it('paths of many persons stay in order (test_event_ordering)', async () => {
    const events: Ev[] = []
    for (let i = 0; i < 50; i++) {
      const u = `user_${i}`
      events.push(custom(u, 'step one', '2021-05-01 00:00:00'))
      events.push(custom(u, 'step two', '2021-05-01 00:01:00'))
      events.push(custom(u, 'step three', '2021-05-01 00:02:00'))
      if (i % 2 === 0) events.push(custom(u, 'step branch', '2021-05-01 00:03:00'))
    }
    const { run } = await projectWith('ordering', events)
    const res = await run({
      dateRange: { date_from: '2021-05-01', date_to: '2021-05-03' },
      pathsFilter: { includeEventTypes: ['custom_event'] },
    })
    expect(res).toEqual([
      link('1_step one', '2_step two', 50, ONE_MINUTE),
      link('2_step two', '3_step three', 50, ONE_MINUTE),
      link('3_step three', '4_step branch', 25, ONE_MINUTE),
    ])
  })

  it('an end point, with or without its trailing slash (test_end)', async () => {
    const { run } = await projectWith('end', [
      at('p1', '/1', '2021-05-01 00:01:00'),
      at('p1', '/2', '2021-05-01 00:02:00'),
      at('p1', '/3/', '2021-05-01 00:03:00'),
      at('p1', '/4/', '2021-05-01 00:04:00'),
      at('p1', '/5', '2021-05-01 00:05:00'),
      at('p1', '/about', '2021-05-01 00:06:00'),
      at('p1', '/after/', '2021-05-01 00:07:00'),
      at('p2', '/5', '2021-05-01 00:01:00'),
      at('p2', '/about', '2021-05-01 00:02:00'),
      at('p3', '/3/', '2021-05-01 00:01:00'),
      at('p3', '/4', '2021-05-01 00:02:00'),
      at('p3', '/about/', '2021-05-01 00:03:00'),
      at('p3', '/after', '2021-05-01 00:04:00'),
    ])
    const expected = [
      link('1_/2', '2_/3', 1, ONE_MINUTE),
      link('1_/3', '2_/4', 1, ONE_MINUTE),
      link('1_/5', '2_/about', 1, ONE_MINUTE),
      link('2_/3', '3_/4', 1, ONE_MINUTE),
      link('2_/4', '3_/about', 1, ONE_MINUTE),
      link('3_/4', '4_/5', 1, ONE_MINUTE),
      link('4_/5', '5_/about', 1, ONE_MINUTE),
    ]
    const dateRange = { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' }
    expect(await run({ dateRange, pathsFilter: { endPoint: '/about' } })).toEqual(expected)
    expect(await run({ dateRange, pathsFilter: { endPoint: '/about/' } })).toEqual(expected)
  })

  // p1 page views, p2 screens, p3 custom events, each 1 then 2 minutes apart
  const threeKinds = (): Ev[] => {
    const ts = ['2012-01-01 03:21:34', '2012-01-01 03:22:34', '2012-01-01 03:24:34']
    return [
      ...ts.map((t, i) => at('p1', ['/1', '/2/', '/3'][i]!, t)),
      ...ts.map((t, i) => ({ person: 'p2', screen: `/screen${i + 1}`, ts: t })),
      ...ts.map((t, i) => custom('p3', `/custom${i + 1}`, t)),
    ]
  }
  const from2012 = { date_from: '2012-01-01', date_to: '2012-01-02' }

  it('event types and excluded items (test_event_inclusion_exclusion_filters)', async () => {
    const { run } = await projectWith('inclusion', threeKinds())
    const q = (f: object) => run({ dateRange: from2012, pathsFilter: { stepLimit: 4, ...f } })
    expect(await q({ includeEventTypes: ['$pageview'] })).toEqual([
      link('1_/1', '2_/2', 1, ONE_MINUTE),
      link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
    ])
    expect(await q({ includeEventTypes: ['$screen'] })).toEqual([
      link('1_/screen1', '2_/screen2', 1, ONE_MINUTE),
      link('2_/screen2', '3_/screen3', 1, 2 * ONE_MINUTE),
    ])
    expect(await q({ includeEventTypes: ['custom_event'] })).toEqual([
      link('1_/custom1', '2_/custom2', 1, ONE_MINUTE),
      link('2_/custom2', '3_/custom3', 1, 2 * ONE_MINUTE),
    ])
    const all = ['$pageview', '$screen', 'custom_event']
    expect(await q({ includeEventTypes: all, excludeEvents: ['/custom1', '/1', '/2', '/3'] })).toEqual([
      link('1_/custom2', '2_/custom3', 1, 2 * ONE_MINUTE),
      link('1_/screen1', '2_/screen2', 1, ONE_MINUTE),
      link('2_/screen2', '3_/screen3', 1, 2 * ONE_MINUTE),
    ])
  })

  const wildcardPeople = (): Ev[] =>
    ['/2/bar/1/foo', '/bar/2/foo', '/bar/33/foo'].flatMap((middle, i) => [
      at(`p${i + 1}`, '/1', '2012-01-01 03:21:34'),
      at(`p${i + 1}`, middle, '2012-01-01 03:22:34'),
      at(`p${i + 1}`, '/3', '2012-01-01 03:24:34'),
    ])

  it('excluding a grouped item (test_event_exclusion_filters_with_wildcard_groups)', async () => {
    const { run } = await projectWith('wildcard exclusion', wildcardPeople())
    const q = (pathGroupings: string[]) =>
      run({
        dateRange: from2012,
        pathsFilter: {
          stepLimit: 4,
          includeEventTypes: ['$pageview'],
          excludeEvents: ['/bar/*/foo'],
          pathGroupings,
        },
      })
    expect(await q(['/bar/*/foo'])).toEqual([link('1_/1', '2_/3', 3, 3 * ONE_MINUTE)])
    // the grouping matches nothing, so nothing is named '/bar/*/foo' and nothing is excluded
    expect(await q(['/xxx/invalid/*'])).toHaveLength(6)
  })

  it('event types within one person (test_event_inclusion_exclusion_filters_across_single_person)', async () => {
    const { run } = await projectWith('single person', [
      at('p1', '/1', '2012-01-01 03:21:34'),
      at('p1', '/2', '2012-01-01 03:22:34'),
      at('p1', '/3', '2012-01-01 03:24:34'),
      { person: 'p1', screen: '/screen1', ts: '2012-01-01 03:25:34' },
      { person: 'p1', screen: '/screen2', ts: '2012-01-01 03:26:34' },
      { person: 'p1', screen: '/screen3', ts: '2012-01-01 03:28:34' },
      custom('p1', '/custom1', '2012-01-01 03:29:34'),
      custom('p1', '/custom2', '2012-01-01 03:30:34'),
      custom('p1', '/custom3', '2012-01-01 03:32:34'),
    ])
    const q = (f: object) => run({ dateRange: from2012, pathsFilter: { stepLimit: 10, ...f } })
    const pagesAndScreens = [
      link('1_/1', '2_/2', 1, ONE_MINUTE),
      link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
      link('3_/3', '4_/screen1', 1, ONE_MINUTE),
      link('4_/screen1', '5_/screen2', 1, ONE_MINUTE),
      link('5_/screen2', '6_/screen3', 1, 2 * ONE_MINUTE),
    ]
    expect(await q({})).toEqual([
      ...pagesAndScreens,
      link('6_/screen3', '7_/custom1', 1, ONE_MINUTE),
      link('7_/custom1', '8_/custom2', 1, ONE_MINUTE),
      link('8_/custom2', '9_/custom3', 1, 2 * ONE_MINUTE),
    ])
    expect(await q({ includeEventTypes: ['$pageview', '$screen'] })).toEqual(pagesAndScreens)
    expect(
      await q({ includeEventTypes: ['$pageview', 'custom_event'], excludeEvents: ['/custom1', '/custom3'] }),
    ).toEqual([
      link('1_/1', '2_/2', 1, ONE_MINUTE),
      link('2_/2', '3_/3', 1, 2 * ONE_MINUTE),
      link('3_/3', '4_/custom2', 1, 6 * ONE_MINUTE),
    ])
  })

  it('a new day is a new session (test_respect_session_limits)', async () => {
    const { run } = await projectWith('sessions', [
      at('fake', '/1', '2012-01-01 03:21:34'),
      at('fake', '/2', '2012-01-01 03:22:34'),
      at('fake', '/3', '2012-01-01 03:24:34'),
      at('fake', '/1', '2012-01-02 03:21:54'),
      at('fake', '/2/', '2012-01-02 03:22:54'),
      at('fake', '/3', '2012-01-02 03:26:54'),
    ])
    expect(
      await run({ dateRange: { date_from: '2012-01-01', date_to: '2012-01-03' }, pathsFilter: {} }),
    ).toEqual([link('1_/1', '2_/2', 2, ONE_MINUTE), link('2_/2', '3_/3', 2, 3 * ONE_MINUTE)])
  })

  it('repeats count once, at their last time (test_removes_duplicates)', async () => {
    const { run } = await projectWith('duplicates', [
      at('fake', '/1', '2012-01-01 03:21:34'),
      at('fake', '/1', '2012-01-01 03:21:54'),
      at('fake', '/2', '2012-01-01 03:22:34'),
      at('fake', '/2/', '2012-01-01 03:22:54'),
      at('fake', '/3', '2012-01-01 03:24:54'),
      at('fake2', '/1', '2012-01-01 03:21:34'),
      at('fake2', '/2/', '2012-01-01 03:23:34'),
      at('fake2', '/3', '2012-01-01 03:27:34'),
    ])
    expect(await run({ dateRange: from2012, pathsFilter: {} })).toEqual([
      link('1_/1', '2_/2', 2, 1.5 * ONE_MINUTE),
      link('2_/2', '3_/3', 2, 3 * ONE_MINUTE),
    ])
  })

  it("start and end points, long paths folded around '...' (test_start_and_end)", async () => {
    const p1 = ['/1', '/2', '/3', '/4', '/5', '/about', '/after'].map((u, i) =>
      at('p1', u, `2021-05-01 00:0${i + 1}:00`),
    )
    const p2 = ['/5', '/about'].map((u, i) => at('p2', u, `2021-05-01 00:0${i + 1}:00`))
    const p3 = ['/3', '/4', '/about', '/after'].map((u, i) => at('p3', u, `2021-05-01 00:0${i + 1}:00`))
    const { run, people } = await projectWith('start and end', [...p1, ...p2, ...p3])
    const dateRange = { date_from: '2012-05-01 00:00:00', date_to: '2021-05-07 00:00:00' }
    const q = (f: object) => ({
      dateRange,
      pathsFilter: { includeEventTypes: ['$pageview'], startPoint: '/5', endPoint: '/about', ...f },
    })
    expect(await run(q({}))).toEqual([link('1_/5', '2_/about', 2, ONE_MINUTE)])
    expect(await people(q({}), { pathStartKey: '1_/5', pathEndKey: '2_/about' })).toEqual(['p1', 'p2'])
    const long = q({ startPoint: '/2', stepLimit: 4 })
    expect(await run(long)).toEqual([
      link('1_/2', '2_/3', 1, ONE_MINUTE),
      link('2_/3', '3_...', 1, ONE_MINUTE),
      link('3_...', '4_/5', 1, ONE_MINUTE),
      link('4_/5', '5_/about', 1, ONE_MINUTE),
    ])
    expect(await people(long, { pathStartKey: '3_...', pathEndKey: '4_/5' })).toEqual(['p1'])
  })

  it('wildcard groups across persons (test_wildcard_groups_across_people)', async () => {
    const { run } = await projectWith('wildcard groups', wildcardPeople())
    const pathsFilter = { stepLimit: 4, includeEventTypes: ['$pageview'], pathGroupings: ['/bar/*/foo'] }
    expect(await run({ dateRange: from2012, pathsFilter })).toEqual([
      link('1_/1', '2_/bar/*/foo', 3, ONE_MINUTE),
      link('2_/bar/*/foo', '3_/3', 3, 2 * ONE_MINUTE),
    ])
  })

  it('groupings are literal but for the star (test_wildcard_groups_evil_input)', async () => {
    const evil = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'
    const { run } = await projectWith('evil groups', [
      at('p1', evil, '2012-01-01 03:21:34'),
      at('p1', '/2/bar/aaa', '2012-01-01 03:22:34'),
      at('p1', '/3', '2012-01-01 03:24:34'),
      at('p2', '/1', '2012-01-01 03:21:34'),
      at('p2', '/2/3?q=1', '2012-01-01 03:22:34'),
      at('p2', '/3?q=1', '2012-01-01 03:24:34'),
    ])
    const pathGroupings = ['(a+)+', '[aaa|aaaa]+', '1.*', '.*', '/3?q=1', '/3*']
    const res = await run({
      dateRange: from2012,
      pathsFilter: { includeEventTypes: ['$pageview'], pathGroupings },
    })
    expect(res).toEqual([
      link('1_/1', '2_/3*', 1, 3 * ONE_MINUTE),
      link(`1_${evil}`, '2_/2/bar/aaa', 1, ONE_MINUTE),
      link('2_/2/bar/aaa', '3_/3*', 1, 2 * ONE_MINUTE),
    ])
  })

  it('persons dropping off, reaching and passing a step (test_person_dropoffs)', async () => {
    const events: Ev[] = []
    const steps = ['step one', 'step two', 'step three', 'step four']
    const times = ['00:00:00', '00:04:00', '00:05:00', '00:06:00']
    const groups: [number, number, number][] = [
      [0, 5, 2],
      [5, 15, 3],
      [15, 35, 4],
    ]
    for (const [from, to, n] of groups) {
      for (let i = from; i < to; i++) {
        for (let k = 0; k < n; k++) events.push(custom(`user_${i}`, steps[k]!, `2021-05-01 ${times[k]}`))
      }
    }
    const { people } = await projectWith('dropoffs', events)
    const q = {
      pathsFilter: { includeEventTypes: ['custom_event'] },
      dateRange: { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' },
    }
    const count = async (keys: Record<string, string>) => (await people(q, keys)).length
    expect(await count({ pathDropoffKey: '2_step two' })).toBe(5)
    expect(await count({ pathEndKey: '2_step two' })).toBe(35)
    expect(await count({ pathStartKey: '2_step two' })).toBe(30)
    expect(await count({ pathDropoffKey: '3_step three' })).toBe(10)
    expect(await count({ pathEndKey: '3_step three' })).toBe(30)
    expect(await count({ pathStartKey: '3_step three' })).toBe(20)
    expect(await count({ pathDropoffKey: '4_step four' })).toBe(20)
    expect(await count({ pathEndKey: '4_step four' })).toBe(20)
    expect(await count({ pathStartKey: '4_step four' })).toBe(0)
  })

  it('edges cut off from every start are dropped (test_start_dropping_orphaned_edges)', async () => {
    const { run } = await projectWith('orphans', orphanEvents())
    // the limit keeps 3_/x -> 4_/about (2) and 1_/2 -> 2_/a (1) but not 2_/a -> 3_/x: 3_/x dangles
    expect(await run({ dateRange: may2021, pathsFilter: { startPoint: '/2', edgeLimit: 6 } })).toEqual([
      ...heavy,
      link('1_/2', '2_/a', 1, 30_000),
    ])
  })

  it('merged persons are one path (test_person_on_events_v2)', async () => {
    const pages = ['/1', '/2/', '/3']
    const ts = ['2012-01-01 03:21:34', '2012-01-01 03:22:34', '2012-01-01 03:24:34']
    const { run } = await projectWith(
      'merged',
      ['p1', 'p2'].flatMap((p) => pages.map((u, i) => at(p, u, ts[i]!))),
      [['p1', 'p2']],
    )
    const pathsFilter = { includeEventTypes: ['$pageview', '$screen', 'custom_event'], stepLimit: 4 }
    expect(await run({ dateRange: { date_from: '2012-01-01', date_to: '2012-02-01' }, pathsFilter })).toEqual(
      [link('1_/1', '2_/2', 1, ONE_MINUTE), link('2_/2', '3_/3', 1, 2 * ONE_MINUTE)],
    )
  })

  it('drop-off actors are the sessions ending at the key (test_recording_for_dropoff)', async () => {
    const { people } = await projectWith('dropoff keys', [
      at('p1', '/1', '2012-01-01 03:21:34'),
      at('p1', '/2', '2012-01-01 03:22:34'),
      at('p1', '/3', '2012-01-01 03:23:34'),
    ])
    const q = {
      dateRange: { date_from: '2012-01-01', date_to: '2012-01-02' },
      pathsFilter: { includeEventTypes: ['$pageview'] },
    }
    expect(await people(q, { pathDropoffKey: '2_/2' })).toEqual([])
    expect(await people(q, { pathDropoffKey: '3_/3' })).toEqual(['p1'])
    expect(await people(q, { pathEndKey: '2_/2' })).toEqual(['p1'])
  })
})

describe('PathsQuery path cleaning (ee/clickhouse/queries/test/test_paths.py)', () => {
  it('local cleaning rules, in order (test_path_by_grouping_replacement_multiple)', async () => {
    const events = [1, 2, 3].flatMap((i) => [
      at(`user_${i}`, 'test.com/step1', '2021-05-01 00:00:00'),
      at(`user_${i}`, 'test.com/step2/5', '2021-05-01 00:01:00'),
      at(`user_${i}`, `test.com/step2/5?key=value${i}`, '2021-05-01 00:02:00'),
    ])
    const { run } = await projectWith('cleaning multiple', events)
    // PostHog's third variant: the team's rules overridden by the query's own, in this order
    const localPathCleaningFilters = [
      { alias: '?<param>', regex: '\\?(.*)' },
      { alias: '/<id>', regex: '/\\d+(/|\\?)?' },
    ]
    const res = await run({
      dateRange: { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' },
      pathsFilter: { includeEventTypes: ['$pageview'], pathReplacements: false, localPathCleaningFilters },
    })
    expect(res).toEqual([
      link('1_test.com/step1', '2_test.com/step2/<id>', 3, ONE_MINUTE),
      link('2_test.com/step2/<id>', '3_test.com/step2/<id><param>', 3, ONE_MINUTE),
    ])
  })
})

describe("PathsQuery with the project's cleaning rules (settings path_cleaning_filters)", () => {
  const step2Events = [1, 2, 3].flatMap((i) => [
    at(`user_${i}`, 'test.com/step1', '2021-05-01 00:00:00'),
    at(`user_${i}`, 'test.com/step2/5', '2021-05-01 00:01:00'),
    at(`user_${i}`, `test.com/step2/5?key=value${i}`, '2021-05-01 00:02:00'),
  ])
  const dateRange = { date_from: '2021-05-01 00:00:00', date_to: '2021-05-07 00:00:00' }
  const correct = [
    link('1_test.com/step1', '2_test.com/step2/<id>', 3, ONE_MINUTE),
    link('2_test.com/step2/<id>', '3_test.com/step2/<id><param>', 3, ONE_MINUTE),
  ]
  const param = { alias: '?<param>', regex: '\\?(.*)' }
  const id = { alias: '/<id>', regex: '/\\d+(/|\\?)?' }

  it("the project's rules apply with pathReplacements, then the query's (test_path_by_grouping_replacement_multiple)", async () => {
    const { run, patch } = await projectWith('team cleaning', step2Events)
    const set = await patch({ path_cleaning_filters: [param, id] })
    expect(set.status, set.text).toBe(200)
    expect(set.body.path_cleaning_filters).toEqual([param, id])
    const pathsFilter = { includeEventTypes: ['$pageview'], pathReplacements: true }
    expect(await run({ dateRange, pathsFilter })).toEqual(correct)
    // without pathReplacements the project's rules do not apply
    expect(await run({ dateRange, pathsFilter: { includeEventTypes: ['$pageview'] } })).not.toEqual(correct)
    // the project's first rule, then the query's own
    expect((await patch({ path_cleaning_filters: [param] })).status).toBe(200)
    expect(await run({ dateRange, pathsFilter: { ...pathsFilter, localPathCleaningFilters: [id] } })).toEqual(
      correct,
    )
  })

  it('refuses a rule RE2 cannot run, naming it; null clears the rules', async () => {
    const { run, patch } = await projectWith('team cleaning bad', step2Events)
    const bad = await patch({ path_cleaning_filters: [param, { alias: 'x', regex: '(unclosed' }] })
    expect(bad.status, bad.text).toBe(400)
    expect(bad.body.attr).toBe('path_cleaning_filters.1.regex')
    const tooMany = await patch({ path_cleaning_filters: Array.from({ length: 51 }, () => param) })
    expect(tooMany.status, tooMany.text).toBe(400)
    const cleared = await patch({ path_cleaning_filters: null })
    expect(cleared.body.path_cleaning_filters).toEqual([])
    expect(
      await run({ dateRange, pathsFilter: { includeEventTypes: ['$pageview'], pathReplacements: true } }),
    ).not.toEqual(correct)
  })
})

describe('PathsQuery (worked out by hand)', () => {
  it('edge weight bounds, then the edges left without a start are dropped', async () => {
    const { run } = await projectWith('weights', orphanEvents())
    const q = (f: object) => run({ dateRange: may2021, pathsFilter: { startPoint: '/2', ...f } })
    // at least 2: the 5s and 3_/x -> 4_/about, which has no edge into it left
    expect(await q({ minEdgeWeight: 2 })).toEqual(heavy)
    // at most 1: the two detours of r_2 and r_3, 30 s a step
    expect(await q({ maxEdgeWeight: 1 })).toEqual([
      link('1_/2', '2_/a', 1, 30_000),
      link('1_/2', '2_/b', 1, 30_000),
      link('2_/a', '3_/x', 1, 30_000),
      link('2_/b', '3_/x', 1, 30_000),
    ])
    // 0 is no bound, as in PostHog
    expect(links(await q({ minEdgeWeight: 0, maxEdgeWeight: 0 }))).toHaveLength(9)
  })

  it("the query's cleaning rules apply in order, before repeats are merged", async () => {
    const { run } = await projectWith('cleaning', [
      at('p1', '/merchant/123/dashboard', '2024-05-01 10:00:00'),
      at('p1', '/merchant/456/dashboard', '2024-05-01 10:01:00'),
      at('p1', '/home?x=1', '2024-05-01 10:03:00'),
      at('p2', '/merchant/7/dashboard', '2024-05-01 10:00:00'),
      at('p2', '/home?y=2', '2024-05-01 10:04:00'),
    ])
    const dateRange = { date_from: '2024-05-01', date_to: '2024-05-02' }
    const localPathCleaningFilters = [
      { regex: '/merchant/\\d+/', alias: '/merchant/:id/' },
      { regex: '\\?.*', alias: '' },
      // sees the first rule's alias
      { regex: '/:id/dashboard$', alias: '/:id/board' },
    ]
    // p1: the two dashboards are one item at 10:01, then home 2 min later; p2: 4 min
    expect(await run({ dateRange, pathsFilter: { localPathCleaningFilters } })).toEqual([
      link('1_/merchant/:id/board', '2_/home', 2, 3 * ONE_MINUTE),
    ])
    // the project has no cleaning rules of its own: pathReplacements changes nothing
    expect(await run({ dateRange, pathsFilter: { pathReplacements: true } })).toHaveLength(3)
  })

  it('400s: group paths, bad HogQL, bad limits', async () => {
    const { post } = await projectWith('errors', [])
    const bad = async (query: object) => {
      const r = await post({ kind: 'PathsQuery', ...query })
      expect(r.status, r.text).toBe(400)
      return r.text
    }
    expect(await bad({ aggregation_group_type_index: 0 })).toMatch(/group/i)
    await bad({ pathsFilter: { includeEventTypes: ['hogql'], pathsHogQLExpression: 'properties.' } })
    await bad({ pathsFilter: { stepLimit: -1 } })
    await bad({ pathsFilter: { edgeLimit: 'ten' } })
  })
})

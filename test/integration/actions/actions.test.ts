import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { clickhouse, createTestProject } from '../../harness/index.ts'
import { type Env, managementEnv } from '../../harness/management.ts'
import { elementsToString } from '../../unit/actions/chain.ts'
import { ago, People } from '../cohorts/helpers.ts'

// Actions through the API and ClickHouse: PostHog's action-matching cases (posthog/models/test/
// test_event_model.py TestFilterByActions, posthog/hogql/functions/test/test_action.py), the
// refusals, and actions as series of every insight kind.

let env: Env
let project: Project
const ch = clickhouse()
const paths = () => ({
  actions: `/api/projects/${project.id}/actions/`,
  query: `/api/projects/${project.id}/query/`,
})

async function action(name: string, steps: unknown[]): Promise<number> {
  const r = await env.call('POST', paths().actions, { name, steps })
  expect(r.status, JSON.stringify(r.body)).toBe(201)
  return r.body.id as number
}

async function hogql(query: string): Promise<unknown[][]> {
  const r = await env.call('POST', paths().query, {
    query: { kind: 'HogQLQuery', query },
    refresh: 'force_blocking',
  })
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body.results
}

/** The `case` property of the events the action matches, sorted. */
const matched = async (id: number) =>
  (await hogql(`SELECT properties.case FROM events WHERE matchesAction(${id}) ORDER BY properties.case`)).map(
    (r) => r[0],
  )

beforeAll(async () => {
  env = await managementEnv()
  project = await createTestProject('actions')
  const p = new People(ch, project.id)
  await p.person('whatever', { $browser: 'Chrome' })
  await p.person('other', {})
  const auto = (
    c: string,
    elements: Parameters<typeof elementsToString>[0],
    props: Record<string, unknown> = {},
  ) =>
    p.event('whatever', '$autocapture', ago({ hours: 2 }), { case: c, ...props }, elementsToString(elements))
  // TestFilterByActions._setup_action_selector_events
  auto('e1', [
    { tag_name: 'a', href: '/a-url', nth_child: 1, nth_of_type: 0, attr_class: ['one-class'] },
    { tag_name: 'button', nth_child: 0, nth_of_type: 0 },
    { tag_name: 'div', nth_child: 0, nth_of_type: 0 },
    { tag_name: 'section', nth_child: 0, nth_of_type: 0, attr_id: 'nested' },
  ])
  auto('e2', [
    { tag_name: 'a', nth_child: 2, nth_of_type: 0, attr_id: 'someId' },
    ...Array.from({ length: 6 }, () => ({ tag_name: 'div', nth_child: 0, nth_of_type: 0 })),
    { href: '/a-url-2', nth_child: 0, nth_of_type: 0 },
  ])
  auto('e3', [
    { tag_name: 'a', nth_child: 3, nth_of_type: 0 },
    { tag_name: 'div', nth_child: 0, nth_of_type: 0 },
  ])
  // test_filter_events_by_url
  auto('url', [{ tag_name: 'div', text: 'some_other_text', nth_child: 0, nth_of_type: 0 }], {
    $current_url: 'https://posthog.com/feedback/123',
  })
  auto('link2', [
    { tag_name: 'a', href: '/a-url-2', text: 'some_other_text', nth_child: 0, nth_of_type: 0 },
    { tag_name: 'div', text: 'some_other_text', nth_child: 0, nth_of_type: 0 },
  ])
  auto('google', [
    { tag_name: 'a', href: 'https://google.com/a-url', text: 'some_text', nth_child: 0, nth_of_type: 0 },
  ])
  p.event('whatever', '$pageview', ago({ hours: 3 }), { case: 'pv-chrome' })
  p.event('other', '$pageview', ago({ hours: 3 }), { case: 'pv-other' })
  p.event('other', 'signed up', ago({ days: 2 }), { case: 'signup' })
  await p.flush()
})

describe('action matching (PostHog TestFilterByActions)', () => {
  it('selectors: direct descendants, nth-child, ids, descendants, *', async () => {
    expect(
      await matched(
        await action('dd', [
          { event: '$autocapture', selector: 'div > div > a' },
          { event: '$autocapture', selector: 'div > a.somethingthatdoesntexist' },
        ]),
      ),
    ).toEqual(['e2'])
    expect(
      await matched(await action('nth', [{ event: '$autocapture', selector: 'div > a:nth-child(2)' }])),
    ).toEqual(['e2'])
    expect(await matched(await action('id', [{ event: '$autocapture', selector: "[id='someId']" }]))).toEqual(
      ['e2'],
    )
    expect(
      await matched(await action('nested', [{ event: '$autocapture', selector: "[id='nested'] a" }])),
    ).toEqual(['e1'])
    expect(await matched(await action('star', [{ event: '$autocapture', selector: 'div *' }]))).toEqual([
      'e1',
      'e2',
      'e3',
      'link2',
    ])
  })

  it('urls: exact, contains (with its wildcard), regex', async () => {
    const url = (u: string, m: string) =>
      action(`url ${u} ${m}`, [{ event: '$autocapture', url: u, url_matching: m }])
    expect(await matched(await url('https://posthog.com/feedback/123', 'exact'))).toEqual(['url'])
    expect(await matched(await url('123', 'contains'))).toEqual(['url'])
    expect(await matched(await url('https://posthog.com/%/123', 'contains'))).toEqual(['url'])
    expect(await matched(await url('/123$', 'regex'))).toEqual(['url'])
  })

  it('href exact and contains, text, tag and an OR of steps', async () => {
    const exact = await action('href', [
      { event: '$autocapture', href: '/a-url', selector: 'a' },
      { event: '$autocapture', href: '/a-url-2' },
    ])
    // the href is the chain's first one (PostHog's elements_chain_href): e2's outer element has /a-url-2
    expect(await matched(exact)).toEqual(['e1', 'e2', 'link2'])
    const contains = await action('href contains', [
      { event: '$autocapture', href: '/a-url', href_matching: 'contains', selector: 'a' },
    ])
    expect(await matched(contains)).toEqual(['e1', 'e2', 'google', 'link2'])
    const text = await action('text', [{ event: '$autocapture', text: 'some_text' }])
    expect(await matched(text)).toEqual(['google'])
    const tag = await action('tag', [{ event: '$autocapture', tag_name: 'section' }])
    expect(await matched(tag)).toEqual(['e1'])
  })

  it('person properties, no steps, and other events', async () => {
    expect(
      await matched(
        await action('chrome pv', [
          { event: '$pageview', properties: [{ key: '$browser', value: 'Chrome', type: 'person' }] },
        ]),
      ),
    ).toEqual(['pv-chrome'])
    expect(await matched(await action('no steps', []))).toEqual([])
    expect(await matched(await action('empty selector', [{ event: '$pageview', selector: '' }]))).toEqual([
      'pv-chrome',
      'pv-other',
    ])
  })

  it('matchesAction by name and id, and refusals (PostHog test_action.py)', async () => {
    const id = await action('signed up', [{ event: 'signed up' }])
    expect(await hogql(`SELECT properties.case FROM events WHERE matchesAction('signed up')`)).toEqual([
      ['signup'],
    ])
    expect(await hogql(`SELECT properties.case FROM events AS e WHERE matchesAction(${id})`)).toEqual([
      ['signup'],
    ])
    const missing = await env.call('POST', paths().query, {
      query: { kind: 'HogQLQuery', query: "SELECT 1 FROM events WHERE matchesAction('nope')" },
    })
    expect(missing.status).toBe(400)
    expect(missing.body.detail).toContain("Could not find an action with the name 'nope'")
  })
})

describe('the actions API', () => {
  it('lists, retrieves, updates, soft deletes and refuses DELETE', async () => {
    const id = await action('crud', [{ event: '$pageview', url: '/x', url_matching: 'contains' }])
    const got = await env.call('GET', `${paths().actions}${id}/`)
    expect(got.body).toMatchObject({
      id,
      name: 'crud',
      is_action: true,
      deleted: false,
      steps: [{ event: '$pageview', url: '/x' }],
    })
    const patched = await env.call('PATCH', `${paths().actions}${id}/`, {
      description: 'pages',
      deleted: true,
    })
    expect(patched.body).toMatchObject({ description: 'pages', deleted: true })
    expect((await env.call('GET', `${paths().actions}${id}/`)).status).toBe(404)
    expect(
      (await env.call('GET', paths().actions)).body.results.map((a: { id: number }) => a.id),
    ).not.toContain(id)
    expect((await env.call('DELETE', `${paths().actions}${id}/`)).status).toBe(405)
  })

  it('answers a write once queries see it: an action is matched by the very next request', async () => {
    for (let i = 0; i < 10; i++) {
      const id = await action(`at once ${i}`, [
        { event: '$autocapture', url: '/feedback/123', url_matching: 'contains' },
      ])
      expect(await matched(id)).toEqual(['url'])
      const renamed = await env.call('PATCH', `${paths().actions}${id}/`, { name: `renamed ${i}` })
      expect(renamed.status).toBe(200)
      const rows = await hogql(`SELECT count() FROM events WHERE matchesAction('renamed ${i}')`)
      expect(Number(rows[0]![0])).toBe(1)
    }
  })

  it('refuses a duplicate name, a bad selector, a bad regex and a missing cohort, naming the field', async () => {
    await action('unique name', [{ event: 'x' }])
    const cases: [unknown, string, string][] = [
      [{ name: 'unique name', steps: [] }, 'name', 'This project already has an action with this name'],
      [
        { name: 'bad selector', steps: [{ event: '$autocapture', selector: 'a:hover' }] },
        'steps.0.selector',
        'hover',
      ],
      [
        { name: 'bad url', steps: [{ event: '$pageview', url: '(a', url_matching: 'regex' }] },
        'steps.0.url',
        'invalid regex',
      ],
      [
        { name: 'bad href', steps: [{ event: '$autocapture', href: '[', href_matching: 'regex' }] },
        'steps.0.href',
        'invalid regex',
      ],
      [
        {
          name: 'bad prop',
          steps: [
            { event: '$pageview', properties: [{ key: 'a', value: '(', operator: 'regex', type: 'event' }] },
          ],
        },
        'steps.0.properties.0.value',
        'invalid regex',
      ],
      [
        {
          name: 'bad cohort',
          steps: [{ event: '$pageview', properties: [{ key: 'id', value: 987654321, type: 'cohort' }] }],
        },
        'steps.0.properties.0.value',
        'does not exist',
      ],
    ]
    for (const [body, attr, detail] of cases) {
      const r = await env.call('POST', paths().actions, body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.attr).toBe(attr)
      expect(String(r.body.detail)).toContain(detail)
    }
  })
})

describe('actions as series', () => {
  it('in trends, stickiness, lifecycle, retention and as a funnel step', async () => {
    const pv = await action('any pageview', [{ event: '$pageview' }])
    const su = await action('sign up', [{ event: 'signed up' }])
    const run = async (query: Record<string, unknown>) => {
      const r = await env.call('POST', paths().query, { query, refresh: 'force_blocking' })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return r.body.results
    }
    const trends = await run({
      kind: 'TrendsQuery',
      series: [{ kind: 'ActionsNode', id: pv }],
      dateRange: { date_from: '-7d' },
      trendsFilter: { display: 'ActionsBarValue' },
    })
    expect(trends[0]).toMatchObject({
      aggregated_value: 2,
      label: 'any pageview',
      action: { id: pv, type: 'actions' },
    })
    const stickiness = await run({
      kind: 'StickinessQuery',
      series: [{ kind: 'ActionsNode', id: pv }],
      dateRange: { date_from: '-7d' },
    })
    expect(stickiness[0].count).toBe(2)
    const lifecycle = await run({
      kind: 'LifecycleQuery',
      series: [{ kind: 'ActionsNode', id: pv }],
      dateRange: { date_from: '-7d' },
    })
    // both persons (created long before) come back in the range
    const active = lifecycle.filter((r: { status: string }) => r.status !== 'dormant')
    expect(active.reduce((n: number, r: { count: number }) => n + r.count, 0)).toBe(2)
    const funnel = await run({
      kind: 'FunnelsQuery',
      series: [
        { kind: 'ActionsNode', id: su },
        { kind: 'ActionsNode', id: pv },
      ],
      dateRange: { date_from: '-7d' },
    })
    expect(
      funnel.map((s: { count: number; name: string; type: string }) => [s.name, s.count, s.type]),
    ).toEqual([
      ['sign up', 1, 'actions'],
      ['any pageview', 1, 'actions'],
    ])
    const retention = await run({
      kind: 'RetentionQuery',
      retentionFilter: {
        period: 'Day',
        totalIntervals: 3,
        targetEntity: { id: pv, type: 'actions' },
        returningEntity: { id: pv, type: 'actions' },
      },
    })
    // both persons first did it on the same day (whichever it is at the time the test runs)
    expect(
      retention.reduce((n: number, c: { values: { count: number }[] }) => n + c.values[0]!.count, 0),
    ).toBe(2)
  })
})

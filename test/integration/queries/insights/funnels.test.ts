// FunnelsQuery through POST /query/ on real ClickHouse. The data set is in
// ../persons/dataset.ts; each expected value below is derived by hand from it:
//   A signup 10:00, activate 10:10, pay 10:40             B signup 10:00, $pageview 10:01, activate 10:05
//   C activate 09:00, signup 10:00, pay 10:30             D signup 03-01 10:00, activate 03-03 11:00 (49 h)
//   E signup 10:00, cancel 10:02, activate 10:05, pay 10:06
//   F signup 10:00 (stamped with OLD_F, merged into F), activate 10:20
//   PL1 (personless) signup 10:00
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../../src/accounts/documents.ts'
import { funnelPersonsSQL } from '../../../../src/queries/insights/funnels/sql.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../../harness/index.ts'
import { insertEvents } from '../../hogql/fixtures.ts'
import { insertFunnelDataset } from '../../persons/dataset.ts'

let project: Project
let other: Project
let call: ReturnType<typeof api>
let burrowUrl: string

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  burrowUrl = burrow.url
  project = await createTestProject('funnels')
  other = await createTestProject('funnels other')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id, other.id]))
  await insertFunnelDataset(clickhouse(), project.id)
})

const step = (event: string) => ({ kind: 'EventsNode', event })
const funnel = (funnelsFilter: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  kind: 'FunnelsQuery',
  series: [step('signup'), step('activate'), step('pay')],
  dateRange: { date_from: '2024-03-01', date_to: '2024-03-03' },
  funnelsFilter,
  ...extra,
})

async function run(query: unknown, projectId = project.id) {
  const r = await call('POST', `/api/environments/${projectId}/query/`, { query, refresh: 'force_blocking' })
  expect(r.status, r.text).toBe(200)
  return r.body.results
}

const counts = (steps: { count: number }[]) => steps.map((s) => s.count)

/** An event of `person` (distinct id `d-<person>`) in project `team`, on 2024-03-01 at `time`. */
const eventAt = (team: number, person: string, event: string, time: string, properties = {}) => ({
  team,
  uuid: randomUUID(),
  event,
  distinctId: `d-${person}`,
  personId: person,
  timestamp: `2024-03-01 ${time}`,
  properties,
})

describe('FunnelsQuery', () => {
  it('ordered: counts, merged and personless persons, conversion times and the step shape', async () => {
    const res = await run(funnel())
    // reached: A 3, B 2, C 1, D 2, E 3, F 2 (merged), PL1 1
    expect(counts(res)).toEqual([7, 5, 2])
    expect(res[0]).toEqual({
      action_id: 'signup',
      name: 'signup',
      custom_name: null,
      order: 0,
      people: [],
      count: 7,
      type: 'events',
      average_conversion_time: null,
      median_conversion_time: null,
    })
    // into activate: A 600, B 300, D 176400, E 300, F 1200
    expect(res[1].average_conversion_time).toBe(35760)
    expect(res[1].median_conversion_time).toBe(600)
    // into pay: A 1800, E 60
    expect(res[2].average_conversion_time).toBe(930)
    expect(res[2].median_conversion_time).toBe(930)
  })

  it('strict: any other event in between ends the funnel', async () => {
    // A 3, B 1 ($pageview between), C 1, D 2, E 1 (cancel between), F 2, PL1 1
    expect(counts(await run(funnel({ funnelOrderType: 'strict' })))).toEqual([7, 3, 1])
  })

  it('unordered: steps in any order within the window', async () => {
    // A 3, B 2, C 3 (activate, signup, pay), D 2, E 3, F 2, PL1 1
    const res = await run(funnel({ funnelOrderType: 'unordered' }))
    expect(counts(res)).toEqual([7, 6, 3])
    expect(res.map((s: { name: string }) => s.name)).toEqual([
      'Completed 1 step',
      'Completed 2 steps',
      'Completed 3 steps',
    ])
    // C: 09:00 -> 10:00 -> 10:30 gives 3600 then 1800; A 600/1800; E 300/60
    expect(res[2].average_conversion_time).toBe((1800 + 1800 + 60) / 3)
  })

  it('conversion window: one day leaves D at the first step', async () => {
    const res = await run(funnel({ funnelWindowInterval: 1, funnelWindowIntervalUnit: 'day' }))
    expect(counts(res)).toEqual([7, 4, 2])
    // 49 hours fit in 3 days
    expect(counts(await run(funnel({ funnelWindowInterval: 3, funnelWindowIntervalUnit: 'day' })))).toEqual([
      7, 5, 2,
    ])
    // 20 minutes: D is out, F (exactly 20 min) stays, A needs 40 min for pay so only E pays
    expect(
      counts(await run(funnel({ funnelWindowInterval: 20, funnelWindowIntervalUnit: 'minute' }))),
    ).toEqual([7, 4, 1])
  })

  it('exclusions: a cancel between signup and activate removes E from the funnel', async () => {
    const exclusions = [
      { kind: 'FunnelExclusionEventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 },
    ]
    const res = await run(funnel({ exclusions }))
    expect(counts(res)).toEqual([6, 4, 1])
    // an exclusion range the cancel is not in changes nothing (E's cancel is before activate)
    const later = [{ kind: 'FunnelExclusionEventsNode', event: 'cancel', funnelFromStep: 1, funnelToStep: 2 }]
    expect(counts(await run(funnel({ exclusions: later })))).toEqual([7, 5, 2])
  })

  it('breakdown by an event property (first touch) with a limit and "Other"', async () => {
    const q = funnel({}, { breakdownFilter: { breakdown: 'plan', breakdown_type: 'event' } })
    const res = await run(q)
    // pro: A 3, E 3, F 2 -> [3, 3, 2]; free: B 2, D 2, PL1 1 -> [3, 2, 0]; '' : C (first event has no plan) -> [1, 0, 0]
    expect(
      res.map((steps: { breakdown_value: string; count: number }[]) => [
        steps[0]!.breakdown_value,
        counts(steps),
      ]),
    ).toEqual([
      ['pro', [3, 3, 2]],
      ['free', [3, 2, 0]],
      ['', [1, 0, 0]],
    ])
    expect(res[0][2]).toMatchObject({
      breakdown: 'pro',
      breakdown_value: 'pro',
      average_conversion_time: 930,
    })
    const limited = await run({
      ...q,
      breakdownFilter: { breakdown: 'plan', breakdown_type: 'event', breakdown_limit: 1 },
    })
    expect(
      limited.map((steps: { breakdown_value: string; count: number }[]) => [
        steps[0]!.breakdown_value,
        counts(steps),
      ]),
    ).toEqual([
      ['pro', [3, 3, 2]],
      ['Other', [4, 2, 0]],
    ])
  })

  it('event property filters on a step', async () => {
    const q = funnel()
    q.series[0] = {
      ...step('signup'),
      properties: [{ key: 'plan', value: 'pro', operator: 'exact', type: 'event' }],
    } as never
    // only signups with plan=pro start: A 3, C 1, E 3, F 2
    expect(counts(await run(q))).toEqual([4, 3, 2])
  })

  it('another project sees none of these events', async () => {
    expect(await run(funnel(), other.id)).toEqual([])
  })

  it('rejects actions and bad exclusions with 400', async () => {
    const r = await call('POST', `/api/environments/${project.id}/query/`, {
      query: funnel({ exclusions: [{ kind: 'EventsNode', event: 'x', funnelFromStep: 1, funnelToStep: 1 }] }),
    })
    expect(r.status).toBe(400)
  })

  // Steps are bits of one UInt64 per event (funnels/sql.ts): more than 52 steps are refused by name.
  it('runs a funnel of 20 steps and refuses 53 with a 400 that names the limit', async () => {
    const steps = (n: number) => [step('signup'), ...Array.from({ length: n - 1 }, () => step('activate'))]
    const long = await run(funnel({}, { series: steps(20) }))
    expect(long).toHaveLength(20)
    expect(long[0].count).toBeGreaterThan(0)
    const r = await call('POST', `/api/environments/${project.id}/query/`, {
      query: funnel({}, { series: steps(53) }),
      refresh: 'force_blocking',
    })
    expect(r.status).toBe(400)
    expect(r.text).toContain('at most 52 steps')
  })
})

// The shape that failed at bench scale ("Arrays passed to arrayFilter must have equal size"): a person
// whose only matching events are of a step after the second, so none of them can start a chain or
// follow a start. Such a person never enters an ordered or strict funnel, and enters an unordered
// one with one step completed.
describe('FunnelsQuery: a person with events of later steps only', () => {
  let own: Project
  beforeAll(async () => {
    own = await createTestProject('funnels later steps only')
    call = api(burrowUrl, await createTestKey(['query:read'], [project.id, other.id, own.id]))
    const ev = (person: string, event: string, time: string, plan = 'pro') =>
      eventAt(own.id, person, event, time, { plan })
    const X = '000000aa-0000-4000-8000-000000000000'
    const Y = '000000bb-0000-4000-8000-000000000000'
    await insertEvents(clickhouse(), [
      // X: two payments, nothing else
      ev(X, 'pay', '10:00:00'),
      ev(X, 'pay', '10:05:00', 'free'),
      // Y: signup then activate
      ev(Y, 'signup', '10:00:00'),
      ev(Y, 'activate', '10:01:00'),
    ])
  })

  it.each([
    ['ordered', [1, 1, 0]],
    ['strict', [1, 1, 0]],
    // X's payment completes one step of an unordered funnel
    ['unordered', [2, 1, 0]],
  ])('%s', async (funnelOrderType, expected) => {
    expect(counts(await run(funnel({ funnelOrderType }), own.id))).toEqual(expected)
  })

  it('with a breakdown attributed to all events', async () => {
    const res = await run(
      funnel({ breakdownAttributionType: 'all_events' }, { breakdownFilter: { breakdown: 'plan' } }),
      own.id,
    )
    // only Y (plan pro) enters
    expect(res.map((steps: { count: number }[]) => counts(steps))).toEqual([[1, 1, 0]])
  })

  // Each event carries the steps it matches as one mask: an event matching several steps still
  // counts for one step of a chain, each next step being a later event (PostHog's repeated steps).
  it('an event that matches several steps counts for one of them', async () => {
    const repeated = { ...funnel(), series: [step('pay'), step('pay')] }
    // X: pay 10:00 then pay 10:05 -> both steps, 300 s apart; Y has no pay
    const res = await run(repeated, own.id)
    expect(counts(res)).toEqual([1, 1])
    expect(res[1].average_conversion_time).toBe(300)
    // steps 1 and 3 match the same events (non-adjacent bits): X never signs up, so stops at step 1
    const gap = { ...funnel(), series: [step('pay'), step('signup'), step('pay')] }
    expect(counts(await run(gap, own.id))).toEqual([1, 0, 0])
  })
})

// Chains that start in the same second. PostHog's UDF keeps, at each step, the chain that got there
// first against another with the same start second, so of Z's two complete chains
//   signup 10:00:00 (1st) -> signup 10:00:00 (2nd) -> pay 10:01:00   times 0, 60
//   signup 10:00:00 (2nd) -> signup 10:01:00       -> pay 10:01:00   times 60, 0
// the first counts. Conversion times of 0 are left out of the averages.
describe('FunnelsQuery: chains starting in the same second', () => {
  it('the chain that reached each step first counts', async () => {
    const own = await createTestProject('funnels same second')
    call = api(burrowUrl, await createTestKey(['query:read'], [project.id, other.id, own.id]))
    const Z = '000000cc-0000-4000-8000-000000000000'
    const ev = (event: string, time: string) => ({
      team: own.id,
      uuid: randomUUID(),
      event,
      distinctId: 'd-z',
      personId: Z,
      timestamp: `2024-03-01 ${time}`,
      properties: {},
    })
    await insertEvents(clickhouse(), [
      ev('signup', '10:00:00'),
      ev('signup', '10:00:00'),
      ev('signup', '10:01:00'),
      ev('pay', '10:01:00'),
    ])
    const res = await run({ ...funnel(), series: [step('signup'), step('signup'), step('pay')] }, own.id)
    expect(counts(res)).toEqual([1, 1, 1])
    expect(res[1].average_conversion_time).toBeNull()
    expect(res[2].average_conversion_time).toBe(60)
  })
})

// PostHog's UDF keeps the first chain to reach each new furthest step, so a person who never gets
// past step 1 is timed from their first step-1 event (correlation's window for a drop-off starts
// there), unless an exclusion removed that chain: then the next start free of it takes its place.
describe('FunnelsQuery: a person who stops at the first step', () => {
  const at = (time: string) => Date.parse(`2024-03-01T${time}Z`) / 1000
  let own: Project
  beforeAll(async () => {
    own = await createTestProject('funnels first step only')
    const ev = (person: string, event: string, time: string) => eventAt(own.id, person, event, time)
    const U = '000000dd-0000-4000-8000-000000000000'
    const V = '000000ee-0000-4000-8000-000000000000'
    await insertEvents(clickhouse(), [
      // U: two signups, never activates
      ev(U, 'signup', '10:00:00'),
      ev(U, 'signup', '10:30:00'),
      // V: signup, cancel, signup again, never activates
      ev(V, 'signup', '11:00:00'),
      ev(V, 'cancel', '11:05:00'),
      ev(V, 'signup', '11:30:00'),
    ])
  })

  async function persons(query: Record<string, unknown>) {
    const { sql } = await funnelPersonsSQL(query as never, { teamId: own.id, timezone: 'UTC' })
    const rs = await clickhouse().query({
      query: `SELECT toString(aggregation_target) AS person, step_reached, first_ts FROM (${sql}) ORDER BY person`,
      format: 'JSONEachRow',
    })
    return (await rs.json<Record<string, unknown>>()).map((r) => [
      r.person,
      Number(r.step_reached),
      Number(r.first_ts),
    ])
  }

  it.each(['ordered', 'strict'])('%s: timed from the first signup', async (funnelOrderType) => {
    expect(await persons(funnel({ funnelOrderType }))).toEqual([
      ['000000dd-0000-4000-8000-000000000000', 0, at('10:00:00')],
      ['000000ee-0000-4000-8000-000000000000', 0, at('11:00:00')],
    ])
  })

  it('with the first chain excluded, from the signup after the exclusion', async () => {
    const exclusions = [{ kind: 'EventsNode', event: 'cancel', funnelFromStep: 0, funnelToStep: 1 }]
    expect(await persons(funnel({ exclusions }))).toEqual([
      ['000000dd-0000-4000-8000-000000000000', 0, at('10:00:00')],
      ['000000ee-0000-4000-8000-000000000000', 0, at('11:30:00')],
    ])
  })
})

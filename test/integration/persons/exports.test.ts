// Person exports (spec "Person analytics") with PostHog's legacy parameters, JSON and CSV.
// Data: dataset.ts (see funnels.test.ts for each person's events). Expected sets worked out by hand.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertFunnelDataset, P } from './dataset.ts'
import { insertDistinctIds, insertEvents, insertPersons } from '../hogql/fixtures.ts'

let project: Project
let other: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('exports')
  other = await createTestProject('exports other')
  call = api(burrow.url, await createTestKey(['person:read', 'query:read'], [project.id, other.id]))
  await insertFunnelDataset(clickhouse(), project.id)
})

const url = (path: string, params: Record<string, unknown>, id = project.id) => {
  const qs = new URLSearchParams(
    Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]),
  )
  return `/api/environments/${id}${path}?${qs}`
}
const people = (body: { results: [{ people: { id: string }[] }] }) =>
  body.results[0].people.map((p) => p.id).sort()

describe('GET /persons/trends/', () => {
  it('JSON: the persons who did the event in the interval, in PostHog legacy shape', async () => {
    const r = await call(
      'GET',
      url('/persons/trends/', {
        entity_id: 'activate',
        entity_type: 'events',
        date_from: '2024-03-01',
        interval: 'day',
      }),
    )
    expect(r.status, r.text).toBe(200)
    expect(people(r.body)).toEqual([P.A, P.B, P.C, P.E, P.F].sort())
    expect(r.body.results[0].count).toBe(5)
    expect(r.body.next).toBeNull()
    const page = await call(
      'GET',
      url('/persons/trends/', { entity_id: 'activate', date_from: '2024-03-01', limit: '2' }),
    )
    expect(page.body.results[0].count).toBe(2)
    expect(page.body.next).toContain('offset=2')
  })

  it('CSV: header row, quoted JSON properties, one line per person', async () => {
    const r = await call(
      'GET',
      url('/persons/trends/', { entity_id: 'pay', date_from: '2024-03-01', format: 'csv' }),
    )
    expect(r.status).toBe(200)
    expect(r.headers.get('content-type')).toContain('text/csv')
    const lines = r.text.split('\r\n')
    expect(lines[0]).toBe('id,uuid,name,distinct_ids,created_at,is_identified,properties')
    // pay on 03-01: A, C, E; newest first: E, C, A
    expect(lines.slice(1)).toEqual([
      `${P.E},${P.E},erin@example.com,erin,2024-02-05T08:00:00.250Z,true,"{""email"":""erin@example.com"",""rank"":5,""plan"":""pro""}"`,
      `${P.C},${P.C},carol@example.com,carol,2024-02-03T08:00:00.250Z,true,"{""email"":""carol@example.com"",""rank"":3,""plan"":""pro""}"`,
      `${P.A},${P.A},alice@example.com,alice,2024-02-01T08:00:00.250Z,true,"{""email"":""alice@example.com"",""rank"":1,""plan"":""pro""}"`,
      '',
    ])
    // F's two ids share one field, quoted because of the comma
    const f = await call(
      'GET',
      url('/persons/trends/', { entity_id: 'activate', date_from: '2024-03-01', format: 'csv' }),
    )
    expect(f.text).toContain(`${P.F},${P.F},frank@example.com,"frank, frank-anon",`)
  })

  it('breakdown_value narrows to one breakdown; another project sees nobody', async () => {
    const r = await call(
      'GET',
      url('/persons/trends/', {
        entity_id: 'signup',
        date_from: '2024-03-01',
        breakdown: 'plan',
        breakdown_value: 'free',
      }),
    )
    // signup with plan=free: B, D (PL1 is personless)
    expect(people(r.body)).toEqual([P.B, P.D].sort())
    const o = await call(
      'GET',
      url('/persons/trends/', { entity_id: 'signup', date_from: '2024-03-01' }, other.id),
    )
    expect(o.body.results[0].count).toBe(0)
  })

  it('400 without the point', async () => {
    expect((await call('GET', url('/persons/trends/', { entity_id: 'signup' }))).status).toBe(400)
  })
})

describe('GET /persons/lifecycle/ and /persons/stickiness/', () => {
  it('lifecycle statuses of 03-01 and 03-02 for signup', async () => {
    const q = (lifecycle_type: string, target_date: string) =>
      call(
        'GET',
        url('/persons/lifecycle/', { entity_id: 'signup', target_date, lifecycle_type, interval: 'day' }),
      )
    // everyone signed up on 03-01 and was created in February: resurrecting, not new
    expect(people((await q('resurrecting', '2024-03-01')).body)).toEqual(
      [P.A, P.B, P.C, P.D, P.E, P.F].sort(),
    )
    expect(people((await q('new', '2024-03-01')).body)).toEqual([])
    expect(people((await q('dormant', '2024-03-02')).body)).toEqual([P.A, P.B, P.C, P.D, P.E, P.F].sort())
    expect((await q('sleepy', '2024-03-02')).status).toBe(400)
  })

  it('stickiness: persons active on exactly N days of the range', async () => {
    const q = (days: number) =>
      call(
        'GET',
        url('/persons/stickiness/', {
          entity_id: 'activate',
          stickiness_days: String(days),
          date_from: '2024-03-01',
          date_to: '2024-03-03',
        }),
      )
    expect(people((await q(1)).body)).toEqual([P.A, P.B, P.C, P.D, P.E, P.F].sort())
    expect(people((await q(2)).body)).toEqual([])
  })
})

describe('/persons/funnel/correlation/', () => {
  const funnel = {
    events: [
      { id: 'signup', type: 'events', order: 0 },
      { id: 'pay', type: 'events', order: 1 },
    ],
    date_from: '2024-03-01',
    date_to: '2024-03-03',
    funnel_window_days: '14',
  }
  // signup -> pay: A, C, E convert; B, D, F, PL1 do not. activate inside the window: A, E (converted),
  // B, D, F (not); C's activate is before its signup.
  it('GET: persons who did the event and converted, or not', async () => {
    const entity = { id: 'activate', type: 'events' }
    const yes = await call(
      'GET',
      url('/persons/funnel/correlation/', {
        ...funnel,
        funnel_correlation_person_entity: entity,
        funnel_correlation_person_converted: 'TRUE',
      }),
    )
    expect(yes.status, yes.text).toBe(200)
    expect(people(yes.body)).toEqual([P.A, P.E].sort())
    const no = await call(
      'GET',
      url('/persons/funnel/correlation/', {
        ...funnel,
        funnel_correlation_person_entity: entity,
        funnel_correlation_person_converted: 'false',
      }),
    )
    expect(people(no.body)).toEqual([P.B, P.D, P.F].sort())
  })

  it('POST with body properties filters the funnel', async () => {
    const r = await call('POST', url('/persons/funnel/correlation/', {}), {
      ...funnel,
      funnel_correlation_person_entity: { id: 'activate', type: 'events' },
      funnel_correlation_person_converted: 'false',
      properties: [{ key: 'plan', value: 'pro', type: 'person' }],
    })
    expect(r.status, r.text).toBe(200)
    // persons with plan=pro are A, C, E, who all convert
    expect(people(r.body)).toEqual([])
  })

  it('FunnelCorrelationQuery ranks events by odds ratio', async () => {
    const query = {
      kind: 'FunnelCorrelationQuery',
      source: {
        kind: 'FunnelsActorsQuery',
        source: {
          kind: 'FunnelsQuery',
          series: [
            { kind: 'EventsNode', event: 'signup' },
            { kind: 'EventsNode', event: 'pay' },
          ],
          dateRange: { date_from: '2024-03-01', date_to: '2024-03-03' },
        },
      },
      funnelCorrelationType: 'events',
    }
    const r = await call('POST', `/api/environments/${project.id}/query/`, {
      query,
      refresh: 'force_blocking',
    })
    expect(r.status, r.text).toBe(200)
    // success_total 3, failure_total 4 (PL1 included)
    // cancel: 1 success, 0 failures -> (2/3)/(1/5) = 10/3; $pageview: 0/1 -> (1/4)/(2/4) = 0.5;
    // activate: 2/3 -> (3/2)/(4/2) = 0.75
    const rows = r.body.results.events.map(
      (e: {
        event: { event: string }
        odds_ratio: number
        correlation_type: string
        success_count: number
        failure_count: number
      }) => [e.event.event, e.success_count, e.failure_count, e.correlation_type],
    )
    expect(rows).toEqual([
      ['cancel', 1, 0, 'success'],
      ['$pageview', 0, 1, 'failure'],
      ['activate', 2, 3, 'failure'],
    ])
    expect(r.body.results.events[0].odds_ratio).toBeCloseTo(10 / 3, 10)
    expect(r.body.results.events[2].odds_ratio).toBeCloseTo(0.75, 10)
  })
})

describe('page bounds (issue 40)', () => {
  it('a limit over 10,000 gives pages of 10,000, and next goes on from there', async () => {
    const big = await createTestProject('exports big')
    const bigCall = api(
      (await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })).url,
      await createTestKey(['person:read', 'query:read'], [big.id]),
    )
    const n = 10_001
    const ids = Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)
    const team = big.id
    await insertPersons(
      clickhouse(),
      ids.map((id) => ({ team, id, createdAt: '2024-02-01 08:00:00', properties: {}, version: 1 })),
    )
    await insertDistinctIds(
      clickhouse(),
      ids.map((id, i) => ({ team, distinctId: `d${i}`, personId: id, version: 1 })),
    )
    await insertEvents(
      clickhouse(),
      ids.map((id, i) => ({
        team,
        uuid: crypto.randomUUID(),
        event: 'bulk',
        distinctId: `d${i}`,
        personId: id,
        timestamp: '2024-03-01 10:00:00',
        properties: {},
      })),
    )
    const first = await bigCall(
      'GET',
      url('/persons/trends/', { entity_id: 'bulk', date_from: '2024-03-01', limit: '50000' }, big.id),
    )
    expect(first.status, first.text).toBe(200)
    expect(first.body.results[0].count).toBe(10_000)
    const next = new URL(first.body.next)
    expect(next.searchParams.get('limit')).toBe('10000')
    expect(next.searchParams.get('offset')).toBe('10000')
    const rest = await bigCall('GET', `${next.pathname}${next.search}`)
    expect(rest.status, rest.text).toBe(200)
    expect(rest.body.results[0].count).toBe(1)
    expect(rest.body.next).toBeNull()
    const all = [...first.body.results[0].people, ...rest.body.results[0].people].map((p) => p.id)
    expect(new Set(all).size).toBe(n)
  })
})

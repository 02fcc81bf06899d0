// ActorsQuery over insight data points, through POST /query/ on the real ClickHouse. The funnel data set
// is ../persons/dataset.ts (see funnels.test.ts for the hand-derived funnel of each person); PL1 is
// personless (no person row), so it never appears as an actor.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../../src/accounts/documents.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../../harness/index.ts'
import { insertFunnelDataset, P } from '../../persons/dataset.ts'

let project: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('actors')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  await insertFunnelDataset(clickhouse(), project.id)
})

const funnel = {
  kind: 'FunnelsQuery',
  series: ['signup', 'activate', 'pay'].map((event) => ({ kind: 'EventsNode', event })),
  dateRange: { date_from: '2024-03-01', date_to: '2024-03-03' },
}

async function actors(source: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const query = { kind: 'ActorsQuery', source: { kind: 'InsightActorsQuery', ...source }, ...extra }
  const r = await call('POST', `/api/environments/${project.id}/query/`, { query, refresh: 'force_blocking' })
  expect(r.status, r.text).toBe(200)
  return r.body
}

const ids = (body: { results: [{ id: string }, string, string][] }) => body.results.map((r) => r[1]).sort()

describe('ActorsQuery', () => {
  it('funnel step: persons who reached step 2 (merged F included)', async () => {
    const body = await actors({ source: funnel, funnelStep: 2 })
    expect(ids(body)).toEqual([P.A, P.B, P.D, P.E, P.F].sort())
    expect(body.columns).toEqual(['person', 'id', 'created_at'])
    const f = body.results.find((r: [{ id: string }]) => r[0].id === P.F)[0]
    expect(f).toMatchObject({ uuid: P.F, name: 'frank@example.com', is_identified: true })
    expect(f.distinct_ids.sort()).toEqual(['frank', 'frank-anon'])
    expect(f.created_at).toBe('2024-02-06T08:00:00.250Z')
  })

  it('funnel drop-off: did step 1 but not step 2 (personless PL1 has no person)', async () => {
    expect(ids(await actors({ source: funnel, funnelStep: -2 }))).toEqual([P.C])
    expect(ids(await actors({ source: funnel, funnelStep: 3 }))).toEqual([P.A, P.E].sort())
  })

  it('funnel step of one breakdown value', async () => {
    const source = { ...funnel, breakdownFilter: { breakdown: 'plan', breakdown_type: 'event' } }
    expect(ids(await actors({ source, funnelStep: 2, funnelStepBreakdown: 'pro' }))).toEqual(
      [P.A, P.E, P.F].sort(),
    )
  })

  it('trends point: persons who did the event on that day', async () => {
    const source = {
      kind: 'TrendsQuery',
      series: [{ kind: 'EventsNode', event: 'activate' }],
      interval: 'day',
    }
    // activate on 03-01: A, B, C, E, F (D's is on 03-03)
    expect(ids(await actors({ source, day: '2024-03-01', series: 0 }))).toEqual(
      [P.A, P.B, P.C, P.E, P.F].sort(),
    )
    expect(ids(await actors({ source, day: '2024-03-03', series: 0 }))).toEqual([P.D])
  })

  it('pages with limit/offset and hasMore', async () => {
    const first = await actors({ source: funnel, funnelStep: 1 }, { limit: 2 })
    expect(first.results).toHaveLength(2)
    expect(first.hasMore).toBe(true)
    const rest = await actors({ source: funnel, funnelStep: 1 }, { limit: 10, offset: 2 })
    // 6 persons with rows entered the funnel (A-F); newest first
    expect(rest.results).toHaveLength(4)
  })
})

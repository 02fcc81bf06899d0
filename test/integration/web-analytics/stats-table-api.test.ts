// WebStatsTableQuery through POST /query/ (projects and environments; the compile worker knows the
// kind too): PostHog's response body (results, columns, types, hasMore, limit, offset), the path
// cleaning rules a project keeps (PATCH), and bad input answered with a 400 naming the field.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertSessionEvents } from '../sessions/helpers.ts'

let burrow: RunningBurrow
let project: Project
let call: ReturnType<typeof api>

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('web stats')
  call = api(burrow.url, await createTestKey(['query:read', 'project:write'], [project.id]))
  const pv = (session: string, path: string, at: string) => ({
    event: '$pageview',
    session,
    at,
    properties: { $pathname: path, $browser: 'Firefox' },
  })
  await insertSessionEvents(clickhouse(), project.id, [
    pv('s1', '/item/1', '2023-12-10 00:00:00'),
    pv('s1', '/item/2', '2023-12-10 00:00:30'),
    pv('s2', '/', '2023-12-11 00:00:00'),
  ])
})

const query = (extra: Record<string, unknown>) => ({
  query: {
    kind: 'WebStatsTableQuery',
    breakdownBy: 'Page',
    dateRange: { date_from: '2023-12-08', date_to: '2023-12-15' },
    ...extra,
  },
  refresh: 'force_blocking',
})

describe('WebStatsTableQuery on /query/', () => {
  it("answers PostHog's body, paged", async () => {
    const r = await call('POST', `/api/projects/${project.id}/query/`, query({ limit: 2 }))
    expect(r.status, r.text).toBe(200)
    const body = r.body as Record<string, unknown>
    // one person (the helper's default) with two sessions: every path has 1 visitor and 1 view
    expect(body.results).toEqual([
      ['/', [1, null], [1, null], 1 / 3, ''],
      ['/item/1', [1, null], [1, null], 1 / 3, ''],
    ])
    expect(body.columns).toEqual([
      'context.columns.breakdown_value',
      'context.columns.visitors',
      'context.columns.views',
      'context.columns.ui_fill_fraction',
      'context.columns.cross_sell',
    ])
    expect(body).toMatchObject({ hasMore: true, limit: 2, offset: 0 })
    expect(Array.isArray(body.types)).toBe(true)
  })

  it('pages on with offset, and answers on /api/environments too', async () => {
    const r = await call('POST', `/api/environments/${project.id}/query/`, query({ limit: 2, offset: 2 }))
    expect(r.status, r.text).toBe(200)
    expect(r.body).toMatchObject({
      results: [['/item/2', [1, null], [1, null], 1 / 3, '']],
      hasMore: false,
      limit: 2,
      offset: 2,
    })
  })

  it("cleans paths with the project's rules (PATCH path_cleaning_filters)", async () => {
    const patch = await call('PATCH', `/api/projects/${project.id}/`, {
      path_cleaning_filters: [{ regex: '\\/item\\/\\d+', alias: '/item/:id' }],
    })
    expect(patch.status, patch.text).toBe(200)
    const r = await call('POST', `/api/projects/${project.id}/query/`, query({ doPathCleaning: true }))
    expect(r.status, r.text).toBe(200)
    expect((r.body as { results: unknown[][] }).results.map((x) => x.slice(0, 3))).toEqual([
      ['/item/:id', [1, null], [2, null]],
      ['/', [1, null], [1, null]],
    ])
  })

  it.each([
    [{ breakdownBy: 'Nope' }, /breakdownBy/],
    [{ breakdownBy: 'FrustrationMetrics' }, /FrustrationMetrics/],
    [{ dateRange: { date_from: 'not a date' } }, /date_from/],
    [{ dateRange: { date_from: '2023-12-15', date_to: '2023-12-01' } }, /date_from/],
    [{ dateRange: { date_from: 'all' }, compareFilter: { compare: true } }, /all/],
    [{ conversionGoal: { customEventName: 'x' } }, /conversionGoal/],
    [{ includeScrollDepth: true }, /includeScrollDepth/],
    [{ limit: 0 }, /limit/],
    [{ orderBy: ['Visitors', 'SIDEWAYS'] }, /orderBy/],
  ])('refuses %j with a 400 naming what is wrong', async (extra, message) => {
    const r = await call('POST', `/api/projects/${project.id}/query/`, query(extra))
    expect(r.status, r.text).toBe(400)
    expect(r.text).toMatch(message)
    expect(typeof (r.body as { detail?: unknown }).detail).toBe('string')
  })

  it("answers an invalid path cleaning regex of the project's with a 400, not a 500", async () => {
    const patch = await call('PATCH', `/api/projects/${project.id}/`, {
      path_cleaning_filters: [{ regex: '(unclosed', alias: 'x' }],
    })
    expect(patch.status, patch.text).toBe(200)
    const r = await call('POST', `/api/projects/${project.id}/query/`, query({ doPathCleaning: true }))
    expect(r.status, r.text).toBe(400)
    expect(r.text).toMatch(/regular expression/)
  })
})

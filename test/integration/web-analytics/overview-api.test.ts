// WebOverviewQuery through POST /query/ (the compile worker knows the kind too): PostHog's response
// body, its figures in `results`.
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../harness/index.ts'
import { insertSessionEvents } from '../sessions/helpers.ts'

let burrow: RunningBurrow
let project: Project

beforeAll(async () => {
  burrow = await startTestBurrow()
  project = await createTestProject('web overview')
  await insertSessionEvents(clickhouse(), project.id, [
    { event: '$pageview', session: 's1', at: '2023-12-10 00:00:00' },
    { event: '$pageview', session: 's1', at: '2023-12-10 00:00:30' },
  ])
})

describe('WebOverviewQuery on /query/', () => {
  it('answers the five figures', async () => {
    const call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
    const r = await call('POST', `/api/projects/${project.id}/query/`, {
      query: { kind: 'WebOverviewQuery', dateRange: { date_from: '2023-12-08', date_to: '2023-12-15' } },
      refresh: 'force_blocking',
    })
    expect(r.status, r.text).toBe(200)
    const body = r.body as { results: { key: string; value: number | null }[] }
    // one visitor, two page views, one session of 30 seconds that is no bounce
    expect(body.results.map((x) => [x.key, x.value])).toEqual([
      ['visitors', 1],
      ['views', 2],
      ['sessions', 1],
      ['session duration', 30],
      ['bounce rate', 0],
    ])
  })
})

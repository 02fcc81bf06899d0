// RetentionQuery through POST /query/ on real ClickHouse, Day periods, 4 intervals ending
// 2024-03-04 (so day 0 = 03-01). Data, all $pageview (UTC):
//   R1: 02-28, 03-01, 03-02        R2: 03-01, 03-03        R3: 03-02, 03-03, 03-04
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../../src/accounts/documents.ts'
import { api, clickhouse, createTestKey, createTestProject, startTestBurrow } from '../../../harness/index.ts'
import { insertEvents } from '../../hogql/fixtures.ts'

let project: Project
let call: ReturnType<typeof api>
const R1 = '000000a1-0000-4000-8000-000000000000'
const R2 = '000000a2-0000-4000-8000-000000000000'
const R3 = '000000a3-0000-4000-8000-000000000000'

beforeAll(async () => {
  const burrow = await startTestBurrow({ API_RATE_LIMIT_PER_MINUTE: '100000' })
  project = await createTestProject('retention')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  const ev = (p: string, day: string) => ({
    team: project.id,
    uuid: randomUUID(),
    event: '$pageview',
    distinctId: p,
    personId: p,
    timestamp: `2024-${day} 12:00:00`,
  })
  await insertEvents(clickhouse(), [
    ev(R1, '02-28'),
    ev(R1, '03-01'),
    ev(R1, '03-02'),
    ev(R2, '03-01'),
    ev(R2, '03-03'),
    ev(R3, '03-02'),
    ev(R3, '03-03'),
    ev(R3, '03-04'),
    // another event name is neither target nor returning
    { ...ev(R2, '03-02'), event: 'other' },
  ])
})

async function retention(retentionType: string) {
  const query = {
    kind: 'RetentionQuery',
    dateRange: { date_to: '2024-03-04' },
    retentionFilter: {
      retentionType,
      period: 'Day',
      totalIntervals: 4,
      targetEntity: { id: '$pageview', type: 'events' },
      returningEntity: { id: '$pageview', type: 'events' },
    },
  }
  const r = await call('POST', `/api/environments/${project.id}/query/`, { query, refresh: 'force_blocking' })
  expect(r.status, r.text).toBe(200)
  return r.body.results as { values: { count: number; label: string }[]; label: string; date: string }[]
}

const grid = (res: { values: { count: number }[] }[]) => res.map((r) => r.values.map((v) => v.count))

describe('RetentionQuery', () => {
  it('first time: a person belongs to the period of their first ever target event', async () => {
    const res = await retention('retention_first_time')
    // R1's first pageview (02-28) is before the range: R1 is in no cohort.
    // R2: cohort day 0, back on day 2. R3: cohort day 1, back 1 and 2 days later.
    expect(grid(res)).toEqual([[1, 0, 1, 0], [1, 1, 1], [0, 0], [0]])
    expect(res[0]).toMatchObject({ label: 'Day 0', date: '2024-03-01T00:00:00Z' })
    expect(res[0]!.values.map((v) => v.label)).toEqual(['Day 0', 'Day 1', 'Day 2', 'Day 3'])
    expect(res[3]!.date).toBe('2024-03-04T00:00:00Z')
  })

  it('recurring: every period with a target event is a cohort', async () => {
    // day 0: R1, R2 -> R1 back day 1, R2 back day 2; day 1: R1, R3 -> R3 back days 2, 3;
    // day 2: R2, R3 -> R3 back day 3; day 3: R3.
    expect(grid(await retention('retention_recurring'))).toEqual([[2, 1, 1, 0], [2, 1, 1], [2, 1], [1]])
  })
})

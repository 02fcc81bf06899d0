// A cached insight older than its refresh mode allows is reused only while the data it was computed
// from is unchanged: a late event for a day the result covers makes the next request compute again
// (src/queries/cache.ts, revalidation). The result cache is aged by rewriting its entry's
// last_refresh, as a minute passing would. The fingerprint covers the whole database, so this file
// has a database of its own, and an api-only Burrow (no projectors, which would write to it).
import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../../src/accounts/documents.ts'
import { type ClickHouseClient } from '../../../../src/clickhouse/client.ts'
import { ResultCache } from '../../../../src/queries/cache.ts'
import {
  api,
  createTestKey,
  createTestProject,
  nats,
  ownDatabase,
  startTestBurrow,
} from '../../../harness/index.ts'
import { insertEvents } from '../../hogql/fixtures.ts'

let ch: ClickHouseClient

let project: Project
let call: ReturnType<typeof api>
let cache: ResultCache

const pageview = (day: string, person: string) => ({
  team: project.id,
  uuid: randomUUID(),
  event: '$pageview',
  distinctId: person,
  personId: person,
  timestamp: `2024-03-${day} 12:00:00`,
})
const P1 = '00000000-0000-4000-8000-0000000c0001'
const P2 = '00000000-0000-4000-8000-0000000c0002'

const query = {
  kind: 'TrendsQuery',
  series: [{ kind: 'EventsNode', event: '$pageview' }],
  dateRange: { date_from: '2024-03-01', date_to: '2024-03-03' },
}

async function ask() {
  const r = await call('POST', `/api/environments/${project.id}/query/`, { query, refresh: 'blocking' })
  expect(r.status, r.text).toBe(200)
  return r.body as { is_cached: boolean; cache_key: string; results: { data: number[] }[] }
}

/** Makes the cached entry two minutes old: past `blocking`'s minute of freshness. */
async function age(key: string) {
  const entry = await cache.get(key)
  expect(entry).toBeDefined()
  await cache.put(key, { ...entry!, last_refresh: new Date(Date.now() - 120_000).toISOString() })
}

beforeAll(async () => {
  const own = await ownDatabase('burrow_revalidation')
  ch = own.client
  const burrow = await startTestBurrow({
    API_RATE_LIMIT_PER_MINUTE: '100000',
    ROLE: 'api',
    CLICKHOUSE_DATABASE: own.database,
  })
  project = await createTestProject('cache revalidation')
  call = api(burrow.url, await createTestKey(['query:read'], [project.id]))
  cache = await ResultCache.open(await nats())
  await insertEvents(ch, [pageview('01', P1), pageview('02', P1), pageview('02', P2)])
})

describe('result cache past its freshness', () => {
  it('answers from the cache while nothing was written, and computes again after a late event', async () => {
    const first = await ask()
    expect(first.results[0]!.data).toEqual([1, 2, 0])

    // A background merge of the parts just written changes the fingerprint too (a recompute, never
    // a stale answer); one of a few tries after the merges settle reuses the entry.
    let reused = false
    for (let i = 0; i < 5 && !reused; i++) {
      await age(first.cache_key)
      const again = await ask()
      expect(again.results[0]!.data).toEqual([1, 2, 0])
      reused = again.is_cached
    }
    expect(reused).toBe(true)

    // a late event for a day the cached result covers
    await insertEvents(ch, [pageview('01', P2)])
    await age(first.cache_key)
    const late = await ask()
    expect(late.is_cached).toBe(false)
    expect(late.results[0]!.data).toEqual([2, 2, 0])
  })
})

/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// A saved dashboard of 10 trends insights over 2M events (90 days), through the dashboards API: its
// first load (GET /dashboards/{id}/?refresh=force_blocking: every tile computed, all at once) against
// each tile computed alone, one after the other (GET /insights/{id}/?refresh=force_blocking), both
// after one untimed pass (so neither pays the data's first read from disk or the compiles); then
// loads from the cache (the default refresh, force_cache, as PostHog's; and refresh=blocking within
// the cache's minute), repeated. Printed: the first load's wall time against the slowest tile alone
// and the sum of the tiles alone (the ratio says how much of the dashboard's time is its slowest
// tile), and the cached loads' median and worst times.
// Run: npx tsx bench/saved-dashboard.ts   (env EVENTS (2M), PERSONS (50K), LOADS (20); the embedded
// ClickHouse, or the one CLICKHOUSE_URL names: a current release, as the taxonomy's schema needs)
import { createClient } from '@clickhouse/client'
import { generateDataset } from './dataset.ts'
import { benchBurrow, TRENDS_TILES as SERIES } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 2_000_000)
const PERSONS = Number(process.env.PERSONS ?? 50_000)
const LOADS = Number(process.env.LOADS ?? 20)

// a dashboard's tiles run at once up to the key's and the project's caps (default 4 and 8)
const burrow = await benchBurrow({
  QUERY_MAX_CONCURRENT_PER_KEY: '10',
  QUERY_MAX_CONCURRENT_PER_PROJECT: '10',
})
const { project_id: team, personal_api_key: key } = burrow.credentials
const ch = createClient({
  url: burrow.clickhouseUrl,
  database: burrow.database,
  request_timeout: 600_000,
  clickhouse_settings: { max_execution_time: 600 },
})

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${burrow.url}/api/projects/${team}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  })
  const json: any = await res.json()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now()
  const v = await fn()
  return [performance.now() - t0, v]
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const f = (ms: number) => `${ms.toFixed(0).padStart(6)} ms`

try {
  console.log(`load: ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`)
  const ds = await generateDataset(ch, { teamId: team, events: EVENTS, persons: PERSONS, days: 90 })
  console.log(
    `data set: ${EVENTS} events, ${PERSONS} persons, 90 days, written in ${ds.seconds.toFixed(0)} s`,
  )
  const dashboard = await call('POST', '/dashboards/', { name: 'bench' })
  const ids: number[] = []
  for (const [i, s] of SERIES.entries()) {
    const query = {
      kind: 'InsightVizNode',
      source: { kind: 'TrendsQuery', interval: 'day', dateRange: { date_from: '-90d' }, ...s },
    }
    ids.push(
      (await call('POST', '/insights/', { name: `tile ${i + 1}`, query, dashboards: [dashboard.id] })).id,
    )
  }
  const [firstMs, first] = await timed(() =>
    call('GET', `/dashboards/${dashboard.id}/?refresh=force_blocking`),
  )
  const computed = first.tiles.filter((t: any) => t.insight?.result && !t.insight.is_cached).length
  const alone: number[] = []
  for (const id of ids)
    alone.push((await timed(() => call('GET', `/insights/${id}/?refresh=force_blocking`)))[0])
  const slowest = Math.max(...alone)
  const sum = alone.reduce((a, b) => a + b, 0)
  console.log(
    `tiles alone, one after the other (force_blocking): ${alone.map((ms) => ms.toFixed(0)).join(', ')} ms`,
  )
  console.log(
    `first load (force_blocking, ${computed} of ${ids.length} tiles computed): ${f(firstMs)}` +
      `  slowest tile alone ${f(slowest)}  ratio ${(firstMs / slowest).toFixed(2)}` +
      `  sum of tiles alone ${f(sum)}  ratio ${(firstMs / sum).toFixed(2)}`,
  )
  for (const refresh of ['force_cache', 'blocking']) {
    const times: number[] = []
    let cached = 0
    for (let i = 0; i < LOADS; i++) {
      const [ms, body] = await timed(() =>
        call('GET', `/dashboards/${dashboard.id}/${refresh === 'force_cache' ? '' : `?refresh=${refresh}`}`),
      )
      times.push(ms)
      cached += body.tiles.filter((t: any) => t.is_cached).length
    }
    console.log(
      `from the cache (${refresh === 'force_cache' ? 'default refresh' : `refresh=${refresh}`}), ${LOADS} loads: median ${f(median(times))}` +
        `  worst ${f(Math.max(...times))}  tiles from the cache ${cached} of ${LOADS * ids.length}`,
    )
  }
  console.log(`load: ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`)
} finally {
  await ch.close()
  await burrow.cleanup()
}

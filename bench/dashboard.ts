/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// A dashboard of 10 trends insights over 90 days, loaded twice: the first load computes every
// bucket; then events arrive for today (this project) and for closed days of another project, and
// the second load takes the closed days from stored values (src/queries/day-cache.ts) and computes
// today only. A third load repeats the second (its narrowed statements now compiled before), and a
// fourth with `force_blocking` computes everything again, for comparison.
// Run: npx tsx bench/dashboard.ts   (env EVENTS (2M), PERSONS (50K))
//
// Each load sends the 10 requests at once, as a dashboard does. Every load's queries differ in a
// display-only field (`trendsFilter.load`), so the whole-result cache (docs/query.md) never answers:
// what is measured is the per-bucket path. Printed per load: wall time, the ClickHouse server's and
// Burrow's CPU time (from /proc, 10 ms ticks: what the load cost, which the machine's load moves far
// less than wall time), and how many buckets came from stored values and how many were computed.
import { createClient } from '@clickhouse/client'
import { generateDataset } from './dataset.ts'
import { benchBurrow, procStats, processTree, TRENDS_TILES as INSIGHTS } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 2_000_000)
const PERSONS = Number(process.env.PERSONS ?? 50_000)

// a dashboard sends its 10 requests at once: more than the default 4 per key and 8 per project
const burrow = await benchBurrow({
  QUERY_MAX_CONCURRENT_PER_KEY: '10',
  QUERY_MAX_CONCURRENT_PER_PROJECT: '10',
})
const serverPid = processTree(burrow.pid).find((p) => procStats(p)?.name.startsWith('clickhouse')) ?? 0
const serverCpuMs = () => (procStats(serverPid)?.cpuSeconds ?? Number.NaN) * 1000
// Burrow's own node processes (compile workers are threads of them); not NATS, not ClickHouse
const burrowCpuMs = () =>
  processTree(burrow.pid)
    .map((p) => procStats(p))
    .filter((p) => p?.name.startsWith('node'))
    .reduce((a, p) => a + (p?.cpuSeconds ?? 0) * 1000, 0)
const { project_id: team, personal_api_key: key } = burrow.credentials
const ch = createClient({
  url: burrow.clickhouseUrl,
  database: burrow.database,
  request_timeout: 600_000,
  clickhouse_settings: { max_execution_time: 600 },
})

async function load(name: string, n: number, refresh: string) {
  const cpu0 = serverCpuMs()
  const own0 = burrowCpuMs()
  const t0 = performance.now()
  const answers = await Promise.all(
    INSIGHTS.map(async (insight: any) => {
      const query = {
        kind: 'TrendsQuery',
        interval: 'day',
        dateRange: { date_from: '-90d' },
        ...insight,
        trendsFilter: { ...insight.trendsFilter, load: n },
      }
      const res = await fetch(`${burrow.url}/api/projects/${team}/query/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query, refresh }),
      })
      const body: any = await res.json()
      if (res.status !== 200) throw new Error(`${name}: ${res.status} ${JSON.stringify(body)}`)
      return body
    }),
  )
  const ms = performance.now() - t0
  const cpu = serverCpuMs() - cpu0
  const own = burrowCpuMs() - own0
  const cached = answers.reduce((a, b) => a + (b.bucket_cache?.cached ?? 0), 0)
  const computed = answers.reduce((a, b) => a + (b.bucket_cache?.computed ?? 0), 0)
  console.log(
    `${name.padEnd(34)} ${ms.toFixed(0).padStart(6)} ms wall  ${cpu.toFixed(0).padStart(6)} ms server CPU` +
      `  ${own.toFixed(0).padStart(6)} ms Burrow CPU  buckets cached ${cached}, computed ${computed}`,
  )
  return answers.map((a) => a.results)
}

try {
  console.log(`load: ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`)
  const ds = await generateDataset(ch, { teamId: team, events: EVENTS, persons: PERSONS, days: 90 })
  console.log(
    `data set: ${EVENTS} events, ${PERSONS} persons, 90 days, written in ${ds.seconds.toFixed(0)} s`,
  )
  await new Promise((r) => setTimeout(r, 1100)) // values must come after the inserts' second
  const first = await load('first load', 1, 'blocking')
  // new events: 1,000 today for this project, 10,000 on closed days of another project
  await ch.command({
    query: `INSERT INTO events (team_id, uuid, event, distinct_id, person_id, timestamp, _seq)
      SELECT ${team}, generateUUIDv4(), '$pageview', 'late', generateUUIDv4(), toDateTime(toStartOfDay(now()) + number % 60),
        0 FROM system.numbers LIMIT 1000`,
  })
  await ch.command({
    query: `INSERT INTO events (team_id, uuid, event, distinct_id, person_id, timestamp, _seq)
      SELECT ${team + 1}, generateUUIDv4(), '$pageview', 'other', generateUUIDv4(), toDateTime(now() - 86400 * (1 + number % 80)),
        0 FROM system.numbers LIMIT 10000`,
  })
  await new Promise((r) => setTimeout(r, 1100))
  const second = await load('second load (after new events)', 2, 'blocking')
  await load('third load (same, compiled before)', 3, 'blocking')
  const forced = await load('fourth load, force_blocking', 4, 'force_blocking')
  // the stored values must give the answer a full computation gives
  if (JSON.stringify(second) !== JSON.stringify(forced)) {
    console.error('second load differs from a full computation')
    process.exitCode = 1
  }
  void first
  console.log(`load: ${(await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()}`)
} finally {
  await ch.close()
  await burrow.cleanup()
}

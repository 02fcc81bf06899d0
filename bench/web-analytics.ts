/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// Web analytics latency (issue #43): WebOverviewQuery and WebStatsTableQuery over EVENTS events
// (default 2M) of PERSONS persons (default 50K) in 14 days, generated inside ClickHouse with the web
// properties (bench/dataset.ts, `web`: paths, referrers, utm, devices, countries), each case through
// POST /query/ against the best hand-written ClickHouse SQL we know for the same answer, in the same
// run; the answers must match.
// Run: npx tsx bench/web-analytics.ts   (env EVENTS, PERSONS, RUNS; ONLY=<part of a case name>;
// SHOW_SQL=1 prints both statements)
//
// Server time is ClickHouse's own: its `statistics.elapsed` for Burrow's statement as its request
// ran it (the response's ./clickhouse timing) and for the hand-written one, and the ClickHouse
// process's CPU over each run (/proc, as bench/paths.ts; the embedded server keeps no query_log).
// The two sides run alternately, medians of RUNS runs each.
// The hand-written queries read what Burrow's read (events in the range and raw_sessions within its
// days) as directly as ClickHouse allows: the property from the JSON as Burrow reads it,
// events grouped per session before the join to the merged sessions, no person-override join (the
// generated persons are never merged), only the session fields the answer needs.
import { selectJson } from '../src/clickhouse/client.ts'
import { guardSettings } from '../src/hogql/server-settings.ts'
import { readServerInfo } from '../src/queries/execute.ts'
import { channelTypeExpr, SQL_LOOKUPS } from '../src/sessions/channel-type.ts'
import { overviewItems } from '../src/web-analytics/overview.ts'
import { statsRows } from '../src/web-analytics/stats-table.ts'
import { generateDataset } from './dataset.ts'
import { benchBurrow, benchClickHouse, percentile } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 2_000_000)
const PERSONS = Number(process.env.PERSONS ?? 50_000)
const RUNS = Number(process.env.RUNS ?? 5)
const DAYS = 14

// no auto-materialized columns: both sides read the properties' JSON, the whole run
const burrow = await benchBurrow({ AUTO_MATERIALIZE: 'false' })
const { project_id: team, personal_api_key: key } = burrow.credentials
const { ch, lean, serverCpuMs } = benchClickHouse(burrow)

const DAY = 86_400_000
const endMs = Math.floor(Date.now() / DAY) * DAY
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10)
// the last 7 whole days, and the 7 before them to compare with
const from = endMs - 7 * DAY
const to = endMs - 1000
const dateRange = { date_from: iso(from), date_to: iso(to) }
const wall = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
const prevFrom = from - 7 * DAY
const prevTo = from - 1000

// ---- the hand-written statements ---------------------------------------------------------------

const prop = (k: string) => `JSONExtract(properties, '${k}', 'Nullable(String)')`
const inRange = (col: string, a: number, b: number) =>
  `${col} >= toDateTime64('${wall(a)}', 6, 'UTC') AND ${col} <= toDateTime64('${wall(b)}', 6, 'UTC')`
const pageviews = (a: number, b: number) =>
  `team_id = ${team} AND event IN ('$pageview', '$screen') AND timestamp >= '${wall(a)}' AND timestamp <= '${wall(b)}'`
// both weeks: PostHog reads the events inside either period, so not the second between them
const bothWeeks = `${pageviews(prevFrom, to)} AND NOT (timestamp > '${wall(prevTo)}' AND timestamp < '${wall(from)}')`
const sessionDays = (a: number, b: number) =>
  `team_id = ${team} AND day >= '${iso(a - 3 * DAY)}' AND day <= '${iso(b + 3 * DAY)}'`
const ORDER = 'ORDER BY v DESC, views DESC, bd ASC LIMIT 101'
const FILL = 'tupleElement(v, 1) / sum(tupleElement(v, 1)) OVER ()'

/** An event property breakdown (Page, Browser, Country): no session is needed. */
const handEventBreakdown = (
  k: string,
) => `SELECT bd, tuple(uniq(person), NULL) AS v, tuple(sum(c), NULL) AS views, ${FILL} AS fill
FROM (
  SELECT any(person_id) AS person, count() AS c, ${prop(k)} AS bd, session_id
  FROM events WHERE ${pageviews(from, to)} AND isNotNull(bd)
  GROUP BY session_id, bd
)
GROUP BY bd ${ORDER}`

const nul = (c: string) => `nullIf(nullIf(argMinMerge(${c}), 'null'), '')`
const channel = channelTypeExpr(
  {
    campaign: 'campaign',
    medium: 'medium',
    source: 'source',
    referringDomain: 'referring',
    hasGclid: 'isNotNull(gclid)',
    hasFbclid: 'isNotNull(fbclid)',
    gadSource: 'gad',
  },
  SQL_LOOKUPS,
)

/** The sessions' entry channel: events per session first, then the merged sessions of their days. */
const handChannel = `SELECT bd, tuple(uniq(person), NULL) AS v, tuple(sum(c), NULL) AS views, ${FILL} AS fill
FROM (
  SELECT session_id, any(person_id) AS person, count() AS c
  FROM events WHERE ${pageviews(from, to)} AND session_id != ''
  GROUP BY session_id
) AS e
INNER JOIN (
  SELECT session_id, ${channel} AS bd
  FROM (
    SELECT session_id, ${nul('initial_utm_campaign')} AS campaign, ${nul('initial_utm_medium')} AS medium,
      ${nul('initial_utm_source')} AS source, ${nul('initial_referring_domain')} AS referring,
      ${nul('initial_gclid')} AS gclid, ${nul('initial_fbclid')} AS fbclid, ${nul('initial_gad_source')} AS gad
    FROM raw_sessions WHERE ${sessionDays(from, to)}
    GROUP BY session_id
  )
) AS s USING (session_id)
WHERE bd != ''
GROUP BY bd ${ORDER}`

/** Page with the entry bounce rate beside it, compared with the previous week. */
const handPageBounce = (() => {
  const cur = inRange('start', from, to)
  const prev = inRange('start', prevFrom, prevTo)
  return `SELECT c.bd AS bd, tuple(c.v, c.pv) AS v, tuple(c.views, c.pviews) AS views,
  tuple(if(b.m = 1, b.rate, NULL), if(b.m = 1, b.prate, NULL)) AS rate, ${FILL} AS fill
FROM (
  SELECT bd, uniqIf(person, ${cur}) AS v, uniqIf(person, ${prev}) AS pv, sumIf(cnt, ${cur}) AS views, sumIf(cnt, ${prev}) AS pviews
  FROM (
    SELECT e.bd AS bd, any(e.person) AS person, sum(e.cnt) AS cnt, min(s.start) AS start
    FROM (
      SELECT session_id, ${prop('$pathname')} AS bd, any(person_id) AS person, count() AS cnt
      FROM events WHERE ${bothWeeks} AND isNotNull(bd)
      GROUP BY session_id, bd
    ) AS e
    INNER JOIN (SELECT session_id, min(min_timestamp) AS start FROM raw_sessions WHERE ${sessionDays(prevFrom, to)} GROUP BY session_id) AS s
    USING (session_id)
    GROUP BY e.session_id, bd
  )
  GROUP BY bd
) AS c
LEFT JOIN (
  SELECT bd, avgIf(bounce, ${cur}) AS rate, avgIf(bounce, ${prev}) AS prate, 1 AS m
  FROM (
    SELECT session_id, path(${nul('entry_url')}) AS bd, min(min_timestamp) AS start,
      dateDiff('second', start, max(max_timestamp)) AS duration, uniqMerge(pageview_uniq) AS pvs,
      if(pvs = 0, NULL, NOT (pvs > 1 OR uniqMerge(autocapture_uniq) > 0 OR duration >= 10)) AS bounce
    FROM raw_sessions WHERE ${sessionDays(prevFrom, to)}
    GROUP BY session_id
  ) AS s
  WHERE session_id IN (SELECT session_id FROM events WHERE ${bothWeeks})
  GROUP BY bd
) AS b ON c.bd = b.bd
ORDER BY v DESC, views DESC, bd ASC LIMIT 101`
})()

/** The overview with the previous week: events per session, joined to their merged sessions. */
const handOverview = (() => {
  const cur = inRange('start', from, to)
  const prev = inRange('start', prevFrom, prevTo)
  const pair = (fn: string, c: string) => `${fn}If(${c}, ${cur}), ${fn}If(${c}, ${prev})`
  return `SELECT ${pair('uniq', 'person')}, ${pair('sum', 'cnt')}, ${pair('uniq', 'session_id')}, ${pair('avg', 'duration')}, ${pair('avg', 'bounce')}
FROM (
  SELECT session_id, any(person_id) AS person, count() AS cnt
  FROM events WHERE ${bothWeeks} AND session_id != ''
  GROUP BY session_id
) AS e
INNER JOIN (
  SELECT session_id, min(min_timestamp) AS start, dateDiff('second', start, max(max_timestamp)) AS duration,
    uniqMerge(pageview_uniq) AS pvs, if(pvs = 0, NULL, NOT (pvs > 1 OR uniqMerge(autocapture_uniq) > 0 OR duration >= 10)) AS bounce
  FROM raw_sessions WHERE ${sessionDays(prevFrom, to)}
  GROUP BY session_id
) AS s USING (session_id)
WHERE (${cur}) OR (${prev})`
})()

// ---- running and measuring -----------------------------------------------------------------------

interface Case {
  name: string
  query: Record<string, unknown>
  hand: string
  /** the hand rows as the API shapes them */
  shape: (rows: unknown[][]) => unknown
}

const stats = (extra: Record<string, unknown>) => ({ kind: 'WebStatsTableQuery', dateRange, ...extra })
const statsShape = (rows: unknown[][]) => statsRows(rows, { language: false, limit: 100 })
const cases: Case[] = [
  {
    name: 'WebOverviewQuery, compare',
    query: { kind: 'WebOverviewQuery', dateRange, compareFilter: { compare: true } },
    hand: handOverview,
    shape: (rows) => overviewItems(rows[0], true),
  },
  {
    name: 'stats Page',
    query: stats({ breakdownBy: 'Page' }),
    hand: handEventBreakdown('$pathname'),
    shape: statsShape,
  },
  {
    name: 'stats Page, bounce rate, compare',
    query: stats({ breakdownBy: 'Page', includeBounceRate: true, compareFilter: { compare: true } }),
    hand: handPageBounce,
    shape: statsShape,
  },
  {
    name: 'stats InitialChannelType',
    query: stats({ breakdownBy: 'InitialChannelType' }),
    hand: handChannel,
    shape: statsShape,
  },
  {
    name: 'stats Browser',
    query: stats({ breakdownBy: 'Browser' }),
    hand: handEventBreakdown('$browser'),
    shape: statsShape,
  },
  {
    name: 'stats Country',
    query: stats({ breakdownBy: 'Country' }),
    hand: handEventBreakdown('$geoip_country_code'),
    shape: statsShape,
  },
]

const burrowSettings = guardSettings(await readServerInfo(ch))

/** One run of `fn` and the ClickHouse server's CPU over it (ms; /proc ticks of 10 ms). */
async function withCpu<T>(fn: () => Promise<T>): Promise<T & { cpu: number }> {
  const cpu0 = serverCpuMs()
  const out = await fn()
  return { ...out, cpu: serverCpuMs() - cpu0 }
}

async function request(query: Record<string, unknown>) {
  const t0 = performance.now()
  const res = await fetch(`${burrow.url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, refresh: 'force_blocking' }),
  })
  const body = (await res.json()) as {
    results: any
    clickhouse?: string
    timings?: { k: string; t: number }[]
  }
  const ms = performance.now() - t0
  if (res.status !== 200) throw new Error(`${String(query.kind)}: ${res.status} ${JSON.stringify(body)}`)
  // ClickHouse's own time for the statement (its JSON statistics.elapsed, as the runner reads it)
  const server = (body.timings?.find((x) => x.k === './clickhouse')?.t ?? Number.NaN) * 1000
  return { ms, server, body }
}

async function hand(sql: string) {
  const t0 = performance.now()
  const rs = await ch.query({ query: sql, format: 'JSONCompact', clickhouse_settings: burrowSettings })
  const body = (await rs.json()) as { data: unknown[][]; statistics?: { elapsed: number } }
  return {
    ms: performance.now() - t0,
    server: (body.statistics?.elapsed ?? Number.NaN) * 1000,
    rows: body.data,
  }
}

const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  )
const f1 = (x: number) => x.toFixed(1)
// floats (averages, fractions) agree to their last digits
const normal = (x: unknown): unknown =>
  Array.isArray(x)
    ? x.map(normal)
    : typeof x === 'number'
      ? Math.round(x * 1e9) / 1e9
      : x && typeof x === 'object'
        ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, normal(v)]))
        : x

try {
  const load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim()
  const ds = await generateDataset(ch, {
    teamId: team,
    events: EVENTS,
    persons: PERSONS,
    days: DAYS,
    endMs,
    web: true,
  })
  console.log(
    `generated ${ds.events} events, ${ds.sessions} sessions, ${ds.persons} persons in ${f1(ds.seconds)} s`,
  )
  let failed = false
  const rows: string[] = []
  for (const c of cases.filter((x) => !process.env.ONLY || x.name.includes(process.env.ONLY))) {
    await request(c.query) // compiled once before the timed runs, as a dashboard's second load is
    // alternately, so that the machine's other load falls on both sides alike
    const ours: Awaited<ReturnType<typeof request>>[] = []
    const theirs: Awaited<ReturnType<typeof hand>>[] = []
    const cpu = { ours: [] as number[], theirs: [] as number[] }
    for (let i = 0; i < RUNS; i++) {
      const o = await withCpu(() => request(c.query))
      const t = await withCpu(() => hand(c.hand))
      ours.push(o)
      theirs.push(t)
      cpu.ours.push(o.cpu)
      cpu.theirs.push(t.cpu)
    }
    const ourServer = { ms: ours.map((r) => r.server), cpu: cpu.ours }
    const handServer = { ms: theirs.map((r) => r.server), cpu: cpu.theirs }
    const a = JSON.stringify(normal(ours[0]!.body.results))
    const b = JSON.stringify(normal(c.shape(theirs[0]!.rows)))
    const ok = a === b
    if (!ok) {
      failed = true
      console.log(`  ours:    ${a.slice(0, 600)}\n  by hand: ${b.slice(0, 600)}`)
    }
    const req = p50(ours.map((r) => r.ms))
    const handMs = p50(theirs.map((r) => r.ms))
    rows.push(
      `| ${c.name} | ${f1(p50(ourServer.ms))} | ${f1(p50(handServer.ms))} | ${(p50(ourServer.ms) / p50(handServer.ms)).toFixed(2)} | ` +
        `${f1(p50(ourServer.cpu))} | ${f1(p50(handServer.cpu))} | ${(p50(ourServer.cpu) / p50(handServer.cpu)).toFixed(2)} | ` +
        `${f1(req)} | ${f1(handMs)} | ${(req / handMs).toFixed(2)} | ${ok ? 'match' : 'DIFFER'} |`,
    )
    console.log(rows[rows.length - 1])
    if (process.env.SHOW_SQL) console.log(`${ours[0]!.body.clickhouse}\n\n${c.hand}\n`)
  }
  const version = (
    (await selectJson(lean, 'SELECT version() AS v', { format: 'JSONEachRow' })) as { v: string }[]
  )[0]?.v
  console.log(
    `\nClickHouse ${version}, ${EVENTS} events, ${PERSONS} persons, ${DAYS} days, last 7 days queried; ` +
      `p50 of ${RUNS} runs (ms); load before: ${load}\n` +
      '| case | server elapsed: burrow | by hand | ratio | server CPU: burrow | by hand | ratio | request: burrow (HTTP) | by hand (SQL) | ratio | answers |\n' +
      '|---|---|---|---|---|---|---|---|---|---|---|\n' +
      rows.join('\n'),
  )
  if (failed) process.exitCode = 1
} finally {
  // KEEP=1: leave the stack running to look at the data (stop it with Ctrl-C)
  if (process.env.KEEP) {
    console.log(`kept: ClickHouse ${burrow.clickhouseUrl} database ${burrow.database}, team ${team}`)
    await new Promise((resolve) => process.once('SIGINT', resolve))
  }
  await ch.close()
  await lean.close()
  await burrow.cleanup()
}

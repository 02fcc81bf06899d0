/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// Insight query latency at scale: ≥10M events over 90 days from 100K persons, generated inside
// ClickHouse (INSERT … SELECT FROM system.numbers), then each insight kind through POST /query/
// against a hand-written ClickHouse query computing the same answer, in the same run; the answers
// must match. Run: npx tsx bench/insights.ts   (env EVENTS, PERSONS, RUNS to size it; ONLY=<part of
// a case name> runs a subset; SQL_DIR=<dir> writes each case's two statements there; MAX_THREADS=<n> sets max_threads for
// the statements the bench runs itself)
//
// The hand-written queries are the fastest ClickHouse SQL we know for each answer on this server:
// one pass over events, the team and date conditions on the sort key, no JSON, no joins that the
// answer does not need (the generated persons are never merged, so no override join), aggregate
// functions ClickHouse has natively (windowFunnel, groupUniqArray, uniqExact). Anything Burrow does
// beyond them (person overrides, PostHog's exact funnel semantics) is cost Burrow has to justify.
//
// Each case prints p50 of RUNS runs for Burrow and by hand, their ratio, and splits Burrow's time:
// `its SQL` is the SQL Burrow sent (the response's `clickhouse`) run directly from here like the
// hand-written query, so `its SQL / by hand` is the cost of the SQL itself, and `fixed` = Burrow's
// wall time − its SQL's time is everything else (HTTP, auth, compiling, shaping, caching).
// `fixed paired` is the same difference taken run by run, each Burrow run followed by its SQL's.
// `fixed in request` is each Burrow run's wall time less the statement's round trip as Burrow itself
// timed it (its `./execute` timing), over the same runs: no second run of the statement, so its
// run-to-run spread (tens of ms for lifecycle and funnels on a loaded machine) does not enter.
// `fixed cold` is the first run's (compile caches empty for that text); `compile` is Burrow's own
// compile timing. `server CPU` is the ClickHouse server process's CPU time per run of its SQL and of
// the hand-written query (from /proc, 10 ms ticks over RUNS runs): the work each costs, which the
// machine's load moves far less than wall time. ClickHouse's JSON `statistics.elapsed` leaves out its parse and analysis, which
// for long statements on 18.16 is tens of milliseconds, so it is not used for the split.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createClient } from '@clickhouse/client'
import { clickhouseClient, selectJson } from '../src/clickhouse/client.ts'
import { guardSettings } from '../src/hogql/server-settings.ts'
import { readServerInfo } from '../src/queries/execute.ts'
import { benchBurrow, percentile, procStats, processTree } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 10_000_000)
const PERSONS = Number(process.env.PERSONS ?? 100_000)
const RUNS = Number(process.env.RUNS ?? 5)
const DAYS = 90

const burrow = await benchBurrow({})
// The ClickHouse server's process (the embedded one Burrow started): its CPU time
// across the runs of a statement is the work the statement costs, which load hardly changes.
const serverPid = processTree(burrow.pid).find((p) => procStats(p)?.name.startsWith('clickhouse')) ?? 0
const serverCpuMs = () => (procStats(serverPid)?.cpuSeconds ?? Number.NaN) * 1000
const { project_id: team, personal_api_key: key } = burrow.credentials
const ch = createClient({
  url: burrow.clickhouseUrl,
  database: burrow.database,
  request_timeout: 600_000,
  // MAX_THREADS=<n>: the bench's own statements (its SQL, by hand) run with that many threads. 18.16
  // takes one per physical core, one on a 2-vCPU machine, which hides what costs parallelism there.
  clickhouse_settings: {
    max_execution_time: 600,
    ...(process.env.MAX_THREADS ? { max_threads: Number(process.env.MAX_THREADS) } : {}),
  },
})
// The statements timed from here go as Burrow sends its own (src/clickhouse/client.ts selectJson:
// without @clickhouse/client's timer tick of 1–2 ms before each request), so `its SQL` and `by
// hand` are ClickHouse's time and one HTTP round trip, and `fixed` is all Burrow's.
const lean = clickhouseClient(burrow.clickhouseUrl, burrow.database, { max_execution_time: 600 })

// Project timezone is UTC (the default project); days below are UTC days.
const DAY = 86_400_000
const today = Math.floor(Date.now() / DAY) * DAY
const start = today - (DAYS - 1) * DAY
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10)
// Person ids look like Burrow's (UUID v5: random bits throughout). 18.16 hashes UUIDs badly when
// their high bits repeat, so sequential ids would measure that instead of the queries.
const uuidOf = (p: string) => {
  const h = (seed: number) => `hex(bitOr(cityHash64(${p}, ${seed}), toUInt64(9223372036854775808)))`
  return `toUUID(concat(substring(${h(1)}, 1, 8), '-', substring(${h(1)}, 9, 4), '-5', substring(${h(2)}, 2, 3), '-8', substring(${h(2)}, 5, 3), '-', substring(${h(3)}, 1, 12)))`
}

async function generate() {
  const t0 = performance.now()
  // Persons are created on a day of the range (some before it), active on a skewed share of days.
  await ch.command({
    query: `INSERT INTO person SELECT ${team}, ${uuidOf('number')}, toDateTime(${start / 1000} - 10 * 86400 + (cityHash64(number, 7) % (${DAYS} + 10)) * 86400), 0, '{}', [], [], 0, 0, 1 FROM system.numbers LIMIT ${PERSONS}`,
  })
  await ch.command({
    query: `INSERT INTO person_distinct_id SELECT ${team}, concat('user-', toString(number)), ${uuidOf('number')}, 0, 1 FROM system.numbers LIMIT ${PERSONS}`,
  })
  const browsers = "['Chrome', 'Firefox', 'Safari', 'Edge', 'Opera']"
  const events =
    "['$pageview', '$pageview', '$pageview', '$pageview', '$pageview', '$pageview', 'signup', 'purchase', 'click', 'click']"
  await ch.command({
    query:
      `INSERT INTO events SELECT ${team}, generateUUIDv4(), ev, concat('user-', toString(p)), ${uuidOf('p')}, ts,` +
      ` toInt64(toUInt32(ts)) * 1000 + n % 1000,` +
      ` concat('{"$browser":"', br, '","amount":', toString(n % 100), '}'), ['$browser', 'amount'], [br, toString(n % 100)],` +
      ` '', '', '', '', '', '', '', '', ts, n, 0 FROM (` +
      ` SELECT number AS n, toDateTime(${start / 1000} + intDiv(number * ${DAYS * 86400}, ${EVENTS})) AS ts,` +
      // a power-law-ish choice of person: low ids are much more active than high ones
      ` toUInt64(pow(cityHash64(number, 1) % 1000000 / 1000000, 2) * ${PERSONS}) AS p,` +
      ` ${events}[1 + cityHash64(number, 2) % 10] AS ev, ${browsers}[1 + cityHash64(number, 3) % 5] AS br` +
      ` FROM system.numbers LIMIT ${EVENTS})`,
  })
  console.log(
    `generated ${EVENTS} events, ${PERSONS} persons in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
}

/** per insight call, in call order: Burrow's compile timing (ms); the last SQL it sent */
let compileMs: number[] = []
let lastSql = ''
let wallMs: number[] = []
/** per insight call: wall time less Burrow's own timing of the statement's round trip (ms) */
let inRequestMs: number[] = []

async function insight(query: Record<string, unknown>, refresh = 'force_blocking') {
  const t0 = performance.now()
  const res = await fetch(`${burrow.url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, refresh }),
  })
  const body = (await res.json()) as {
    results: any[]
    timings?: { k: string; t: number }[]
    clickhouse?: string
  }
  const wall = performance.now() - t0
  if (res.status !== 200) throw new Error(`${query.kind}: ${res.status} ${JSON.stringify(body)}`)
  compileMs.push((body.timings?.find((t) => t.k === './compile')?.t ?? 0) * 1000)
  inRequestMs.push(wall - (body.timings?.find((t) => t.k === './execute')?.t ?? Number.NaN) * 1000)
  lastSql = body.clickhouse ?? ''
  wallMs.push(wall)
  return body.results
}

let lastHandSql = ''
async function hand(sql: string): Promise<any[]> {
  lastHandSql = sql
  return (await selectJson(lean, sql, { format: 'JSONEachRow' })) as any[]
}

/** ClickHouse's own figures for one run of `sql`: rows read and its elapsed time (ms). */
async function serverStats(sql: string, settings: Record<string, string> = {}): Promise<string> {
  const rs = await ch.query({ query: sql, format: 'JSONCompact', clickhouse_settings: settings })
  const s = ((await rs.json()) as { statistics?: { rows_read: number; elapsed: number } }).statistics
  return s ? `${s.rows_read} rows, ${(s.elapsed * 1000).toFixed(1)} ms` : '?'
}

/** Burrow's SQL run directly, read as Burrow reads it (JSONCompact). */
async function direct(sql: string, settings: Record<string, string> = {}): Promise<unknown> {
  return selectJson(lean, sql, { format: 'JSONCompact', settings })
}

/**
 * The settings Burrow sends with its SQL that change how the server runs it (the team guard's: no
 * predicate push-down), so that "its SQL" is run as Burrow runs it; the hand-written queries run
 * with the server's defaults, as their author would.
 */
const burrowSettings = guardSettings(await readServerInfo(ch))

/** RUNS runs of `fn`: wall times, the last answer, and the server's CPU time per run (ms). */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number[]; last: T; cpu: number }> {
  const ms: number[] = []
  let last: T | undefined
  const cpu0 = serverCpuMs()
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now()
    last = await fn()
    ms.push(performance.now() - t0)
  }
  return { ms, last: last as T, cpu: (serverCpuMs() - cpu0) / RUNS }
}

interface Case {
  name: string
  run: () => Promise<unknown>
  reference: () => Promise<unknown>
  /** both answers as comparable JSON */
  same: (ours: any, theirs: any) => [unknown, unknown]
}

const from30 = iso(today - 29 * DAY)
const to = iso(today)
const dateRange = { date_from: from30, date_to: to }

const cases: Case[] = [
  {
    name: 'trends: daily unique users, 30 days, $pageview',
    run: () => insight({ kind: 'TrendsQuery', series: [{ event: '$pageview', math: 'dau' }], dateRange }),
    reference: () =>
      hand(
        // grouped by the Date (2 bytes), not its text; no ORDER BY (the comparison maps days)
        `SELECT toDate(timestamp) AS d, uniqExact(person_id) AS n FROM events WHERE team_id = ${team}` +
          ` AND event = '$pageview' AND toDate(timestamp) >= '${from30}' AND toDate(timestamp) <= '${to}'` +
          ' GROUP BY d',
      ),
    same: (ours, theirs) => {
      const byDay = new Map(theirs.map((r: any) => [r.d, Number(r.n)]))
      return [ours[0].data, ours[0].days.map((d: string) => byDay.get(d) ?? 0)]
    },
  },
  {
    name: 'trends: total by day with $browser breakdown, 30 days',
    run: () =>
      insight({
        kind: 'TrendsQuery',
        series: [{ event: '$pageview' }],
        dateRange,
        breakdownFilter: { breakdown: '$browser', breakdown_limit: 3 },
      }),
    // Burrow's answer is a series per value by day: the same counts per (value, day) here, one pass
    // over events; ranking the handful of values (top 3 by total, the rest summed as "other") is
    // left to the comparison, which costs nothing next to the query.
    reference: () =>
      hand(
        `SELECT JSONExtractString(properties, '$browser') AS b, toDate(timestamp) AS d, count() AS n FROM events` +
          ` WHERE team_id = ${team} AND event = '$pageview' AND toDate(timestamp) >= '${from30}'` +
          ` AND toDate(timestamp) <= '${to}' GROUP BY b, d`,
      ),
    same: (ours, theirs) => {
      const total = new Map<string, number>()
      for (const r of theirs) total.set(r.b, (total.get(r.b) ?? 0) + Number(r.n))
      const ranked = [...total].sort((x, y) => y[1] - x[1] || (x[0] < y[0] ? -1 : 1)).map(([b]) => b)
      const top = ranked.slice(0, 3)
      const other = '$$_posthog_breakdown_other_$$'
      const days: string[] = ours[0].days
      const series = (bv: string) =>
        days.map((d) =>
          theirs
            .filter((r: any) => r.d === d && (bv === other ? !top.includes(r.b) : r.b === bv))
            .reduce((a: number, r: any) => a + Number(r.n), 0),
        )
      return [
        ours.map((s: any) => [s.breakdown_value, s.data]),
        [...top, other].map((bv) => [bv, series(bv)]),
      ]
    },
  },
  {
    name: 'lifecycle: daily, 30 days, $pageview',
    run: () => insight({ kind: 'LifecycleQuery', series: [{ event: '$pageview' }], dateRange }),
    // One pass over events: each person's active days (sorted Dates) and, joined once per person,
    // the day they were created; every status is read off neighbouring days (the previous active day,
    // the next one), as an array per person that ARRAY JOIN unrolls. Lambdas take every value as an
    // argument: 18.16 loses columns a lambda only captures. Events sent with
    // `$process_person_profile: false` are left out, as PostHog's lifecycle does (the generated data
    // has none, but the answer has to read each event's properties to know that: a plain lookup).
    reference: () => {
      const lo = iso(today - 30 * DAY)
      const hi = iso(today + DAY)
      const perPerson =
        'SELECT days, created FROM (SELECT person_id AS pid, arraySort(groupUniqArray(toDate(timestamp))) AS days' +
        ` FROM events WHERE team_id = ${team} AND event = '$pageview' AND toDate(timestamp) >= toDate('${lo}')` +
        ` AND toDate(timestamp) < toDate('${hi}')` +
        " AND JSONExtractRaw(properties, '$process_person_profile') != 'false'" +
        ' GROUP BY pid) AS e ANY LEFT JOIN (SELECT id AS pid,' +
        ` toDate(argMax(created_at, version)) AS created FROM person WHERE team_id = ${team} GROUP BY id) AS p USING pid`
      const statuses =
        'SELECT arrayJoin(arrayConcat(arrayMap((a, p, i) -> tuple(a, multiIf(i = 1 AND p = a, 1, i > 1 AND p = a - 1, 2, 3)),' +
        ' days, prevs, arrayEnumerate(days)), arrayMap(a -> tuple(a + 1, 4), arrayFilter((a, nx) -> nx != a + 1, days, nexts))))' +
        ' AS ps FROM (SELECT days, arrayPushFront(arrayPopBack(days), created) AS prevs,' +
        ` arrayPushBack(arrayPopFront(days), toDate(0)) AS nexts FROM (${perPerson}))`
      return hand(
        "SELECT toString(d) AS day, ['new', 'returning', 'resurrecting', 'dormant'][s] AS status, count() AS n FROM" +
          ` (SELECT tupleElement(ps, 1) AS d, tupleElement(ps, 2) AS s FROM (${statuses}))` +
          ` WHERE d >= toDate('${from30}') AND d <= toDate('${to}') GROUP BY d, s`,
      )
    },
    same: (ours, theirs) => {
      const key = (day: string, status: string) => `${day}|${status}`
      const ref = new Map(theirs.map((r: any) => [key(r.day, r.status), Number(r.n)]))
      return [
        ours.map((s: any) => s.data),
        ours.map((s: any) =>
          s.days.map(
            (d: string) => (s.status === 'dormant' ? -1 : 1) * ((ref.get(key(d, s.status)) as number) ?? 0),
          ),
        ),
      ]
    },
  },
  {
    name: 'stickiness: daily, 30 days, $pageview',
    run: () => insight({ kind: 'StickinessQuery', series: [{ event: '$pageview' }], dateRange }),
    reference: () =>
      hand(
        'SELECT n, count() AS persons FROM (SELECT person_id, uniqExact(toDate(timestamp)) AS n FROM events' +
          ` WHERE team_id = ${team} AND event = '$pageview' AND toDate(timestamp) >= '${from30}'` +
          ` AND toDate(timestamp) <= '${to}' GROUP BY person_id) GROUP BY n ORDER BY n`,
      ),
    same: (ours, theirs) => {
      const byN = new Map(theirs.map((r: any) => [Number(r.n), Number(r.persons)]))
      return [ours[0].data, ours[0].days.map((n: number) => byN.get(n) ?? 0)]
    },
  },
  {
    name: 'funnel: $pageview -> signup -> purchase, ordered, 14-day window, 30 days',
    run: () =>
      insight({
        kind: 'FunnelsQuery',
        series: ['$pageview', 'signup', 'purchase'].map((event) => ({ kind: 'EventsNode', event })),
        dateRange,
        funnelsFilter: { funnelWindowInterval: 14, funnelWindowIntervalUnit: 'day' },
      }),
    // ClickHouse's own windowFunnel: the furthest step of each person, in order, within 14 days of the
    // first step (the same answer as PostHog's ordered funnel when no two of a person's step events
    // share a second). It computes only the step counts: Burrow's response also carries each
    // step's average and median conversion time, which windowFunnel cannot give, so this is a lower
    // bound rather than the same answer; no faster SQL for the counts was found (checked again in
    // docs/performance.md, "Funnels: masks, scalar chain keys, times a level up").
    reference: () =>
      hand(
        `SELECT level, count() AS n FROM (SELECT person_id, windowFunnel(${14 * 86400})(timestamp,` +
          " event = '$pageview', event = 'signup', event = 'purchase') AS level FROM events" +
          ` WHERE team_id = ${team} AND event IN ('$pageview', 'signup', 'purchase')` +
          ` AND timestamp >= toDateTime('${from30} 00:00:00', 'UTC') AND timestamp <= toDateTime('${to} 23:59:59', 'UTC')` +
          ` AND toDate(timestamp) >= toDate('${from30}') AND toDate(timestamp) <= toDate('${to}')` +
          ' GROUP BY person_id) WHERE level > 0 GROUP BY level',
      ),
    same: (ours, theirs) => {
      const ended = new Map(theirs.map((r: any) => [Number(r.level), Number(r.n)]))
      const reached = [1, 2, 3].map((k) =>
        [1, 2, 3].filter((l) => l >= k).reduce((a, l) => a + ((ended.get(l) as number) ?? 0), 0),
      )
      return [ours.map((s: any) => s.count), reached]
    },
  },
  {
    name: 'retention: recurring, daily, 8 days, $pageview',
    run: () =>
      insight({
        kind: 'RetentionQuery',
        dateRange: { date_to: to },
        retentionFilter: {
          retentionType: 'retention_recurring',
          period: 'Day',
          totalIntervals: 8,
          targetEntity: { id: '$pageview', type: 'events' },
          returningEntity: { id: '$pageview', type: 'events' },
        },
      }),
    reference: () => {
      const first = iso(today - 7 * DAY)
      return hand(
        'SELECT c, k, count() AS n FROM (SELECT c, arrayJoin(arrayFilter(x -> x >= 0, arrayMap(d -> d - c, days))) AS k' +
          ` FROM (SELECT person_id, groupUniqArray(toUInt32(toDate(timestamp) - toDate('${first}'))) AS days FROM events` +
          ` WHERE team_id = ${team} AND event = '$pageview' AND toDate(timestamp) >= toDate('${first}')` +
          ` AND toDate(timestamp) <= toDate('${to}') GROUP BY person_id) ARRAY JOIN days AS c) GROUP BY c, k`,
      )
    },
    same: (ours, theirs) => {
      const ref = new Map(theirs.map((r: any) => [`${r.c}:${r.k}`, Number(r.n)]))
      return [
        ours.map((row: any) => row.values.map((v: any) => v.count)),
        ours.map((row: any, c: number) => row.values.map((_: any, k: number) => ref.get(`${c}:${k}`) ?? 0)),
      ]
    },
  },
]

// A dashboard of 10 insights over the whole 90 days, loaded as the app loads it (refresh 'blocking':
// a result cached within the last minute is reused), twice: the second load is what a user sees when
// coming back to it. DASHBOARD=0 skips it.
const from90 = iso(start)
const range90 = { date_from: from90, date_to: to }
const pv = { kind: 'EventsNode', event: '$pageview' }
const dashboard: Record<string, unknown>[] = [
  { kind: 'TrendsQuery', series: [{ ...pv, math: 'dau' }], dateRange: range90 },
  { kind: 'TrendsQuery', series: [pv], dateRange: range90 },
  {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: 'signup' }],
    dateRange: range90,
    interval: 'week',
  },
  {
    kind: 'TrendsQuery',
    series: [pv],
    dateRange: range90,
    breakdownFilter: { breakdown: '$browser', breakdown_limit: 3 },
  },
  {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' }],
    dateRange: range90,
  },
  { kind: 'LifecycleQuery', series: [pv], dateRange: range90 },
  { kind: 'StickinessQuery', series: [pv], dateRange: range90 },
  {
    kind: 'FunnelsQuery',
    series: ['$pageview', 'signup', 'purchase'].map((event) => ({ kind: 'EventsNode', event })),
    dateRange: range90,
  },
  {
    kind: 'RetentionQuery',
    dateRange: range90,
    retentionFilter: {
      period: 'Week',
      totalIntervals: 8,
      targetEntity: { id: '$pageview', type: 'events' },
      returningEntity: { id: 'purchase', type: 'events' },
    },
  },
  {
    kind: 'TrendsQuery',
    series: [{ kind: 'EventsNode', event: 'click' }],
    dateRange: range90,
    interval: 'month',
  },
]

async function loadDashboard(): Promise<number> {
  const t0 = performance.now()
  for (const q of dashboard) await insight(q, 'blocking')
  return performance.now() - t0
}

const p50 = (ms: number[]) =>
  percentile(
    [...ms].sort((a, b) => a - b),
    50,
  )
const f1 = (x: number) => x.toFixed(1)

try {
  await generate()
  let failed = false
  const rows: string[] = []
  const serverNotes: string[] = []
  for (const c of cases.filter((x) => !process.env.ONLY || x.name.includes(process.env.ONLY))) {
    compileMs = []
    wallMs = []
    let ours: Awaited<ReturnType<typeof timed>>
    try {
      ours = await timed(c.run)
    } catch (err) {
      // a failing kind is a row of the table, not the end of the run
      failed = true
      rows.push(`| ${c.name} | failed: ${String(err).slice(0, 160)} |`)
      console.log(rows[rows.length - 1])
      continue
    }
    const compile = compileMs
    const sql = lastSql
    const theirs = await timed(c.reference)
    if (process.env.SQL_DIR) {
      const file = join(process.env.SQL_DIR, c.name.replace(/[^a-z0-9]+/gi, '-').slice(0, 40))
      writeFileSync(`${file}.burrow.sql`, `${sql}\n`)
      writeFileSync(`${file}.hand.sql`, `${lastHandSql}\n`)
    }
    const itsSql = await timed(() => direct(sql, burrowSettings))
    const fixed = wallMs.map((w) => w - p50(itsSql.ms))
    // `fixed paired`: each Burrow run followed at once by its SQL run directly, the difference taken
    // run by run, which a loaded machine moves less than the difference of two separate p50s
    const paired: number[] = []
    inRequestMs = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      await c.run()
      const t1 = performance.now()
      await direct(sql, burrowSettings)
      paired.push(t1 - t0 - (performance.now() - t1))
    }
    // the same rows read by both means the difference is computing, not reading
    serverNotes.push(
      `${c.name}: its SQL ${await serverStats(sql, burrowSettings)}; by hand ${await serverStats(lastHandSql)}`,
    )
    const [a, b] = c.same(ours.last, theirs.last)
    const ok = JSON.stringify(a) === JSON.stringify(b)
    if (!ok) failed = true
    const ratio = p50(ours.ms) / p50(theirs.ms)
    rows.push(
      `| ${c.name} | ${f1(p50(ours.ms))} | ${f1(p50(theirs.ms))} | ${ratio.toFixed(2)} | ${f1(p50(itsSql.ms))} | ${(p50(itsSql.ms) / p50(theirs.ms)).toFixed(2)} | ${f1(itsSql.cpu)} | ${f1(theirs.cpu)} | ${(itsSql.cpu / theirs.cpu).toFixed(2)} | ${f1(p50(fixed))} | ${f1(p50(paired))} | ${f1(p50(inRequestMs))} | ${f1(fixed[0] ?? NaN)} | ${f1(p50(compile))} | ${ok ? 'match' : 'DIFFER'} |`,
    )
    console.log(rows[rows.length - 1])
    if (!ok)
      console.log(
        `  ours:    ${JSON.stringify(a).slice(0, 400)}\n  by hand: ${JSON.stringify(b).slice(0, 400)}`,
      )
  }
  const version = ((await hand('SELECT version() AS v')) as { v: string }[])[0]?.v
  console.log(
    `\nClickHouse ${version}, ${EVENTS} events, ${PERSONS} persons, p50 of ${RUNS} runs (ms)\n` +
      '| case | burrow | by hand | ratio | its SQL | its SQL / by hand | server CPU: its SQL | by hand | CPU ratio | fixed | fixed paired | fixed in request | fixed cold | compile | answers |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
      rows.join('\n'),
  )
  console.log(
    `\nClickHouse's statistics (one run each; elapsed excludes its parse and analysis):\n${serverNotes.join('\n')}`,
  )
  if (process.env.DASHBOARD !== '0') {
    const first = await loadDashboard()
    const second = await loadDashboard()
    console.log(
      `\ndashboard of ${dashboard.length} insights over ${DAYS} days: first load ${f1(first)} ms, second ${f1(second)} ms`,
    )
  }
  if (failed) process.exitCode = 1
} finally {
  await ch.close()
  await lean.close()
  await burrow.cleanup()
}

// HogQL through the query endpoint against hand-written ClickHouse SQL for the same answers, on a
// generated data set (bench/dataset.ts), in one run: the compiler's and the endpoint's overhead.
// Run: npx tsx bench/query.ts   (env EVENTS (10M), PERSONS (100K), RUNS (5))
import { compileHogQL, compileHogQLSync } from '../src/hogql/index.ts'
import { fastParseSelect } from '../src/hogql/fast-parse.ts'
import { getParser, identifierOracle, parseSelectWasm } from '../src/hogql/parse.ts'
import { type ClickHouseClient, clickhouseClient } from '../src/clickhouse/client.ts'
import { type Dataset, generateDataset, verifyDataset } from './dataset.ts'
import { benchBurrow, percentile, procStats, processTree } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 10_000_000)
const PERSONS = Number(process.env.PERSONS ?? 100_000)
const RUNS = Number(process.env.RUNS ?? 5)
const COMPILE_RUNS = 30

interface BenchQuery {
  name: string
  hogql: string
  sql: string
}

const text = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')

// The same questions twice: in HogQL as a PostHog user writes them, and in ClickHouse SQL as one would
// write it by hand against schema/clickhouse/ (team filter, array lookups, overrides joined once).
// Time ranges are fixed to the data set's last 30 days so every run sees the same rows.
function benchQueries(ds: Dataset): BenchQuery[] {
  const T = ds.teamId
  const from = text(ds.endMs - 30 * 86_400_000)
  const to = text(ds.endMs)
  const fromDay = from.slice(0, 10)
  const range = `timestamp >= '${from}' AND timestamp < '${to}'`
  const chRange = `timestamp >= toDateTime('${from}', 'UTC') AND timestamp < toDateTime('${to}', 'UTC')`
  const prop = (key: string) => `JSONExtractString(properties, '${key}')`
  const overrides = `(SELECT old_person_id AS person_id,
      argMax(override_person_id, version) AS override_person_id
    FROM person_overrides WHERE team_id = ${T} GROUP BY old_person_id)`
  const zero = "toUUID('00000000-0000-0000-0000-000000000000')"
  const pid = `if(override_person_id = ${zero}, person_id, override_person_id)`
  return [
    {
      name: 'count by event, 30 days',
      hogql: `SELECT event, count() AS c FROM events WHERE ${range} GROUP BY event ORDER BY c DESC, event`,
      sql: `SELECT event, count() AS c FROM events WHERE team_id = ${T} AND ${chRange}
        GROUP BY event ORDER BY c DESC, event`,
    },
    {
      name: 'daily unique persons, $pageview',
      hogql: `SELECT toStartOfDay(timestamp) AS day, count(DISTINCT person_id) AS persons FROM events
        WHERE event = '$pageview' AND ${range} GROUP BY day ORDER BY day`,
      sql: `SELECT toStartOfDay(timestamp) AS day, uniqExact(${pid}) AS persons
        FROM events ANY LEFT JOIN ${overrides} USING person_id
        WHERE team_id = ${T} AND event = '$pageview' AND ${chRange} GROUP BY day ORDER BY day`,
    },
    {
      name: 'event property filter',
      hogql: `SELECT properties.$os AS os, count() AS c FROM events
        WHERE event = '$pageview' AND properties.$browser = 'Safari' AND ${range} GROUP BY os ORDER BY os`,
      sql: `SELECT ${prop('$os')} AS os, count() AS c FROM events
        WHERE team_id = ${T} AND event = '$pageview' AND ${prop('$browser')} = 'Safari' AND ${chRange}
        GROUP BY os ORDER BY os`,
    },
    {
      name: 'person property filter',
      hogql: `SELECT count() AS purchases, count(DISTINCT person_id) AS buyers,
          sum(toFloat(properties.amount)) AS revenue
        FROM events WHERE event = 'purchase' AND person.properties.plan = 'pro' AND ${range}`,
      sql: `SELECT count(), uniqExact(pid), sum(toFloat64OrNull(amount)) FROM (
          SELECT ${pid} AS pid, ${prop('amount')} AS amount
          FROM events ANY LEFT JOIN ${overrides} USING person_id
          WHERE team_id = ${T} AND event = 'purchase' AND ${chRange}
        ) WHERE pid IN (
          SELECT id FROM person WHERE team_id = ${T} GROUP BY id
          HAVING argMax(${prop('plan')}, version) = 'pro' AND argMax(is_deleted, version) = 0
        )`,
    },
    {
      name: 'top URLs',
      hogql: `SELECT properties.$current_url AS url, count() AS views FROM events
        WHERE event = '$pageview' AND ${range} GROUP BY url ORDER BY views DESC, url LIMIT 10`,
      sql: `SELECT ${prop('$current_url')} AS url, count() AS views FROM events
        WHERE team_id = ${T} AND event = '$pageview' AND ${chRange}
        GROUP BY url ORDER BY views DESC, url LIMIT 10`,
    },
    {
      name: 'CTE: session lengths',
      hogql: `WITH sessions AS (
          SELECT $session_id AS session, count() AS n,
            dateDiff('second', min(timestamp), max(timestamp)) AS duration
          FROM events WHERE ${range} GROUP BY session
        )
        SELECT n, count() AS sessions, avg(duration) AS avg_duration FROM sessions GROUP BY n ORDER BY n`,
      sql: `SELECT n, count() AS sessions, avg(duration) FROM (
          SELECT session_id, count() AS n, max(timestamp) - min(timestamp) AS duration
          FROM events WHERE team_id = ${T} AND ${chRange} GROUP BY session_id
        ) GROUP BY n ORDER BY n`,
    },
    {
      name: 'IN subquery: buyers on /pricing',
      hogql: `SELECT count(DISTINCT person_id) AS persons FROM events
        WHERE event = '$pageview' AND properties.$current_url = 'https://example.com/pricing' AND ${range}
          AND person_id IN (SELECT person_id FROM events WHERE event = 'purchase' AND ${range})`,
      sql: `SELECT uniqExact(pid) FROM (
          SELECT ${pid} AS pid FROM events ANY LEFT JOIN ${overrides} USING person_id
          WHERE team_id = ${T} AND event = '$pageview'
            AND ${prop('$current_url')} = 'https://example.com/pricing' AND ${chRange}
        ) WHERE pid IN (
          SELECT ${pid} FROM events ANY LEFT JOIN ${overrides} USING person_id
          WHERE team_id = ${T} AND event = 'purchase' AND ${chRange}
        )`,
    },
    {
      // The view serves both sources for every project; the hand-written query reads only what it needs.
      name: 'feature_flag_usage',
      hogql: `SELECT flag, variant, sum(calls) AS calls, sum(unique_persons) AS persons
        FROM feature_flag_usage
        WHERE source = 'called' AND day >= '${fromDay}' GROUP BY flag, variant ORDER BY flag, variant`,
      sql: `SELECT flag, variant, sum(calls), sum(persons) FROM (
          SELECT ${prop('$feature_flag')} AS flag, ${prop('$feature_flag_response')} AS variant,
            toDate(timestamp) AS day, count() AS calls, uniqExact(${pid}) AS persons
          FROM events ANY LEFT JOIN ${overrides} USING person_id
          WHERE team_id = ${T} AND event = '$feature_flag_called' AND JSONHas(properties, '$feature_flag')
            AND toDate(timestamp) >= toDate('${fromDay}')
          GROUP BY flag, variant, day
        ) GROUP BY flag, variant ORDER BY flag, variant`,
    },
    {
      name: "one user's latest events",
      hogql: `SELECT uuid, event, timestamp, properties.$current_url AS url FROM events
        WHERE distinct_id = 'user-42' ORDER BY timestamp DESC LIMIT 20`,
      sql: `SELECT uuid, event, timestamp, ${prop('$current_url')} FROM events
        WHERE team_id = ${T} AND distinct_id = 'user-42' ORDER BY timestamp DESC LIMIT 20`,
    },
  ]
}

// Rows compared as text: numbers (quoted 64-bit ones too) to 12 significant digits, date-times (with
// or without a fraction, read as UTC) to epoch milliseconds.
const DATE_TIME = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?Z?$/
const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/
function normalize(rows: unknown[][]): string {
  const cell = (v: unknown): string => {
    if (typeof v === 'string' && DATE_TIME.test(v))
      return String(Date.parse(`${v.replace(' ', 'T').replace(/Z$/, '')}Z`))
    if (typeof v === 'number' || (typeof v === 'string' && NUMBER.test(v))) {
      const n = Number(v)
      return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(12)))
    }
    return JSON.stringify(v)
  }
  return JSON.stringify(rows.map((r) => r.map(cell)))
}

interface Timed {
  ms: number
  rows: unknown[][]
  executeMs?: number
}

async function runHogQL(url: string, teamId: number, key: string, query: string): Promise<Timed> {
  const t0 = performance.now()
  const res = await fetch(`${url}/api/projects/${teamId}/query/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query: { kind: 'HogQLQuery', query }, refresh: 'force_blocking' }),
  })
  const body = (await res.json()) as { results?: unknown[][]; timings?: { k: string; t: number }[] }
  const ms = performance.now() - t0
  if (res.status !== 200 || !body.results)
    throw new Error(`query endpoint: ${res.status} ${JSON.stringify(body)}`)
  const execute = body.timings?.find((t) => t.k === './execute')
  return { ms, rows: body.results, executeMs: execute ? execute.t * 1000 : undefined }
}

async function runSql(ch: ClickHouseClient, sql: string): Promise<Timed> {
  const t0 = performance.now()
  const rs = await ch.query({ query: sql, format: 'JSONCompact' })
  const body = (await rs.json()) as { data: unknown[][] }
  return { ms: performance.now() - t0, rows: body.data }
}

// Compile time, and what parsing costs in it: wall-clock p50 per compile, and CPU time per compile
// over the whole loop, which the other processes on a shared machine disturb less; then each parser
// alone: PostHog's (WebAssembly) and the fast one (src/hogql/fast-parse.ts; NaN when the statement
// is outside its subset and the compile uses PostHog's). Each compile gets a text of its own (a
// comment at the end) so the parse cache does not answer it.
async function compileTimes(
  hogql: string,
  teamId: number,
): Promise<{ p50: number; cpu: number; wasm: number; fast: number }> {
  const parser = await getParser()
  for (let i = 0; i < 5; i++) await compileHogQL(hogql, { teamId })
  const ms: number[] = []
  const parseMs: number[] = []
  const cpu0 = process.cpuUsage()
  for (let i = 0; i < COMPILE_RUNS; i++) {
    const t0 = performance.now()
    compileHogQLSync(`${hogql} /* ${i} */`, { teamId })
    ms.push(performance.now() - t0)
  }
  const cpu = process.cpuUsage(cpu0)
  for (let i = 0; i < COMPILE_RUNS; i++) {
    const t0 = performance.now()
    parseSelectWasm(parser, hogql)
    parseMs.push(performance.now() - t0)
  }
  const fastMs: number[] = []
  for (let i = 0; i < COMPILE_RUNS; i++) {
    const t0 = performance.now()
    try {
      fastParseSelect(hogql, identifierOracle(parser))
    } catch {
      fastMs.push(Number.NaN)
      continue
    }
    fastMs.push(performance.now() - t0)
  }
  return {
    p50: p50(ms),
    cpu: (cpu.user + cpu.system) / 1000 / COMPILE_RUNS,
    wasm: p50(parseMs),
    fast: fastMs.some(Number.isNaN) ? Number.NaN : p50(fastMs),
  }
}

const p50 = (ms: number[]) =>
  percentile(
    [...ms].sort((a, b) => a - b),
    50,
  )

const burrow = await benchBurrow()
// The embedded ClickHouse server's process: its CPU time across a side's runs is the work that side
// costs the server, which the machine's load hardly changes (wall times at load follow the scheduler).
const serverPid = processTree(burrow.pid).find((p) => procStats(p)?.name.startsWith('clickhouse')) ?? 0
const serverCpuMs = () => (procStats(serverPid)?.cpuSeconds ?? Number.NaN) * 1000
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const teamId = burrow.credentials.project_id
const key = burrow.credentials.personal_api_key
let mismatches = 0
try {
  console.log(`generating ${EVENTS} events, ${PERSONS} persons for team ${teamId} …`)
  const ds = await generateDataset(ch, {
    teamId,
    events: EVENTS,
    persons: PERSONS,
    log: (line) => console.log(`  ${line}`),
  })
  await verifyDataset(ch, ds)
  console.log(
    `data set ready in ${ds.seconds.toFixed(1)} s (${Math.round(ds.events / ds.seconds)} events/s), verified`,
  )
  console.log(
    `\np50 of ${RUNS} runs after a warm-up. compile: compileHogQL p50 (${COMPILE_RUNS} runs), cpu: its CPU time` +
      " per compile, wasm / fast: PostHog's parser / the fast parser alone (p50; fast NaN: not in its subset, the compile uses PostHog's); endpoint: POST /query/ end to end;" +
      ' execute: its ClickHouse part;' +
      '\nratios: endpoint / hand SQL, and execute / hand SQL (the printed SQL against the hand-written one);' +
      ' server CPU: ClickHouse CPU ms per run, endpoint (its statement and bookkeeping) / hand SQL, and their ratio',
  )
  console.log(
    `${'query'.padEnd(34)} ${'compile'.padStart(9)} ${'cpu'.padStart(9)} ${'wasm'.padStart(9)} ${'fast'.padStart(9)} ` +
      `${'endpoint'.padStart(9)} ${'execute'.padStart(9)} ` +
      `${'hand SQL'.padStart(9)} ${'ratio'.padStart(6)} ${'SQL'.padStart(6)} ${'server CPU'.padStart(11)} ${'CPU'.padStart(6)}  answers`,
  )
  for (const q of benchQueries(ds)) {
    const compile = await compileTimes(q.hogql, teamId)
    const hog: Timed[] = []
    const hand: Timed[] = []
    // warm-up, then alternate so both see the same cache state
    await runHogQL(burrow.url, teamId, key, q.hogql)
    await runSql(ch, q.sql)
    let hogCpu = 0
    let handCpu = 0
    for (let i = 0; i < RUNS; i++) {
      let c0 = serverCpuMs()
      hog.push(await runHogQL(burrow.url, teamId, key, q.hogql))
      hogCpu += serverCpuMs() - c0
      c0 = serverCpuMs()
      hand.push(await runSql(ch, q.sql))
      handCpu += serverCpuMs() - c0
    }
    const expected = normalize(hand[0]!.rows)
    const same = [...hog, ...hand].every((t) => normalize(t.rows) === expected)
    if (!same) mismatches++
    const endpoint = p50(hog.map((t) => t.ms))
    const execute = p50(hog.map((t) => t.executeMs ?? Number.NaN))
    const handMs = p50(hand.map((t) => t.ms))
    const f = (ms: number) => `${ms.toFixed(ms < 0.1 ? 3 : 1)} ms`.padStart(9)
    const ratio = (x: number, y: number) => `${(x / y).toFixed(2)}x`.padStart(6)
    const verdict = same ? `match (${hand[0]!.rows.length} rows)` : 'DIFFER'
    console.log(
      `${q.name.padEnd(34)} ${f(compile.p50)} ${f(compile.cpu)} ${f(compile.wasm)} ${f(compile.fast)} ` +
        `${f(endpoint)} ${f(execute)} ${f(handMs)} ` +
        `${ratio(endpoint, handMs)} ${ratio(execute, handMs)} ${`${(hogCpu / RUNS).toFixed(0)}/${(handCpu / RUNS).toFixed(0)}`.padStart(11)} ${ratio(hogCpu, handCpu)}  ${verdict}`,
    )
    if (!same) {
      console.log(`  hogql: ${normalize(hog[0]!.rows).slice(0, 600)}`)
      console.log(`  sql:   ${expected.slice(0, 600)}`)
    }
  }
} finally {
  await ch.close()
  await burrow.cleanup()
}
if (mismatches > 0) {
  console.error(`${mismatches} queries answered differently`)
  process.exitCode = 1
}

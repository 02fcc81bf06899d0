/* eslint-disable @typescript-eslint/no-explicit-any -- loosely typed JSON responses */
// PathsQuery latency: EVENTS page views (default 2M) of PERSONS persons (default 20K) over 7 days,
// generated inside ClickHouse, then each case through POST /query/ against the best hand-written
// ClickHouse SQL we know for the same answer, in the same run; the answers must match.
// Run: npx tsx bench/paths.ts   (env EVENTS, PERSONS, RUNS; ONLY=<part of a case name>)
//
// The hand-written query does what PostHog's paths do, as directly as ClickHouse allows: one pass
// over the day range of the sort key, the URL read from the JSON text (events keep properties as
// JSON only, as PostHog does), no person-override join (the generated persons are never merged),
// one sort per person, sessions by arraySplit, the edges by one arrayJoin per session (no second
// ARRAY JOIN level). Burrow's request is split as in
// bench/insights.ts: `its SQL` is the statement Burrow sent, run from here; `fixed` is the rest of
// the request (HTTP, auth, compile, shaping); `server CPU` the ClickHouse process's CPU per run.
import { selectJson } from '../src/clickhouse/client.ts'
import { guardSettings } from '../src/hogql/server-settings.ts'
import { readServerInfo } from '../src/queries/execute.ts'
import { reachableEdges } from '../src/paths/results.ts'
import { benchBurrow, benchClickHouse, percentile } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 2_000_000)
const PERSONS = Number(process.env.PERSONS ?? 20_000)
const RUNS = Number(process.env.RUNS ?? 5)
const DAYS = 7

const burrow = await benchBurrow({})
const { ch, lean, serverCpuMs } = benchClickHouse(burrow)
const { project_id: team, personal_api_key: key } = burrow.credentials

const DAY = 86_400_000
const today = Math.floor(Date.now() / DAY) * DAY
const start = today - (DAYS - 1) * DAY
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const dateRange = { date_from: iso(start), date_to: iso(today) }

/** The physical columns are changing (timestamp may become DateTime64): insert by name, what exists. */
async function eventColumns(): Promise<Set<string>> {
  const rows = (await selectJson(
    lean,
    `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events'`,
    { format: 'JSONEachRow' },
  )) as { name: string }[]
  return new Set(rows.map((r) => r.name))
}

async function generate() {
  const t0 = performance.now()
  const cols = await eventColumns()
  const per = Math.max(1, Math.floor(EVENTS / PERSONS))
  // Person p's k-th event: a start in the range, about 5 minutes apart, an hour's gap (a new
  // session) every 12 events; 12 pages, picked by hash. Whole seconds, so every reading of the
  // timestamp agrees.
  const ts =
    `toDateTime(${start / 1000} + cityHash64(p) % ${(DAYS - 2) * 86400} + k * 300 + intDiv(k, 12) * 3600` +
    ' + cityHash64(n, 1) % 200)'
  const pages = `['/', '/pricing', '/about', '/blog', '/docs', '/docs/start', '/signup', '/login', '/app', '/app/settings', '/contact', '/careers']`
  const named: [string, string][] = [
    ['team_id', String(team)],
    ['uuid', 'generateUUIDv4()'],
    ['event', `'$pageview'`],
    ['distinct_id', `concat('user-', toString(p))`],
    ['person_id', `toUUID(concat('00000000-0000-4000-8000-', leftPad(toString(p), 12, '0')))`],
    ['timestamp', 'ts'],
    ['properties', `concat('{"$current_url":"', url, '"}')`],
  ]
  if (cols.has('timestamp_ms')) named.push(['timestamp_ms', 'toInt64(toUnixTimestamp(ts)) * 1000'])
  await ch.command({
    query:
      `INSERT INTO events (${named.map(([c]) => `\`${c}\``).join(', ')}) SELECT ${named.map(([, v]) => v).join(', ')} FROM (` +
      ` SELECT number AS n, intDiv(number, ${per}) AS p, number % ${per} AS k, ${ts} AS ts,` +
      ` ${pages}[1 + cityHash64(number, 2) % 12] AS url FROM system.numbers LIMIT ${per * PERSONS})`,
  })
  console.log(
    `generated ${per * PERSONS} events, ${PERSONS} persons in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  )
}

let lastSql = ''
let wallMs: number[] = []
async function paths(pathsFilter: Record<string, unknown>) {
  const t0 = performance.now()
  const res = await fetch(`${burrow.url}/api/projects/${team}/query/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      query: { kind: 'PathsQuery', dateRange, pathsFilter },
      refresh: 'force_blocking',
    }),
  })
  const body = (await res.json()) as { results: any[]; clickhouse?: string }
  wallMs.push(performance.now() - t0)
  if (res.status !== 200) throw new Error(`PathsQuery: ${res.status} ${JSON.stringify(body)}`)
  lastSql = body.clickhouse ?? ''
  return body.results
}

/** The hand-written edges: `cut` maps a session's deduplicated (ms, url) pairs to its steps. */
function handSql(cut: string, where = ''): string {
  return `SELECT source, target, count() AS value, avg(gap) AS average_conversion_time
FROM (
  SELECT arrayJoin(arrayMap(i -> (concat(toString(i - 1), '_', path[i - 1].2), concat(toString(i), '_', path[i].2), path[i].1 - path[i - 1].1), range(2, length(path) + 1))) AS e,
    e.1 AS source, e.2 AS target, e.3 AS gap
  FROM (
    SELECT ${cut} AS path
    FROM (
      SELECT arrayFilter((x, keep) -> keep, s, arrayMap((a, b) -> a.2 != b.2, s, arrayPushBack(arrayPopFront(s), (toInt64(0), '')))) AS d
      FROM (
        SELECT arraySort(groupArray((toInt64(toUnixTimestamp(timestamp)) * 1000,
          replaceRegexpAll(JSONExtractString(properties, '$current_url'), '(.)/$', '\\\\1')))) AS evs
        FROM events
        WHERE team_id = ${team} AND event = '$pageview' AND toDate(timestamp) >= '${dateRange.date_from}' AND toDate(timestamp) <= '${dateRange.date_to}'
        GROUP BY person_id
      )
      ARRAY JOIN arraySplit((x, g) -> g >= 1800000, evs, arrayDifference(arrayMap(x -> x.1, evs))) AS s
    )
    ${where}
  )
)
GROUP BY source, target
ORDER BY value DESC, source, target
LIMIT 50`
}

let lastHand = ''
async function hand(sql: string) {
  lastHand = sql
  const rows = (await selectJson(lean, sql, { format: 'JSONEachRow' })) as any[]
  return reachableEdges(
    rows.map((r) => ({
      source: r.source,
      target: r.target,
      value: Number(r.value),
      average_conversion_time: Number(r.average_conversion_time),
    })),
  )
}

const burrowSettings = guardSettings(await readServerInfo(ch))
const direct = (sql: string) => selectJson(lean, sql, { format: 'JSONCompact', settings: burrowSettings })

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

const cases: { name: string; run: () => Promise<any[]>; reference: () => Promise<any[]> }[] = [
  {
    name: 'page views, 5 steps, 50 edges',
    run: () => paths({ includeEventTypes: ['$pageview'] }),
    reference: () => hand(handSql('arraySlice(d, 1, 5)')),
  },
  {
    name: 'from /pricing, 5 steps',
    run: () => paths({ includeEventTypes: ['$pageview'], startPoint: '/pricing' }),
    reference: () =>
      hand(
        handSql(
          `arraySlice(d, indexOf(arrayMap(x -> x.2, d), '/pricing'), 5)`,
          `WHERE has(arrayMap(x -> x.2, d), '/pricing')`,
        ),
      ),
  },
]

const p50 = (ms: number[]) =>
  percentile(
    [...ms].sort((a, b) => a - b),
    50,
  )
const f1 = (x: number) => x.toFixed(1)
// averages of many ms values: equal to the float's last digits
const rounded = (edges: any[]) =>
  edges.map((e) => ({ ...e, average_conversion_time: Math.round(e.average_conversion_time * 1000) / 1000 }))

try {
  await generate()
  let failed = false
  const rows: string[] = []
  for (const c of cases.filter((x) => !process.env.ONLY || x.name.includes(process.env.ONLY))) {
    wallMs = []
    const ours = await timed(c.run)
    const sql = lastSql
    const theirs = await timed(c.reference)
    const itsSql = await timed(() => direct(sql))
    const ok = JSON.stringify(rounded(ours.last)) === JSON.stringify(rounded(theirs.last))
    if (!ok) {
      failed = true
      console.log(
        `  ours:    ${JSON.stringify(ours.last).slice(0, 400)}\n  by hand: ${JSON.stringify(theirs.last).slice(0, 400)}`,
      )
    }
    rows.push(
      `| ${c.name} | ${f1(p50(ours.ms))} | ${f1(p50(theirs.ms))} | ${(p50(ours.ms) / p50(theirs.ms)).toFixed(2)} | ${f1(p50(itsSql.ms))} | ${(p50(itsSql.ms) / p50(theirs.ms)).toFixed(2)} | ${f1(itsSql.cpu)} | ${f1(theirs.cpu)} | ${(itsSql.cpu / theirs.cpu).toFixed(2)} | ${f1(p50(ours.ms) - p50(itsSql.ms))} | ${ours.last.length} | ${ok ? 'match' : 'DIFFER'} |`,
    )
    console.log(rows[rows.length - 1])
    if (process.env.SHOW_SQL) console.log(`${sql}\n\n${lastHand}`)
  }
  const version = (
    (await selectJson(lean, 'SELECT version() AS v', { format: 'JSONEachRow' })) as { v: string }[]
  )[0]?.v
  console.log(
    `\nClickHouse ${version}, ${EVENTS} events, ${PERSONS} persons, p50 of ${RUNS} runs (ms)\n` +
      '| case | burrow (whole request) | by hand | ratio | its SQL | its SQL / by hand | server CPU: its SQL | by hand | CPU ratio | fixed | edges | answers |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n' +
      rows.join('\n'),
  )
  if (failed) process.exitCode = 1
} finally {
  await ch.close()
  await lean.close()
  await burrow.cleanup()
}

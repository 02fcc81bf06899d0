// The cost of raw_sessions_mv (schema/clickhouse/0120_sessions.sql) on inserts into `events`
// (issue #39): the same rows, made as the projector makes them, inserted into a copy of `events`
// with no view, with the schema's view, and with the view's other forms, on the embedded ClickHouse;
// wall time and the server's CPU per row (from /proc, merges stopped), medians over rounds with the
// order rotated. The forms' answers are compared with the schema's view, session by session (every
// column finalized after OPTIMIZE FINAL).
// Forms: `none` (no view: the floor), `schema` (0120's view), `map` (0120's view reading the
// properties as one Map of every key, as before issue #39; made from the schema's text), `nojson`
// (0120's view with every property read as '': the view's cost without any JSON parsing).
// Run: npx tsx bench/sessions-view.ts   (env EVENTS=200000, DISTINCT=5000 ids, ROUNDS=3, PER_INSERT=10000
// rows an INSERT, FORMS=none,schema,map,nojson, SESSIONS=0 (the workload's 777), INSERT_SETTINGS (e.g.
// `optimize_on_insert = 0`) for the INSERTs; BENCH_EVENTS=web for
// posthog-js's properties)
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { Readable } from 'node:stream'
import { join } from 'node:path'
import { selectRows } from '../src/clickhouse/client.ts'
import { migrateClickHouse } from '../src/clickhouse/migrate.ts'
import { tsvBody } from '../src/projectors/clickhouse-io.ts'
import { EVENT_COLUMNS } from '../src/projectors/tables.ts'
import { sessionsViewDDL } from '../src/sessions/replay.ts'
import { clickhouseLibrary } from '../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../src/stack/clickhouse-server.ts'
import { freePort } from '../src/stack/ports.ts'
import { benchChunks, benchEventLine, procStats } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 200_000)
const DISTINCT = Number(process.env.DISTINCT ?? 5000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const PER_INSERT = Number(process.env.PER_INSERT ?? 10_000)
const FORMS = (process.env.FORMS ?? 'none,schema,map,nojson').split(',')
// sessions the events are spread over (0: the workload's own, 777)
const SESSIONS = Number(process.env.SESSIONS ?? 0)
const TEAM = 1

/** The view's SELECT of each form, under names of the form's own. */
function viewDdl(
  form: string,
  names: { view: string; events: string; sessions: string },
): string | undefined {
  const schema = sessionsViewDDL(names)
  if (form === 'none') return undefined
  if (form === 'schema') return schema
  // the schema reads its properties as one named Tuple of the keys it needs, `tupleElement(p, 'k')`
  const tuple = /JSONExtract\(properties, 'Tuple\([^']*\)'\) AS p/
  if (!tuple.test(schema)) throw new Error('the schema view reads no Tuple of properties: update the bench')
  if (form === 'map') {
    return schema
      .replace(tuple, "JSONExtract(properties, 'Map(String, String)') AS p")
      .replace(/tupleElement\(p, ('[^']*')\)/g, 'p[$1]')
  }
  if (form === 'nojson') {
    return schema.replace(tuple, "'' AS p").replace(/tupleElement\(p, ('[^']*')\)/g, "''")
  }
  throw new Error(`unknown form ${form}`)
}

/** Values of every JSON kind for the view's fields (the i-th such event). */
function oddValues(i: number): Record<string, unknown> {
  return {
    utm_source: i,
    utm_medium: null,
    utm_campaign: i % 2 === 0 ? 'spring "sale" \\ 10%' : true,
    gclid: { a: i % 5 },
    $referrer: [1, 'a', null],
    $geoip_city_name: 'Zürich 日本',
    $external_click_url: i % 3 === 0 ? '' : `https://out.example/${i}`,
    $web_vitals_LCP_value: i % 4 === 0 ? null : 1234.5 + (i % 7),
    $viewport_width: i % 2 === 0 ? '800' : 1280.5,
    $os: 1.5e300,
  }
}

const dir = mkdtempSync(join(tmpdir(), 'burrow-bench-sessions-'))
const server = await startClickHouseServer({
  library: await clickhouseLibrary(),
  dataDir: join(dir, 'ch'),
  httpPort: await freePort(),
  tcpPort: await freePort(),
})
const { client: ch } = await migrateClickHouse(server.url, 'bench')
const cpu = () => procStats(server.pid)?.cpuSeconds ?? Number.NaN
try {
  const load0 = loadavg()
  // the rows, made once, as the projector writes them; one body per INSERT
  // (one event in 97 also carries the view's fields with values of every JSON kind, so that the
  // forms' answers are compared on those too)
  const lines = benchChunks(Math.ceil(EVENTS / 1000), 1000, DISTINCT, () => 'bench').flatMap((chunk, c) =>
    chunk.map((e, offset) => {
      const i = c * 1000 + offset
      if (i % 97 === 0) Object.assign(e.properties, oddValues(i))
      if (SESSIONS > 0) e.properties.$session_id = `s-${i % SESSIONS}`
      return benchEventLine(TEAM, e, c + 1, offset)
    }),
  )
  const bodies: Buffer[] = []
  for (let i = 0; i < lines.length; i += PER_INSERT)
    bodies.push(tsvBody(lines, i, Math.min(lines.length, i + PER_INSERT)))
  const query = `INSERT INTO {table} (${EVENT_COLUMNS.map((c) => '`' + c + '`').join(', ')}) ${process.env.INSERT_SETTINGS ? 'SETTINGS ' + process.env.INSERT_SETTINGS + ' ' : ''}FORMAT TabSeparated`

  const names = (form: string) => ({
    view: `mv_${form}`,
    events: `events_${form}`,
    sessions: `sessions_${form}`,
  })
  async function fresh(form: string): Promise<void> {
    const n = names(form)
    await ch.command({ query: `DROP VIEW IF EXISTS ${n.view}` })
    await ch.command({ query: `DROP TABLE IF EXISTS ${n.events}` })
    await ch.command({ query: `DROP TABLE IF EXISTS ${n.sessions}` })
    await ch.command({ query: `CREATE TABLE ${n.events} AS events` })
    await ch.command({ query: `CREATE TABLE ${n.sessions} AS raw_sessions` })
    const ddl = viewDdl(form, n)
    if (ddl) await ch.command({ query: ddl })
    await ch.command({ query: `SYSTEM STOP MERGES ${n.events}` })
    await ch.command({ query: `SYSTEM STOP MERGES ${n.sessions}` })
  }

  const results = new Map<string, { ms: number[]; cpu: number[] }>(FORMS.map((f) => [f, { ms: [], cpu: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = FORMS.map((_, i) => FORMS[(i + round) % FORMS.length]!)
    for (const form of order) {
      await fresh(form)
      const c = cpu()
      const t = performance.now()
      for (const body of bodies) {
        const res = await ch.exec({
          query: query.replace('{table}', names(form).events),
          values: Readable.from([body]),
        })
        for await (const _ of res.stream) {
          // drain
        }
      }
      results.get(form)!.ms.push(performance.now() - t)
      results.get(form)!.cpu.push(cpu() - c)
    }
  }

  // Answers: every form's sessions equal the schema view's, column by column, finalized.
  const columns = await selectRows<{ name: string; type: string }>(
    ch,
    "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'raw_sessions' ORDER BY position",
  )
  const finalized = columns
    .map((c) => (c.type.startsWith('AggregateFunction') ? `finalizeAggregation(${c.name})` : c.name))
    .map((e) => (e.includes('urls') ? `arraySort(${e})` : e))
    .join(', ')
  const digest = async (form: string) => {
    const t = names(form).sessions
    await ch.command({ query: `SYSTEM START MERGES ${t}` })
    await ch.command({ query: `OPTIMIZE TABLE ${t} FINAL` })
    const [row] = await selectRows<{ n: string; h: string }>(
      ch,
      `SELECT count() AS n, toString(groupBitXor(cityHash64(${finalized}))) AS h FROM ${t}`,
    )
    return row!
  }
  const reference = FORMS.includes('schema') ? await digest('schema').catch(() => undefined) : undefined

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const none = results.get('none')
  console.log(
    `events: ${lines.length} rows in INSERTs of ${PER_INSERT}, ${DISTINCT} distinct ids, ${ROUNDS} rounds; ` +
      `load ${load0.map((l) => l.toFixed(2)).join(' ')} at the start, ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')} at the end`,
  )
  for (const form of FORMS) {
    const r = results.get(form)!
    const ms = median(r.ms)
    const us = (median(r.cpu) / lines.length) * 1e6
    let same = ''
    if (reference && form === 'map') {
      // (an OPTIMIZE of a large table may outlast the client's timeout: the figures stand without it)
      const d = await digest(form).catch((e: Error) => ({ n: '', h: `not compared (${e.message})` }))
      same =
        d.h === reference.h && d.n === reference.n
          ? '  sessions equal to schema'
          : d.n === ''
            ? `  ${d.h}`
            : '  SESSIONS DIFFER'
    }
    console.log(
      `${form.padEnd(7)} ${String(Math.round((lines.length / ms) * 1000)).padStart(8)} rows/s  ${(ms / 1000).toFixed(2)} s` +
        `  server CPU ${us.toFixed(2)} µs/row` +
        (none
          ? `  vs no view: time ${(ms / median(none.ms)).toFixed(2)}x, CPU ${(median(r.cpu) / median(none.cpu)).toFixed(2)}x`
          : '') +
        same,
    )
  }
  if (reference) console.log(`schema: ${reference.n} session rows after OPTIMIZE FINAL`)
} finally {
  await ch.close()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

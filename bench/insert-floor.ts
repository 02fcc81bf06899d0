// The CPU budget of "log → queryable" on this machine (issue #17): what the least possible projector
// costs per event, and what ClickHouse itself costs per inserted row, measured on the same events in
// one run. Any projector on N cores is bounded by N / (its CPU per event + ClickHouse's per row +
// NATS's per delivered event); this bench measures the first two and prints the bound they give
// with NATS left out (so the bound is generous).
//   least projector: JSON.parse of each 1,000-event log chunk, one `events` line per event exactly as
//     the projector writes it (rows.ts eventLine, no person work), the request bodies (tsvBody);
//     one core, CPU time of this process.
//   ClickHouse alone: those bodies, already made, POSTed over keep-alive HTTP as INSERTs of 10,000
//     rows into a fresh copy of `events`, INFLIGHT at a time; clickhouse-server's CPU from /proc and
//     the wall rate (the fastest this server takes these rows, nothing else running).
// Run: npx tsx bench/insert-floor.ts   (env CHUNKS (300 chunks of 1,000 events), INFLIGHT (2), ROUNDS (3))
import { request, Agent } from 'node:http'
import { logMessage, parseLogMessage } from '../src/jetstream/messages.ts'
import { tsvBody } from '../src/projectors/clickhouse-io.ts'
import { EVENT_COLUMNS } from '../src/projectors/tables.ts'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import {
  type BenchEvent,
  benchBurrow,
  benchChunks,
  benchEventLine,
  procStats,
  processTree,
  rate,
  runPool,
} from './lib.ts'

const CHUNKS = Number(process.env.CHUNKS ?? 300)
const INFLIGHT = Number(process.env.INFLIGHT ?? 2)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const PER_INSERT = 10
const CORES = 2

const burrow = await benchBurrow({ ROLE: 'capture' })
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const chPid = processTree(burrow.pid).find((p) => procStats(p)?.name.startsWith('clickhouse'))
if (!chPid) throw new Error('no clickhouse-server under the Burrow process (set no CLICKHOUSE_URL)')
const team = burrow.credentials.project_id
const TABLE = 'events_bench_floor'

// The log's chunks as capture writes them (one event per line), as the projector receives them.
const chunkTexts = benchChunks(CHUNKS, 1000, 5000, (b) => `bench_${b}`).map((events) =>
  logMessage(
    team,
    'live',
    events.map((e) => JSON.stringify({ ...e, team_id: team })),
  ),
)

/** JSON.parse of each event, one line per event, one body per PER_INSERT chunks: the least a projector does. */
function encodeAll(): Buffer[] {
  const bodies: Buffer[] = []
  let lines: string[] = []
  for (let c = 0; c < chunkTexts.length; c++) {
    const chunk = (parseLogMessage(chunkTexts[c]!) as { envelope: { events: BenchEvent[] } }).envelope
    for (let offset = 0; offset < chunk.events.length; offset++)
      lines.push(benchEventLine(team, chunk.events[offset]!, c + 1, offset))
    if ((c + 1) % PER_INSERT === 0 || c === chunkTexts.length - 1) {
      bodies.push(tsvBody(lines))
      lines = []
    }
  }
  return bodies
}

const agent = new Agent({ keepAlive: true, maxSockets: 16 })
const insertPath =
  `/?database=${encodeURIComponent(burrow.database)}&query=` +
  encodeURIComponent(
    `INSERT INTO ${TABLE} (${EVENT_COLUMNS.map((c) => `\`${c}\``).join(', ')}) FORMAT TabSeparated`,
  )

function post(body: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${burrow.clickhouseUrl}${insertPath}`,
      { method: 'POST', agent, headers: { 'content-length': String(body.length) } },
      (res) => {
        let text = ''
        res.on('data', (b: Buffer) => (text += b.toString()))
        res.on('end', () =>
          res.statusCode === 200 ? resolve() : reject(new Error(`${res.statusCode}: ${text}`)),
        )
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

const events = CHUNKS * 1000
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const encodeUs: number[] = []
const chUs: number[] = []
const insertRates: number[] = []
try {
  encodeAll() // warm-up (JIT)
  for (let round = 0; round < ROUNDS; round++) {
    const cpu0 = process.cpuUsage()
    const bodies = encodeAll()
    const cpu = process.cpuUsage(cpu0)
    encodeUs.push((cpu.user + cpu.system) / events) // µs per event

    await ch.command({ query: `CREATE TABLE IF NOT EXISTS ${TABLE} AS events` })
    await ch.command({ query: `TRUNCATE TABLE ${TABLE}` })
    const ch0 = procStats(chPid)!.cpuSeconds
    const t0 = performance.now()
    await runPool(bodies.length, INFLIGHT, (i) => post(bodies[i]!))
    const ms = performance.now() - t0
    chUs.push(((procStats(chPid)!.cpuSeconds - ch0) / events) * 1e6)
    insertRates.push(rate(events, ms))
    const n = await ch.query({ query: `SELECT count() AS n FROM ${TABLE}`, format: 'JSONEachRow' })
    const [{ n: rows }] = (await n.json()) as [{ n: string }]
    if (Number(rows) !== events) throw new Error(`inserted ${rows} rows of ${events}`)
  }
  const enc = median(encodeUs)
  const chu = median(chUs)
  console.log(`${events} events (${CHUNKS} chunks of 1,000), ${ROUNDS} rounds after a warm-up, medians`)
  console.log(`least projector (JSON.parse + event line + body), one core: ${enc.toFixed(1)} µs/event`)
  console.log(
    `ClickHouse alone, pre-made bodies, ${INFLIGHT} INSERTs of ${PER_INSERT * 1000} rows in flight: ` +
      `${median(insertRates)} rows/s, clickhouse-server ${chu.toFixed(1)} µs CPU/row`,
  )
  console.log(
    `bound for any projector on ${CORES} cores (NATS left out): ${CORES} s / (${enc.toFixed(1)} + ${chu.toFixed(1)} µs) = ` +
      `${Math.round((CORES * 1e6) / (enc + chu))} events/s`,
  )
} finally {
  await ch.command({ query: `DROP TABLE IF EXISTS ${TABLE}` })
  await ch.close()
  await burrow.cleanup()
}
process.exit(0)

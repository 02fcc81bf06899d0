// Whether issue #17's end-to-end target (/batch/ → queryable ≥ 0.5 × the direct insert of the same
// rows) is within this machine's reach, and how far Burrow is from what it allows. One run measures,
// round after round on the same embedded stack, with bench/ingest.ts's load (1,000-event /batch/
// requests, 4 in flight, DISTINCT ids, a poller asking ClickHouse every POLL_MS what is queryable):
//   floor pipeline   the least pipeline of Burrow's shape (bench/ingest-floor-server.ts: a node:http
//                    capture publishing each body as it came, a projector process writing one
//                    `events` line per event with a person id from a map)
//   burrow           Burrow's own /batch/ (role all: capture and its projector process)
//   direct           the same rows inserted straight into a copy of `events` (bench/ingest.ts's
//                    baseline, lib.ts directInsertMs)
// and the CPU each process used per event in each case.
// Run: npx tsx bench/ingest-floor.ts   (env BATCHES (100), DISTINCT (5000), ROUNDS (2), POLL_MS (100),
// INSERTS (2): the floor projector's INSERTs at once)
import { jetstreamManager } from '@nats-io/jetstream'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import { connectNats } from '../src/jetstream/connection.ts'
import {
  benchBurrow,
  benchChild,
  benchChunks,
  directInsertMs,
  httpPost,
  percentile,
  cpuOfPids,
  procStats,
  processTree,
  queryableTimes,
  rate,
  runPool,
  untilIdle,
} from './lib.ts'

const BATCHES = Number(process.env.BATCHES ?? 100)
const BATCH_SIZE = 1000
const DISTINCT = Number(process.env.DISTINCT ?? 5000)
const ROUNDS = Number(process.env.ROUNDS ?? 2)
const POLL_MS = Number(process.env.POLL_MS ?? 100)
const FLOOR_TEAM = 9_000_001
const FLOOR_STREAM = 'FLOOR'
const FLOOR_SUBJECT = 'floor.batch'

const burrow = await benchBurrow({ OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const token = burrow.credentials.project_api_key
const team = burrow.credentials.project_id

const nc = await connectNats(burrow.natsUrl)
const jsm = await jetstreamManager(nc)
await jsm.streams.add({ name: FLOOR_STREAM, subjects: [FLOOR_SUBJECT] })

/** A process of the floor pipeline (bench/ingest-floor-server.ts in `mode`). */
const floorProcess = (mode: string) =>
  benchChild('ingest-floor-server.ts', {
    MODE: mode,
    NATS_URL: burrow.natsUrl,
    CLICKHOUSE_URL: burrow.clickhouseUrl,
    CLICKHOUSE_DATABASE: burrow.database,
    STREAM: FLOOR_STREAM,
    SUBJECT: FLOOR_SUBJECT,
    TEAM: String(FLOOR_TEAM),
  })

interface Case {
  name: string
  rate: number
  lagP50: number
  lagP99: number
  /** CPU µs per event by process name */
  cpu: Map<string, number>
}

/** CPU seconds used so far by each process of `pids` (the Burrow tree and the floor's processes). */
function cpuPerEvent(pids: Map<number, string>, from: Map<number, number>, events: number) {
  const to = cpuOfPids(pids.keys())
  const out = new Map<string, number>()
  for (const [p, name] of pids) {
    const us = (((to.get(p) ?? 0) - (from.get(p) ?? 0)) / events) * 1e6
    out.set(name, (out.get(name) ?? 0) + us)
  }
  return out
}

/**
 * BATCHES requests of BATCH_SIZE events to `url`/batch/ (events named `<prefix><batch>`, for
 * `teamId`), 4 in flight, until all are queryable: the rate, the lags and the CPU per event.
 */
async function endToEnd(
  name: string,
  url: string,
  teamId: number,
  prefix: string,
  pids: Map<number, string>,
): Promise<Case> {
  const batches = benchChunks(BATCHES, BATCH_SIZE, DISTINCT, (b) => `${prefix}${b}`)
  for (const b of batches) for (const e of b) e.distinct_id = `${prefix}${e.distinct_id}`
  const bodies = batches.map((b) => JSON.stringify({ api_key: token, batch: b }))
  const acked = new Array<number>(BATCHES)
  const poller = queryableTimes(ch, {
    team: teamId,
    prefix,
    count: BATCHES,
    size: BATCH_SIZE,
    pollMs: POLL_MS,
  })
  poller.catch(() => {})
  const cpu0 = cpuOfPids(pids.keys())
  const t0 = performance.now()
  await runPool(BATCHES, 4, async (b) => {
    const res = await httpPost(`${url}/batch/`, bodies[b]!)
    if (res.status !== 200) throw new Error(`${name} /batch/: ${res.status} ${res.text}`)
    acked[b] = performance.now()
  })
  const visible = await poller
  const ms = Math.max(...visible) - t0
  const lags = visible.map((v, b) => v - acked[b]!).sort((a, b) => a - b)
  return {
    name,
    rate: rate(BATCHES * BATCH_SIZE, ms),
    lagP50: percentile(lags, 50),
    lagP99: percentile(lags, 99),
    cpu: cpuPerEvent(pids, cpu0, BATCHES * BATCH_SIZE),
  }
}

const capture = await floorProcess('capture')
const projector = await floorProcess('projector')
await untilIdle(burrow.pid, { nodes: 2, cpuSeconds: Number(process.env.BENCH_IDLE_CPU ?? 0.05) })

const pids = new Map<number, string>()
const burrowNodes = processTree(burrow.pid).filter((p) => procStats(p)?.name === 'node')
for (const p of processTree(burrow.pid)) {
  const n = procStats(p)?.name ?? '?'
  if (n !== 'node') pids.set(p, n)
}
pids.set(burrowNodes[0]!, 'burrow (capture, api)')
if (burrowNodes[1]) pids.set(burrowNodes[1], 'burrow projector')
pids.set(capture.pid, 'floor capture')
pids.set(projector.pid, 'floor projector')

const results: Case[] = []
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const floorUrl = `http://127.0.0.1:${capture.port}`
    results.push(await endToEnd('floor pipeline', floorUrl, FLOOR_TEAM, `f${round}_`, pids))
    results.push(await endToEnd('burrow', burrow.url, team, `b${round}_`, pids))
    const chunks = benchChunks(BATCHES, BATCH_SIZE, DISTINCT, (b) => `d${round}_${b}`)
    const cpu0 = cpuOfPids(pids.keys())
    const ms = await directInsertMs(ch, team, chunks)
    results.push({
      name: 'direct insert',
      rate: rate(BATCHES * BATCH_SIZE, ms),
      lagP50: Number.NaN,
      lagP99: Number.NaN,
      cpu: cpuPerEvent(pids, cpu0, BATCHES * BATCH_SIZE),
    })
  }
} finally {
  await capture.stop()
  await projector.stop()
  await nc.close()
  await ch.close()
  await burrow.cleanup()
}

console.log(
  `${BATCHES} requests of ${BATCH_SIZE} events, 4 in flight, ${DISTINCT} distinct ids, ${ROUNDS} rounds`,
)
for (let round = 0; round < ROUNDS; round++) {
  const [floor, b, direct] = results.slice(round * 3, round * 3 + 3) as [Case, Case, Case]
  console.log(`round ${round + 1}`)
  for (const c of [floor, b, direct]) {
    const lag = Number.isNaN(c.lagP50)
      ? ''
      : `  lag p50 ${c.lagP50.toFixed(0)} ms p99 ${c.lagP99.toFixed(0)} ms`
    console.log(
      `  ${c.name.padEnd(15)} ${String(c.rate).padStart(7)} events/s  ${(c.rate / direct.rate).toFixed(2)} × direct${lag}`,
    )
  }
  console.log(`  CPU µs per event        floor pipeline   burrow   direct insert`)
  for (const name of new Set(pids.values())) {
    const cell = (c: Case) => (c.cpu.get(name) ?? 0).toFixed(1).padStart(8)
    console.log(`  ${name.padEnd(22)} ${cell(floor)}       ${cell(b)}  ${cell(direct)}`)
  }
  const sum = (c: Case) =>
    [...c.cpu.values()]
      .reduce((a, x) => a + x, 0)
      .toFixed(1)
      .padStart(8)
  console.log(`  ${'all'.padEnd(22)} ${sum(floor)}       ${sum(b)}  ${sum(direct)}`)
}
process.exit(0)

// End-to-end ingestion: events/s from HTTP /batch/ to queryable in ClickHouse, against a direct
// ClickHouse insert of the same rows (serialized the way the projector does) in the same run, and the
// lag from capture's 200 to queryable (p50/p99, per HTTP batch of 1,000 events). Then the projector
// alone: the same events (another team, new distinct ids) published straight to the log as chunks
// of 1,000, timed until queryable, so capture's share of the CPU is out of the picture.
// With RATE=<events/s> the requests are paced to that rate (the lag target is measured at
// half the end-to-end rate), otherwise sent as fast as 4 in flight allow.
// Run: npx tsx bench/ingest.ts   (env BATCHES=100 batches of 1,000 events, DISTINCT=5000 ids, RATE,
// POLL_MS=100, WARM_BATCHES=20; PROJECTOR_BATCH_SIZE etc. are passed on to the Burrow under test)
import { jetstream } from '@nats-io/jetstream'
import { v7 as uuidv7 } from 'uuid'
import { connectNats } from '../src/jetstream/connection.ts'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import {
  benchBurrow,
  benchChunks,
  cpuPerThousand,
  cpuSnapshot,
  directInsertMs,
  httpPost,
  publishChunks,
  percentile,
  processLines,
  queryableTimes,
  rate,
  runPool,
  untilIdle,
} from './lib.ts'

const BATCHES = Number(process.env.BATCHES ?? 100)
const BATCH_SIZE = 1000
const DISTINCT = Number(process.env.DISTINCT ?? 5000)
const RATE = process.env.RATE === undefined ? undefined : Number(process.env.RATE)
// How often the bench asks ClickHouse what is queryable. Every 20 ms, its GROUP BY over the team's
// rows took ~0.3 of a core at half rate (ClickHouse 75 against 27 µs per event at full rate), from
// the same 2 cores as the stack; a lag is read to within one interval, rounded up.
const POLL_MS = Number(process.env.POLL_MS ?? 100)
// Lags are printed over all batches and again over those after the first WARM_BATCHES.
const WARM_BATCHES = Number(process.env.WARM_BATCHES ?? 20)

const burrow = await benchBurrow({ OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const token = burrow.credentials.project_api_key
const team = burrow.credentials.project_id

try {
  // CPU is counted from here: Burrow's start-up (tsx boots, migrations, the projector process's start)
  // costs seconds of CPU that are no part of ingestion (role all: two node processes). A profiled
  // Burrow (BURROW_NODE_ARGS=--cpu-prof) is never that idle: raise BENCH_IDLE_CPU (s of CPU a second).
  await untilIdle(burrow.pid, {
    nodes: process.env.PROJECTOR_PROCESS === 'false' ? 1 : 2,
    cpuSeconds: Number(process.env.BENCH_IDLE_CPU ?? 0.05),
  })
  const startCpu = cpuSnapshot(burrow.pid)
  // the event name carries the batch so the poller can count a batch's rows cheaply
  const batches = benchChunks(BATCHES, BATCH_SIZE, DISTINCT, (b) => `bench_${b}`)

  const acked = new Array<number>(BATCHES)
  const poller = queryableTimes(ch, {
    team,
    prefix: 'bench_',
    count: BATCHES,
    size: BATCH_SIZE,
    pollMs: POLL_MS,
  })
  // (a failure is reported where it is awaited, after the requests)
  poller.catch(() => {})

  const t0 = performance.now()
  await runPool(BATCHES, 4, async (b) => {
    // paced: batch b leaves no earlier than its place in a steady stream at RATE
    const due = RATE === undefined ? 0 : t0 + ((b * BATCH_SIZE) / RATE) * 1000 - performance.now()
    if (due > 0) await new Promise((r) => setTimeout(r, due))
    const res = await httpPost(`${burrow.url}/batch/`, JSON.stringify({ api_key: token, batch: batches[b] }))
    if (res.status !== 200) throw new Error(`/batch/: ${res.status} ${res.text}`)
    acked[b] = performance.now()
  })
  const capturedMs = performance.now() - t0
  const visible = await poller
  const e2eMs = Math.max(...visible) - t0
  const e2eCpu = cpuSnapshot(burrow.pid)
  const total = BATCHES * BATCH_SIZE

  // The same rows, inserted straight into a copy of the events table (its sessions view too); 10
  // HTTP batches per INSERT: about what one projector batch writes under this load
  const directMs = await directInsertMs(ch, team, batches)
  const directCpu = cpuSnapshot(burrow.pid)
  // and into a copy without the view: what the view costs a direct insert
  const bareMs = await directInsertMs(ch, team, batches, 10, false)

  // The projector alone: chunks as capture writes them, for a team of its own.
  const nc = await connectNats(burrow.natsUrl)
  const js = jetstream(nc)
  const team2 = team + 1_000_000
  await publishChunks(
    js,
    team2,
    batches.map((batch) => batch.map((e) => ({ ...e, uuid: uuidv7(), event: 'alone' }))),
  )
  const t2 = performance.now()
  for (;;) {
    const rs = await ch.query({
      query: `SELECT count() AS n FROM events WHERE team_id = ${team2}`,
      format: 'JSONEachRow',
    })
    const [{ n }] = (await rs.json<{ n: string }>()) as [{ n: string }]
    if (Number(n) >= BATCHES * BATCH_SIZE) break
    if (performance.now() - t2 > 10 * 60_000) throw new Error('the projector did not catch up')
    await new Promise((r) => setTimeout(r, POLL_MS))
  }
  const aloneMs = performance.now() - t2
  const aloneCpu = cpuSnapshot(burrow.pid)
  await nc.close()

  const lags = visible.map((v, b) => v - acked[b]!).sort((a, b) => a - b)
  const e2e = rate(total, e2eMs)
  const direct = rate(total, directMs)
  console.log(
    `events: ${total} in ${BATCHES} HTTP batches of ${BATCH_SIZE}, ${DISTINCT} distinct ids` +
      (RATE === undefined ? '' : `, paced at ${RATE} events/s`),
  )
  console.log(`capture (HTTP /batch/ acked):       ${rate(total, capturedMs)} events/s`)
  console.log(`end to end (POST -> queryable):     ${e2e} events/s  (${(e2eMs / 1000).toFixed(2)} s)`)
  console.log(`direct ClickHouse insert (TSV, 10k): ${direct} events/s  (${(directMs / 1000).toFixed(2)} s)`)
  console.log(`end to end / direct:                ${(e2e / direct).toFixed(2)}`)
  console.log(
    `  direct without the sessions view:  ${rate(total, bareMs)} events/s  (${(bareMs / 1000).toFixed(2)} s)`,
  )
  const p = (q: number) => percentile(lags, q).toFixed(0)
  console.log(`lag capture 200 -> queryable:       p50 ${p(50)} ms  p99 ${p(99)} ms`)
  // The first batches meet a just-started projector (its code not yet optimized) and bring most of
  // the DISTINCT persons into being at once; the lag afterwards is the steady state's.
  const steady = visible
    .slice(WARM_BATCHES)
    .map((v, i) => v - acked[i + WARM_BATCHES]!)
    .sort((a, b) => a - b)
  if (steady.length > 0) {
    const s = (q: number) => percentile(steady, q).toFixed(0)
    console.log(`  after the first ${WARM_BATCHES} batches:          p50 ${s(50)} ms  p99 ${s(99)} ms`)
  }
  console.log(
    `projector alone (log -> queryable): ${rate(total, aloneMs)} events/s  (${(aloneMs / 1000).toFixed(2)} s)`,
  )
  // role all: Burrow (capture, api), its projector process, the embedded servers
  console.log(`CPU per process, end to end (after start-up, until the last batch was queryable; the`)
  console.log(`bench's queryable polling is in ClickHouse's figure):`)
  console.log(cpuPerThousand(burrow.pid, startCpu, e2eCpu, total).join('\n'))
  console.log(`CPU per process, direct insert (the bench's own INSERTs):`)
  console.log(cpuPerThousand(burrow.pid, e2eCpu, directCpu, total).join('\n'))
  console.log(`CPU per process, projector alone (from the publishing of its chunks on):`)
  console.log(cpuPerThousand(burrow.pid, directCpu, aloneCpu, total).join('\n'))
  console.log(
    `CPU and peak RSS per process, whole run (start-up included):\n${processLines(burrow.pid).join('\n')}`,
  )
} finally {
  await ch.close()
  await burrow.cleanup()
}

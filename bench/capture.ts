// Capture throughput and latency against publishing the same events to JetStream directly.
// Run: npx tsx bench/capture.ts   (env BATCHES, SINGLES to size it; ROLE=capture: capture alone)
import { jetstream } from '@nats-io/jetstream'
import { EventPublisher } from '../src/capture/publisher.ts'
import { type CapturedEvent, logMessage } from '../src/jetstream/messages.ts'
import { connectNats } from '../src/jetstream/connection.ts'
import {
  benchBurrow,
  cpuSnapshot,
  httpPost,
  latencyLine,
  processLines,
  rate,
  runPool,
  sdkPageview,
  untilIdle,
} from './lib.ts'

const BATCHES = Number(process.env.BATCHES ?? 200)
const BATCH_SIZE = 1000
const SINGLES = Number(process.env.SINGLES ?? 5000)

// `burrow start` as users run it (role all: capture and the API in one process, the projectors in
// another, projecting what capture writes meanwhile); ROLE=capture measures capture alone
const burrow = await benchBurrow({ OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
console.log(`role ${process.env.ROLE ?? 'all'}`)
const token = burrow.credentials.project_api_key
const teamId = burrow.credentials.project_id

async function post(path: string, body: unknown) {
  const res = await httpPost(`${burrow.url}${path}`, JSON.stringify(body))
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`)
}

// warm up
await post('/batch/', { api_key: token, batch: [sdkPageview(0)] })

let t0 = performance.now()
const batchLat = await runPool(BATCHES, 4, (i) =>
  post('/batch/', {
    api_key: token,
    batch: Array.from({ length: BATCH_SIZE }, (_, j) => sdkPageview(i * BATCH_SIZE + j)),
  }),
)
const batchMs = performance.now() - t0

// Role all: the projector is still projecting the /batch/ events; the single events are measured
// from a settled stack, with only their own projection beside them.
if (process.env.ROLE !== 'capture')
  await untilIdle(burrow.pid, { nodes: 2, cpuSeconds: 0.1, timeoutMs: 600_000 })

const singleCpu0 = cpuSnapshot(burrow.pid)
const benchCpu0 = process.cpuUsage()
t0 = performance.now()
const singleLat = await runPool(SINGLES, 32, (i) => post('/i/v0/e/', { api_key: token, ...sdkPageview(i) }))
const singleMs = performance.now() - t0
const benchCpu = process.cpuUsage(benchCpu0)
const singleCpu = processLines(burrow.pid, singleCpu0)
const singleCpuEnd = cpuSnapshot(burrow.pid)

// Baselines on the same server: the same events, already stamped, published straight to JetStream.
const stamped = (i: number): CapturedEvent => {
  const e = sdkPageview(i)
  const now = new Date().toISOString()
  return { ...e, timestamp: now, now, sent_at: null, ip: '127.0.0.1', team_id: teamId }
}
const nc = await connectNats(burrow.natsUrl)
const publisher = new EventPublisher(nc, {
  partitions: 4,
  chunkEvents: BATCH_SIZE,
  ackTimeoutMs: 10_000,
})
t0 = performance.now()
await runPool(BATCHES, 4, async (i) => {
  const events = Array.from({ length: BATCH_SIZE }, (_, j) => ({
    lane: 'live' as const,
    event: stamped(i * BATCH_SIZE + j),
  }))
  await publisher.publish(publisher.chunk(teamId, events).chunks)
})
const directChunkMs = performance.now() - t0

const js = jetstream(nc)
const directCpu0 = cpuSnapshot(burrow.pid)
const directBench0 = process.cpuUsage()
t0 = performance.now()
await runPool(SINGLES, 32, async (i) => {
  const e = stamped(i)
  await js.publish('events.live.0', logMessage(teamId, 'live', [JSON.stringify(e)]), {
    msgID: e.uuid,
  })
})
const directSingleMs = performance.now() - t0
const directBench = process.cpuUsage(directBench0)
const directStack = cpuSnapshot(burrow.pid)

const batchRate = rate(BATCHES * BATCH_SIZE, batchMs)
const singleRate = rate(SINGLES, singleMs)
const directChunkRate = rate(BATCHES * BATCH_SIZE, directChunkMs)
const directSingleRate = rate(SINGLES, directSingleMs)
console.log(
  `capture /batch/ (${BATCHES} x ${BATCH_SIZE} events, 4 in flight): ${batchRate} events/s  request ${latencyLine(batchLat)}`,
)
console.log(
  `direct JetStream publish, same chunks:            ${directChunkRate} events/s  ratio capture/direct ${(batchRate / directChunkRate).toFixed(2)}`,
)
console.log(
  `capture /i/v0/e/ (${SINGLES} single events, 32 in flight): ${singleRate} events/s  request ${latencyLine(singleLat)}`,
)
console.log(
  `direct JetStream publish, one message per event:  ${directSingleRate} events/s  ratio capture/direct ${(singleRate / directSingleRate).toFixed(2)}`,
)
// CPU per event is what the ratio would be on an idle machine: on a shared one, wall-clock rates
// follow whoever else is running. Capture's side is Burrow + its NATS (not the HTTP client);
// the direct side is the publishing process + NATS.
const sumDelta = (a: Map<number, number>, b: Map<number, number>) =>
  [...b].reduce((t, [p, v]) => t + v - (a.get(p) ?? 0), 0)
const captureCpuUs = (sumDelta(singleCpu0, singleCpuEnd) / SINGLES) * 1e6
const withoutBurrow = (m: Map<number, number>) => new Map([...m].filter(([p]) => p !== burrow.pid))
const directCpuUs =
  ((sumDelta(directCpu0, withoutBurrow(directStack)) + (directBench.user + directBench.system) / 1e6) /
    SINGLES) *
  1e6
console.log(
  `CPU per single event: capture ${captureCpuUs.toFixed(0)} µs (Burrow + NATS), direct ${directCpuUs.toFixed(0)} µs (publisher + NATS), ratio direct/capture ${(directCpuUs / captureCpuUs).toFixed(2)}`,
)
console.log(
  `CPU during /i/v0/e/: load generator ${((benchCpu.user + benchCpu.system) / 1e6).toFixed(1)} s; stack:`,
)
console.log(singleCpu.join('\n'))
console.log('whole run, per process:')
console.log(processLines(burrow.pid).join('\n'))
await nc.close()
await burrow.cleanup()
process.exit(0)

// Memory under a sustained load: HTTP /batch/ at a fixed rate for a fixed time, sampling every
// process of the local stack (Burrow, its projector process, nats-server, clickhouse-server) once a
// second. Prints the rate actually sustained, how far projection lagged behind capture, and the
// peak and final RSS of each process and of their sum (the target: the whole stack under
// 1 GiB at 10K events/s for 5 minutes).
// Run: npx tsx bench/soak.ts   (env RATE=10000 events/s, DURATION=300 s, BATCH=1000 events per
// request, DISTINCT=5000 ids, IN_FLIGHT=8 requests at most; other env, e.g. PROJECTOR_BATCH_SIZE or
// BURROW_NODE_ARGS, is passed on to the Burrow under test)
import { readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { v7 as uuidv7 } from 'uuid'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import { benchBurrow, benchProperties, httpPost, percentile, procStats, processTree } from './lib.ts'

const RATE = Number(process.env.RATE ?? 10_000)
const DURATION_S = Number(process.env.DURATION ?? 300)
const BATCH = Number(process.env.BATCH ?? 1000)
const DISTINCT = Number(process.env.DISTINCT ?? 5000)
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 8)
const MiB = 1024 * 1024

/** Resident set size now (MiB), from /proc; undefined when the process is gone. */
function rssMiB(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) / 1024 : undefined
  } catch {
    return undefined
  }
}

/** Sums of a few of the Node processes' own gauges from Burrow's /metrics (role all sums parent and child). */
async function nodeMemory(url: string): Promise<Record<string, number>> {
  const text = await fetch(`${url}/metrics`).then((r) => r.text())
  const out: Record<string, number> = {}
  for (const name of [
    'nodejs_heap_size_total_bytes',
    'nodejs_heap_size_used_bytes',
    'nodejs_external_memory_bytes',
  ]) {
    const m = new RegExp(`^${name} (\\S+)`, 'm').exec(text)
    if (m) out[name] = Number(m[1]) / MiB
  }
  return out
}

const burrow = await benchBurrow({ OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const token = burrow.credentials.project_api_key
const team = burrow.credentials.project_id

interface Proc {
  name: string
  peak: number
  last: number
}
const procs = new Map<number, Proc>()
let peakSum = 0
let peakNode: Record<string, number> = {}
const lagSamples: number[] = []
let acked = 0
let queryable = 0
let failed = 0

function sample(): void {
  let sum = 0
  for (const pid of processTree(burrow.pid)) {
    const rss = rssMiB(pid)
    if (rss === undefined) continue
    const p = procs.get(pid) ?? { name: procStats(pid)?.name ?? '?', peak: 0, last: 0 }
    p.peak = Math.max(p.peak, rss)
    p.last = rss
    procs.set(pid, p)
    sum += rss
  }
  peakSum = Math.max(peakSum, sum)
}

async function countEvents(distinct = false): Promise<number> {
  const rs = await ch.query({
    query: `SELECT ${distinct ? 'uniqExact(uuid)' : 'count()'} AS n FROM events WHERE team_id = ${team}`,
    format: 'JSONEachRow',
  })
  const [{ n }] = (await rs.json<{ n: string }>()) as [{ n: string }]
  return Number(n)
}

function makeBody(b: number): string {
  const events = Array.from({ length: BATCH }, (_, j) => {
    const i = b * BATCH + j
    return {
      event: 'soak',
      distinct_id: `user-${i % DISTINCT}`,
      uuid: uuidv7(),
      timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
      properties: benchProperties(i),
    }
  })
  return JSON.stringify({ api_key: token, batch: events })
}

try {
  const load0 = loadavg()[0]!
  sample()
  const startRss = new Map([...procs].map(([pid, p]) => [pid, p.last]))
  const t0 = performance.now()
  const endAt = t0 + DURATION_S * 1000
  let sent = 0
  let inFlight = 0
  let behind = 0 // ticks on which a request was due but IN_FLIGHT were already out

  const sampler = setInterval(sample, 1000)
  let polling = true
  const poller = (async () => {
    while (polling) {
      try {
        queryable = await countEvents()
        // events acknowledged to a client and not yet queryable
        lagSamples.push(Math.max(0, acked - queryable))
      } catch (err) {
        // a query that failed under load: the next round asks again
        console.error(`count failed: ${String(err)}`)
      }
      try {
        const m = await nodeMemory(burrow.url)
        if ((m.nodejs_heap_size_total_bytes ?? 0) > (peakNode.nodejs_heap_size_total_bytes ?? 0)) peakNode = m
      } catch {
        // /metrics busy: the next round reads it
      }
      await new Promise((r) => setTimeout(r, 2000))
    }
  })()

  // Paced: every 10 ms, send the requests the schedule says are due, never more than IN_FLIGHT.
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const now = performance.now()
      if (now >= endAt) {
        clearInterval(tick)
        const wait = setInterval(() => {
          if (inFlight === 0) {
            clearInterval(wait)
            resolve()
          }
        }, 10)
        return
      }
      const due = Math.floor((((now - t0) / 1000) * RATE) / BATCH)
      if (sent < due && inFlight >= IN_FLIGHT) behind++
      while (sent < due && inFlight < IN_FLIGHT) {
        const body = makeBody(sent++)
        inFlight++
        void httpPost(`${burrow.url}/batch/`, body)
          .then((res) => {
            if (res.status === 200) acked += BATCH
            else failed++
          })
          .catch(() => failed++)
          .finally(() => inFlight--)
      }
    }, 10)
  })
  const capturedMs = performance.now() - t0
  const load1 = loadavg()[0]!

  // Until every acknowledged event is queryable (or 10 minutes).
  const tq = performance.now()
  while (queryable < acked && performance.now() - tq < 10 * 60_000)
    await new Promise((r) => setTimeout(r, 200))
  const catchUpMs = performance.now() - tq
  polling = false
  await poller
  clearInterval(sampler)
  sample()

  const distinct = await countEvents(true)
  const lag = [...lagSamples].sort((a, b) => a - b)
  const sustained = acked / (capturedMs / 1000)
  console.log(`load average: ${load0.toFixed(1)} at start, ${load1.toFixed(1)} at the end of capture`)
  console.log(
    `target ${RATE} events/s for ${DURATION_S} s in requests of ${BATCH} (${DISTINCT} distinct ids, ≤ ${IN_FLIGHT} in flight)`,
  )
  console.log(
    `sustained: ${Math.round(sustained)} events/s (${acked} acked in ${(capturedMs / 1000).toFixed(1)} s; ` +
      `${failed} requests failed; ${behind} ticks held back by the in-flight limit)`,
  )
  console.log(
    `projection lag (acked, not yet queryable), every 2 s: p50 ${percentile(lag, 50)} p99 ${percentile(lag, 99)} ` +
      `max ${lag.at(-1)} events; all queryable ${(catchUpMs / 1000).toFixed(1)} s after capture ended ` +
      `(${queryable} rows, ${distinct} distinct uuids, ${acked} acked)`,
  )
  console.log('RSS per process (MiB): start, peak, final; CPU seconds, whole run')
  let finalSum = 0
  for (const [pid, p] of procs) {
    finalSum += p.last
    console.log(
      `  ${p.name.padEnd(18)} pid ${String(pid).padEnd(8)} ${(startRss.get(pid) ?? 0).toFixed(0).padStart(6)} ${p.peak.toFixed(0).padStart(6)} ${p.last.toFixed(0).padStart(6)}   cpu ${(procStats(pid)?.cpuSeconds ?? Number.NaN).toFixed(1)} s`,
    )
  }
  console.log(`  sum: peak ${peakSum.toFixed(0)} MiB (sampled each second), final ${finalSum.toFixed(0)} MiB`)
  const f = (k: string) => (peakNode[k] ?? Number.NaN).toFixed(0)
  console.log(
    `Node processes (sum of Burrow and its projector process, at the largest heap seen): V8 heap ` +
      `${f('nodejs_heap_size_total_bytes')} MiB (used ${f('nodejs_heap_size_used_bytes')}), external ${f('nodejs_external_memory_bytes')} MiB`,
  )
} finally {
  await ch.close()
  await burrow.cleanup()
}

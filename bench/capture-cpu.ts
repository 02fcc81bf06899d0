// Capture's CPU per event on the `/batch/` path, in this process: the capture routes on Burrow's
// Fastify app (createHttpServer, as `burrow start` builds it) driven by `inject` with bodies of 1,000
// events, publishing to a real JetStream (a nats-server of the bench's own). Baseline in the same
// run, over the same bodies: the least a capture must do, JSON.parse of the body, JSON.stringify of
// each event (stamped with a receive time and team, nothing else) into the log message's lines and
// the publish with its ack. CPU is this process's (user + system, GC threads included); the nats-server's is not counted.
// Rounds alternate baseline and capture so that the machine's load falls on both alike.
// Run: npx tsx bench/capture-cpu.ts   (env REQUESTS=40 per round and kind, ROUNDS=3, IN_FLIGHT=4;
// PROFILE=1 writes a CPU profile of the last capture round to ./capture-cpu.cpuprofile)
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { gzipSync } from 'node:zlib'
import { jetstream } from '@nats-io/jetstream'
import LZString from 'lz-string'
import { v7 as uuidv7 } from 'uuid'
import { logMessage } from '../src/jetstream/messages.ts'
import { captureApp } from './capture-app.ts'
import { benchChunks, runPool, webProperties } from './lib.ts'

const REQUESTS = Number(process.env.REQUESTS ?? 40)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const IN_FLIGHT = Number(process.env.IN_FLIGHT ?? 4)
const BATCH_SIZE = 1000
const TEAM = 1
const TOKEN = 'phc_bench_capture_cpu'

/** An event as posthog-js sends it: its usual properties, a person update now and then. */
function webEvent(i: number) {
  return {
    uuid: uuidv7(),
    event: i % 10 === 0 ? '$pageview' : i % 10 === 1 ? '$autocapture' : 'clicked button',
    properties: { ...webProperties(i, i % 100), token: TOKEN },
    timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
  }
}

interface Body {
  payload: Buffer
  headers: Record<string, string>
  /** path and query */
  url: string
}

/** Request bodies of 1,000 events each, of one kind. */
function bodies(kind: string): Body[] {
  const json = 'application/json'
  return Array.from({ length: REQUESTS }, (_, r) => {
    const events =
      kind === 'ingest'
        ? benchChunks(1, BATCH_SIZE, 5000, () => `bench_${r}`)[0]!
        : Array.from({ length: BATCH_SIZE }, (_, j) => webEvent(r * BATCH_SIZE + j))
    if (kind === 'web-e-gzip') {
      // posthog-js: an array of events, the token in each one's properties, gzip
      return {
        payload: gzipSync(JSON.stringify(events)),
        headers: { 'content-type': 'text/plain' },
        url: '/e/?compression=gzip-js',
      }
    }
    const text = JSON.stringify({ api_key: TOKEN, batch: events, sent_at: new Date().toISOString() })
    if (kind === 'web-gzip') {
      return {
        payload: gzipSync(text),
        headers: { 'content-type': 'text/plain' },
        url: '/batch/?compression=gzip-js',
      }
    }
    if (kind === 'web-lz64-form') {
      const data = encodeURIComponent(LZString.compressToBase64(text))
      return {
        payload: Buffer.from(`data=${data}`),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        url: '/batch/?compression=lz64',
      }
    }
    return { payload: Buffer.from(text), headers: { 'content-type': json }, url: '/batch/' }
  })
}

const { app, nc, publisher, close } = await captureApp('capture-cpu', { id: TEAM, token: TOKEN })
try {
  const js = jetstream(nc)

  const capture = async (set: Body[]) => {
    await runPool(set.length, IN_FLIGHT, async (i) => {
      const b = set[i]!
      const res = await app.inject({
        method: 'POST',
        url: b.url,
        headers: b.headers,
        payload: b.payload,
      })
      if (res.statusCode !== 200) throw new Error(`${b.url}: ${res.statusCode} ${res.body}`)
    })
  }
  // The least a capture does: parse, stamp receive time and team, serialize the chunk, publish.
  const baseline = async (set: Body[]) => {
    await runPool(set.length, IN_FLIGHT, async (i) => {
      const body = JSON.parse(set[i]!.payload.toString('utf8')) as { batch: Record<string, unknown>[] }
      const now = new Date().toISOString()
      const events = body.batch.map((e) => ({ ...e, now, team_id: TEAM }))
      // each event serialized once, into as many messages as the server's max payload needs
      const messages: string[][] = [[]]
      let bytes = 0
      for (const e of events) {
        const line = JSON.stringify(e)
        const size = Buffer.byteLength(line) + 1
        if (bytes + size > publisher.maxMessageBytes - 256 && messages.at(-1)!.length > 0) {
          messages.push([])
          bytes = 0
        }
        messages.at(-1)!.push(line)
        bytes += size
      }
      await Promise.all(messages.map((m) => js.publish('events.live.0', logMessage(TEAM, 'live', m))))
    })
  }
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const d = process.cpuUsage(since)
    return (d.user + d.system) / 1000
  }
  const timed = async (run: () => Promise<void>) => {
    const c = process.cpuUsage()
    const t = performance.now()
    await run()
    return { cpu: cpuMs(c), wall: performance.now() - t }
  }

  const kinds = (process.env.KINDS ?? 'ingest,web,web-gzip,web-e-gzip,web-lz64-form').split(',')
  const sets = new Map(kinds.map((k) => [k, bodies(k)]))
  // warm-up: every path compiled before anything is timed
  for (const set of sets.values()) await capture(set.slice(0, 4))
  await baseline(sets.get(kinds.find((k) => k === 'ingest' || k === 'web') ?? kinds[0]!)!.slice(0, 4))

  const results = new Map<string, { cpu: number[]; wall: number[] }>()
  const add = (name: string, r: { cpu: number; wall: number }) => {
    const e = results.get(name) ?? { cpu: [], wall: [] }
    e.cpu.push(r.cpu)
    e.wall.push(r.wall)
    results.set(name, e)
  }
  const session = process.env.PROFILE ? new Session() : undefined
  for (let round = 0; round < ROUNDS; round++) {
    const last = round === ROUNDS - 1
    for (const [kind, set] of sets) {
      if (kind === 'ingest' || kind === 'web') add(`baseline ${kind}`, await timed(() => baseline(set)))
      if (session && last) {
        session.connect()
        await session.post('Profiler.enable')
        await session.post('Profiler.start')
      }
      add(`capture ${kind}`, await timed(() => capture(set)))
      if (session && last) {
        const { profile } = await session.post('Profiler.stop')
        writeFileSync(`capture-cpu-${kind}.cpuprofile`, JSON.stringify(profile))
        session.disconnect()
      }
    }
  }
  const n = REQUESTS * BATCH_SIZE
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  console.log(
    `${REQUESTS} requests of ${BATCH_SIZE} events per round and kind, ${ROUNDS} rounds, ${IN_FLIGHT} in flight`,
  )
  console.log('µs of CPU per event (median of the rounds; every round), wall µs per event (median):')
  for (const [name, r] of results) {
    const us = (ms: number) => ((ms * 1000) / n).toFixed(1)
    console.log(
      `${name.padEnd(24)} ${us(median(r.cpu)).padStart(6)}  (${r.cpu.map(us).join(' ')})  wall ${us(median(r.wall))}`,
    )
  }
} finally {
  await close()
}

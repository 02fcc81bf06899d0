// The projector's CPU per event, without ClickHouse: prepareBatch (decode, person updates, identity
// reads, person rules, row encoding) and the request bodies of its rows, over chunks of 1,000 events
// as capture writes them, on a real NATS KV identity state (committed after each batch, untimed).
// Baseline in the same run: the least any projector must do per event, JSON.parse of the chunk, the
// TSV line of each event and the request body of the lines. Times are CPU time of this process (user
// + system, GC threads included), which a busy machine disturbs far less than wall time; wall time
// and the main thread's GC pauses are printed beside.
// Also printed: decodeChunk alone over the same chunks as version 2 wrote them (one JSON document)
// and as capture writes them now (one event per line).
// Run: npx tsx bench/projector-cpu.ts   (env BATCHES=60 batches of 1,000 events, DISTINCT=5000 ids;
// PROFILE=1 writes a CPU profile of the warm pass to ./projector-cpu.cpuprofile, PROFILE=heap a profile
// of what it allocates, collected objects included, to ./projector-cpu.heapprofile; RESOLVE_ONLY=1
// times team spread's identity stage instead: the decisions and the resolved messages it publishes,
// no event rows; GEOIP=1 runs the geoip plugin on every event, each with a public address; REPEAT=n
// repeats the warm pass and the baseline, alternated, and prints the least of each)
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { PerformanceObserver } from 'node:perf_hooks'
import { v7 as uuidv7 } from 'uuid'
import { BUCKETS } from '../schema/jetstream.ts'
import { bucket, connectNats, migrateJetStream } from '../src/jetstream/connection.ts'
import { encodeChunk, LOG_FORMAT_VERSION, parseLogMessage } from '../src/jetstream/messages.ts'
import { createLogger } from '../src/observability/logger.ts'
import type { LogMessage, ProjectionContext, TeamPipeline } from '../src/projectors/batch.ts'
import { tsvBody } from '../src/projectors/clickhouse-io.ts'
import { KvIdentityStore } from '../src/projectors/identity-store/store.ts'
import { decodeChunk } from '../src/projectors/decode.ts'
import { prepareBatch } from '../src/projectors/prepare.ts'
import { runPlugins } from '../src/plugins/pipeline.ts'
import { resolvedPieces } from '../src/projectors/resolved.ts'
import { eventLine } from '../src/projectors/rows.ts'
import { LIVE_TABLES } from '../src/projectors/tables.ts'
import { benchNatsServer, benchProperties, decideOnlyContext } from './lib.ts'

const BATCHES = Number(process.env.BATCHES ?? 60)
const BATCH_SIZE = 1000
const DISTINCT = Number(process.env.DISTINCT ?? 5000)
const TEAM = 1
// public addresses the DB-IP lite database locates (GEOIP=1)
const GEOIP_ADDRESSES = ['8.8.8.8', '1.1.1.1', '81.2.69.142', '203.0.113.9', '2a00:1450:4001::1']

// Time spent in garbage collection pauses on the main thread, in milliseconds, as V8 reports them.
let gcMs = 0
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration
}).observe({ entryTypes: ['gc'] })

const log = createLogger('warn')
const nats = await benchNatsServer('bench-cpu')
const nc = await connectNats(nats.url)
try {
  await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
  const store = new KvIdentityStore(await bucket(nc, BUCKETS.identity), { nc })
  // RESOLVE_ONLY=1: the identity stage of team spread (decisions published instead of rows)
  const resolveOnly = process.env.RESOLVE_ONLY === '1'
  const ctx = { ...decideOnlyContext(store, LIVE_TABLES, 'bench', log), resolveOnly }
  const geoip = process.env.GEOIP === '1'
  if (geoip) {
    const at = new Date().toISOString()
    const configs = [
      {
        ...{ id: 1, team_id: TEAM, plugin: 1, name: 'geoip', enabled: true, order: 0, config: {} },
        ...{ log_level: 'WARN' as const, deleted: false, created_at: at, created_by: null, updated_at: at },
      },
    ]
    const pipeline: TeamPipeline = (event) => runPlugins(configs, event, { write() {} })
    ctx.plugins = { forTeam: async () => pipeline }
  }
  const now = new Date().toISOString()
  const documents: Buffer[] = []
  // The same events as bench/ingest.ts, as capture stamps them.
  const messages: LogMessage[] = Array.from({ length: BATCHES }, (_, b) => {
    const events = Array.from({ length: BATCH_SIZE }, (_, j) => {
      const i = b * BATCH_SIZE + j
      const at = new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString()
      return {
        uuid: uuidv7(),
        event: `bench_${b}`,
        distinct_id: `user-${i % DISTINCT}`,
        properties: benchProperties(i),
        timestamp: at,
        now,
        sent_at: null,
        ip: geoip ? GEOIP_ADDRESSES[i % GEOIP_ADDRESSES.length]! : null,
        team_id: TEAM,
      }
    })
    const data = encodeChunk({ v: LOG_FORMAT_VERSION, team_id: TEAM, lane: 'live', events })
    // the same chunk as version 2 wrote it (one JSON document), for the decoding comparison
    documents.push(Buffer.from(JSON.stringify({ v: 2, team_id: TEAM, lane: 'live', events })))
    return { seq: b + 1, subject: 'events.live.0', data, redelivered: false }
  })

  // Decoding alone, the same chunks in both layouts, alternated three times: version 2's document
  // (one string of the whole message) against the current version's lines; medians.
  const decodeUs = { document: [] as number[], lines: [] as number[] }
  for (let round = 0; round < 3; round++) {
    for (const [kind, datas] of [
      ['document', documents],
      ['lines', messages.map((m) => m.data)],
    ] as const) {
      const c = process.cpuUsage()
      let n = 0
      for (const d of datas) {
        const r = decodeChunk(d)
        if (r.ok) n += r.events.length
      }
      decodeUs[kind].push((cpuMs(c) * 1000) / n)
    }
  }

  // Baseline: parse each chunk (its lines, as any reader of the format must) and write each event's
  // line with the person fields fixed.
  const personId = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c'
  let lines = 0
  const baselinePass = () => {
    lines = 0
    const c0 = process.cpuUsage()
    for (const m of messages) {
      const body: string[] = []
      const chunk = (parseLogMessage(m.data) as { envelope: unknown }).envelope as {
        events: {
          uuid: string
          event: string
          distinct_id: string
          properties: Record<string, unknown>
          timestamp: string
          now: string
        }[]
      }
      chunk.events.forEach((e, offset) => {
        const ts = Date.parse(e.timestamp)
        const line = eventLine({
          teamId: TEAM,
          uuid: e.uuid,
          event: e.event,
          distinctId: e.distinct_id,
          personId,
          timestampMs: ts,
          properties: e.properties,
          personProperties: { plan: 'free' },
          elementsChain: '',
          sessionId: String(e.properties.$session_id ?? ''),
          groups: ['', '', '', '', ''],
          createdAtMs: Date.parse(e.now),
          seq: m.seq,
          offset,
        })
        body.push(line)
      })
      lines += body.length
      tsvBody(body)
    }
    return cpuMs(c0)
  }
  let baselineMs = baselinePass()

  // Cold: every distinct id is new on its first batch (state committed after each batch, untimed).
  const cold = await timePrepare(ctx, messages, true)
  // Warm: the same batches again over the state they built (a source of its own, so nothing is
  // skipped; nothing committed), the steady state of a projector whose users came back.
  const session = process.env.PROFILE ? new Session() : undefined
  const heap = process.env.PROFILE === 'heap'
  if (session) {
    session.connect()
    if (heap) {
      await session.post('HeapProfiler.enable')
      await session.post('HeapProfiler.startSampling', {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      })
    } else {
      await session.post('Profiler.enable')
      await session.post('Profiler.start')
    }
  }
  let warm = await timePrepare({ ...ctx, source: 'bench-warm' }, messages, false)
  // REPEAT=n: the warm pass and the baseline n times more, alternated; the least CPU time of each is
  // printed (on a shared machine the least is the one other processes disturbed least).
  for (let r = 1; r < Number(process.env.REPEAT ?? 1); r++) {
    baselineMs = Math.min(baselineMs, baselinePass())
    const again = await timePrepare({ ...ctx, source: 'bench-warm' }, messages, false)
    if (again.ms < warm.ms) warm = again
  }
  if (session && heap) {
    const { profile } = await session.post('HeapProfiler.stopSampling')
    writeFileSync('projector-cpu.heapprofile', JSON.stringify(profile))
    session.disconnect()
  } else if (session) {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync('projector-cpu.cpuprofile', JSON.stringify(profile))
    session.disconnect()
  }
  const us = (ms: number, n: number) => ((ms * 1000) / n).toFixed(1)
  console.log(
    `events: ${cold.events} (${lines} baseline lines) in chunks of ${BATCH_SIZE}, ${DISTINCT} distinct ids`,
  )
  console.log(`baseline (JSON.parse + TSV line + body):  ${us(baselineMs, lines)} µs/event CPU`)
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const [doc, byLine] = [median(decodeUs.document), median(decodeUs.lines)]
  console.log(
    `decodeChunk alone: version 2 document ${doc.toFixed(2)} µs/event, version 3 lines ${byLine.toFixed(2)} µs/event` +
      `  ratio ${(byLine / doc).toFixed(2)}`,
  )
  for (const [name, r] of [
    ['cold', cold],
    ['warm', warm],
  ] as const) {
    const s = r.stages
    console.log(
      `prepareBatch, ${name}:              ${us(r.ms, r.events)} µs/event CPU  (${Math.round((r.events / r.ms) * 1000)} events/s of CPU; wall ${us(r.wall, r.events)} µs/event)` +
        `  ratio to baseline ${(r.ms / r.events / (baselineMs / lines)).toFixed(2)}` +
        `  (${Math.round(r.bytes / r.events)} bytes of TSV/event)`,
    )
    console.log(
      `  wall by stage: decode ${us(s.decode, r.events)}, person updates + plugins ${us(s.plugins, r.events)}, ` +
        `prefetch ${us(s.prefetch, r.events)}, rules + encoding ${us(s.rules, r.events)} µs/event; ` +
        `GC pauses ${us(r.gc, r.events)} µs/event`,
    )
  }
} finally {
  await nc.close()
  await nats.stop()
}

/** CPU milliseconds of this process since `since`. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000
}

async function timePrepare(ctx: ProjectionContext, messages: LogMessage[], commit: boolean) {
  let ms = 0
  let wall = 0
  let events = 0
  let bytes = 0
  const stages = { decode: 0, plugins: 0, prefetch: 0, rules: 0 }
  const gc0 = gcMs
  for (const m of messages) {
    const t = performance.now()
    const c = process.cpuUsage()
    const p = await prepareBatch(ctx, [m], () => false)
    // The request bodies the writer sends, made as it makes them (clickhouse-io.ts).
    for (const t of p.rows.identity) bytes += tsvBody(t.lines).length
    if (ctx.resolveOnly)
      for (const piece of resolvedPieces(p.rows, { prefix: 'resolved', partitions: 8 }, 'EVENTS'))
        bytes += piece.data.length
    else bytes += tsvBody(p.rows.events.map((r) => r.line)).length
    // the taxonomy's rows as its write takes them (the INSERT itself is not timed, as the rows' are not)
    const taxonomy = p.taxonomy?.rows()
    ms += cpuMs(c)
    wall += performance.now() - t
    events += p.rows.events.length
    for (const k of Object.keys(stages) as (keyof typeof stages)[]) stages[k] += p.out.timings[k]
    if (commit) await ctx.store.commit(p.overlay.values(), ctx.source, p.seqs)
    // as after the write: the next batches know these names
    if (commit) p.taxonomy?.written(taxonomy)
  }
  // GC entries are delivered after the fact: let the last ones in before reading the total.
  await new Promise((resolve) => setTimeout(resolve, 50))
  const gc = gcMs - gc0
  return { ms, wall, events, bytes, gc, stages }
}

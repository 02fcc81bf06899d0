import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import { BUCKETS, EVENTS_STREAM, LANES } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import { selectRows } from '../clickhouse/client.ts'
import { PAUSE_KEY, pausedKey } from './control.ts'
import { namespacePointerKey } from './identity-keys.ts'
import { KvIdentityStore } from './identity-store-kv.ts'
import { durableName, laneSource } from './index.ts'
import { ProjectorPlugins } from './plugins.ts'
import { type LogMessage, type ProjectionPlugins, projectBatch } from './projection.ts'
import { LIVE_TABLES, suffixedTables, TABLE_KINDS } from './tables.ts'

// Rebuilds the projection from the log into fresh tables and a fresh identity namespace, then swaps
// both in. The build runs beside the live projectors; only the final catch-up and swap pause them.
// Progress is the replay's own watermark in its namespace, so a crashed replay resumes where it was.
// See docs/projectors.md ("Replay").

export interface ReplayOptions {
  nc: NatsConnection
  ch: ClickHouseClient
  log: Logger
  /** rebuild one project only; the other projects' rows are carried over unchanged */
  project?: number
  from?: number | Date
  /** stop at this sequence / time and leave the tables unswapped, for inspection */
  to?: number | Date
  stream?: string
  subjectPrefix?: string
  /** durable prefix of the live projectors whose positions the swap hands over */
  durablePrefix?: string
  batchSize?: number
  /** how long to wait for running projectors to acknowledge the pause */
  pauseTimeoutMs?: number
  progress?: (p: ReplayProgress) => void
  /**
   * the projects' plugin pipelines; default: the configs as they are now, without side effects
   * (no log lines, no webhooks); false: none
   */
  plugins?: ProjectionPlugins | false
}

export interface ReplayProgress {
  phase: 'build' | 'catch-up' | 'swap' | 'done'
  position: number
  end: number
  events: number
  eventsPerSecond: number
  etaSeconds: number | null
}

export interface ReplayResult {
  id: string
  resumed: boolean
  swapped: boolean
  tables: Record<string, string>
  lastSeq: number
  events: number
}

interface ReplayState {
  id: string
  project: number | null
  fromSeq: number
  fromTime: string | null
  toSeq: number | null
  toTime: string | null
  stream: string
  subjectPrefix: string
}

const STATE_KEY = 'replay.state'
const REPLAY_SOURCE = 'replay'
const enc = new TextEncoder()
const put = (kv: KV, key: string, v: unknown) => kv.put(key, enc.encode(JSON.stringify(v)))

export async function replay(o: ReplayOptions): Promise<ReplayResult> {
  const owned =
    o.plugins === undefined
      ? await ProjectorPlugins.open({ nc: o.nc, ch: o.ch, log: o.log }, { sideEffects: false })
      : undefined
  try {
    return await run(o, owned ?? (o.plugins || undefined))
  } finally {
    await owned?.stop()
  }
}

async function run(o: ReplayOptions, plugins: ProjectionPlugins | undefined): Promise<ReplayResult> {
  const stream = o.stream ?? EVENTS_STREAM
  const prefix = o.subjectPrefix ?? 'events'
  const kv = await bucket(o.nc, BUCKETS.identity)
  const saved = await kv.get(STATE_KEY)
  let state: ReplayState | undefined =
    saved?.operation === 'PUT' && saved.length > 0 ? saved.json<ReplayState>() : undefined
  const resumed = !!state && state.stream === stream
  if (!state || !resumed) {
    state = {
      id: Date.now().toString(36),
      project: o.project ?? null,
      fromSeq: typeof o.from === 'number' ? o.from : 1,
      fromTime: o.from instanceof Date ? o.from.toISOString() : null,
      toSeq: typeof o.to === 'number' ? o.to : null,
      toTime: o.to instanceof Date ? o.to.toISOString() : null,
      stream,
      subjectPrefix: prefix,
    }
    await put(kv, STATE_KEY, state)
  } else {
    o.log.info({ id: state.id }, 'replay: resuming the unfinished replay')
  }
  const ns = `r${state.id}`
  const suffix = `_replay_${state.id}`
  const tables = suffixedTables(suffix)
  for (const k of TABLE_KINDS) {
    await o.ch.command({ query: `CREATE TABLE IF NOT EXISTS ${tables[k]} AS ${LIVE_TABLES[k]}` })
  }
  const store = new KvIdentityStore(kv, { namespace: ns })
  const js = jetstream(o.nc)
  const jsm = await jetstreamManager(o.nc)
  const started = Date.now()
  let events = 0
  const teams = state.project === null ? undefined : new Set([state.project])
  const report = (phase: ReplayProgress['phase'], position: number, end: number) => {
    const secs = (Date.now() - started) / 1000
    const rate = secs > 0 ? events / secs : 0
    const msgRate = secs > 0 ? position / secs : 0
    o.progress?.({
      phase,
      position,
      end,
      events,
      eventsPerSecond: Math.round(rate),
      etaSeconds: msgRate > 0 ? Math.max(0, Math.round((end - position) / msgRate)) : null,
    })
  }

  // Reads the log from the replay's watermark up to `end`, projecting into the fresh tables.
  const pass = async (phase: 'build' | 'catch-up', end: number): Promise<number> => {
    const done = await store.watermark(ns, REPLAY_SOURCE)
    if (done >= end) return done
    const [{ m } = { m: '0' }] = await selectRows<{ m: string }>(
      o.ch,
      `SELECT max(_seq) AS m FROM ${tables.events}`,
    )
    const mayBeWritten = Number(m)
    const startByTime = done === 0 && state.fromTime !== null
    const ci = await jsm.consumers.add(stream, {
      filter_subject: `${prefix}.>`,
      ack_policy: AckPolicy.None,
      inactive_threshold: 60e9,
      ...(startByTime
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: state.fromTime! }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(done + 1, state.fromSeq) }),
    })
    const consumer = await js.consumers.get(stream, ci.name)
    try {
      for (;;) {
        const batch: JsMsg[] = []
        const it = await consumer.fetch({ max_messages: o.batchSize ?? 200, expires: 1000 })
        for await (const msg of it) batch.push(msg)
        const inRange = batch.filter((msg) => msg.seq <= end && !pastTo(state, msg))
        if (inRange.length > 0) {
          const msgs: LogMessage[] = inRange.map((msg) => ({
            seq: msg.seq,
            subject: msg.subject,
            data: msg.data,
            redelivered: false,
          }))
          const out = await projectBatch(
            { ch: o.ch, js, store, tables, source: REPLAY_SOURCE, teams, log: o.log, plugins },
            msgs,
            (msg) => msg.seq <= mayBeWritten,
          )
          events += out.events
          report(phase, msgs.at(-1)!.seq, end)
        }
        const last = batch.at(-1)
        if (!last || inRange.length < batch.length || last.seq >= end || last.info.pending === 0) break
      }
    } finally {
      await jsm.consumers.delete(stream, ci.name).catch(() => undefined)
    }
    // Nothing more in range: the replay is complete up to `end` even where no message matched.
    if (end > (await store.watermark(ns, REPLAY_SOURCE))) await store.setWatermark(ns, REPLAY_SOURCE, end)
    return end
  }

  const lastSeq = async () => (await jsm.streams.info(stream)).state.last_seq
  const toEnd = state.toSeq ?? (await lastSeq())
  let position = await pass('build', toEnd)
  if (state.toSeq !== null || state.toTime !== null) {
    report('done', position, toEnd)
    await kv.delete(STATE_KEY)
    return { id: state.id, resumed, swapped: false, tables: { ...tables }, lastSeq: position, events }
  }

  // Catch up while live projection runs, then pause it for the last stretch and the swap.
  await pass('catch-up', await lastSeq())
  const token = `replay-${state.id}-${Date.now()}`
  const durablePrefix = o.durablePrefix ?? 'projector'
  await pauseProjectors(o, kv, jsm, stream, durablePrefix, token)
  try {
    const end = await lastSeq()
    position = await pass('catch-up', end)
    report('swap', position, end)
    if (state.project !== null) {
      for (const k of TABLE_KINDS) {
        await o.ch.command({
          query: `INSERT INTO ${tables[k]} SELECT * FROM ${LIVE_TABLES[k]} WHERE team_id != ${state.project}`,
        })
      }
    }
    const old = suffixedTables(`_old_${state.id}`)
    await o.ch.command({
      query: `RENAME TABLE ${TABLE_KINDS.map(
        (k) => `${LIVE_TABLES[k]} TO ${old[k]}, ${tables[k]} TO ${LIVE_TABLES[k]}`,
      ).join(', ')}`,
    })
    // The live lanes continue from their own positions: everything up to `end` is in the new state.
    for (const lane of LANES) {
      await store.setWatermark(ns, laneSource(stream, durableName(durablePrefix, lane)), end)
    }
    if (state.project !== null) {
      await put(kv, namespacePointerKey(state.project), { ns })
    } else {
      const teamPointers = await kv.keys('nsp.t.>')
      for await (const k of teamPointers) await kv.delete(k)
      await put(kv, namespacePointerKey('default'), { ns })
    }
    for (const k of TABLE_KINDS) await o.ch.command({ query: `DROP TABLE IF EXISTS ${old[k]}` })
    await kv.delete(STATE_KEY)
    report('done', position, end)
  } finally {
    await kv.delete(PAUSE_KEY)
  }
  return { id: state.id, resumed, swapped: true, tables: { ...LIVE_TABLES }, lastSeq: position, events }
}

function pastTo(state: ReplayState, msg: JsMsg): boolean {
  return state.toTime !== null && msg.time.getTime() > Date.parse(state.toTime)
}

/** Pauses the projectors that are running (a durable with a waiting pull request has an owner). */
async function pauseProjectors(
  o: ReplayOptions,
  kv: KV,
  jsm: Awaited<ReturnType<typeof jetstreamManager>>,
  stream: string,
  durablePrefix: string,
  token: string,
): Promise<void> {
  const active: string[] = []
  for (const lane of LANES) {
    const info = await jsm.consumers.info(stream, durableName(durablePrefix, lane)).catch(() => undefined)
    if (info && info.num_waiting > 0) active.push(info.name)
  }
  await kv.put(PAUSE_KEY, enc.encode(token))
  const deadline = Date.now() + (o.pauseTimeoutMs ?? 30_000)
  for (const durable of active) {
    for (;;) {
      const e = await kv.get(pausedKey(durable))
      if (e?.operation === 'PUT' && e.string() === token) break
      if (Date.now() > deadline) {
        await kv.delete(PAUSE_KEY)
        throw new Error(`replay: projector ${durable} did not pause`)
      }
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  o.log.info({ active }, 'replay: projectors paused')
}

/** A `--from` / `--to` value: a stream sequence (digits) or a time (anything Date.parse reads). */
export function parsePosition(s: string | undefined): number | Date | undefined {
  if (s === undefined) return undefined
  if (/^\d+$/.test(s)) return Number(s)
  const t = Date.parse(s)
  if (!Number.isFinite(t)) throw new Error(`not a sequence or a time: ${s}`)
  return new Date(t)
}

/** `burrow replay`: connects, replays with a progress line, prints the outcome. */
export async function replayCommand(
  args: { project?: string; from?: string; to?: string },
  env: { natsUrl: string; ch: ClickHouseClient; log: Logger; batchSize: number },
): Promise<ReplayResult> {
  const { connectNats } = await import('../jetstream/connection.ts')
  const nc = await connectNats(env.natsUrl, 'burrow-replay')
  const tty = process.stderr.isTTY
  try {
    const result = await replay({
      nc,
      ch: env.ch,
      log: env.log,
      project: args.project === undefined ? undefined : Number(args.project),
      from: parsePosition(args.from),
      to: parsePosition(args.to),
      batchSize: env.batchSize,
      progress: (p) => {
        const eta = p.etaSeconds === null ? '?' : `${p.etaSeconds}s`
        const line =
          `replay ${p.phase}: seq ${p.position}/${p.end}, ${p.events} events, ` +
          `${p.eventsPerSecond} events/s, ETA ${eta}`
        if (tty) process.stderr.write(`\r${line}\x1b[K`)
        else process.stderr.write(`${line}\n`)
      },
    })
    if (tty) process.stderr.write('\n')
    return result
  } finally {
    await nc.drain()
  }
}

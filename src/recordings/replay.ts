import { AckPolicy, DeliverPolicy, jetstream, type JsMsg } from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import { TableAdmin } from '../clickhouse/table-admin.ts'
import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'
import { connectNats, manager, type NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { PlaylistStore } from '../playlists/store.ts'
import { PAUSE_KEY, pausedKey } from '../projectors/control.ts'
import { projectRecordings, type RecordingLogMessage } from './projection.ts'
import { RECORDINGS_DURABLE, writeWatermark } from './projector.ts'
import { expireRecordings } from './retention.ts'
import { ensureRecordingsLog, RECORDINGS_STREAM, recordingsBucket } from './stream.ts'
import {
  LIVE_RECORDING_TABLES,
  RECORDING_TABLE_KINDS,
  type RecordingTables,
  suffixedRecordingTables,
} from './tables.ts'

// `burrow replay` for recordings: the RECORDINGS stream is projected into fresh tables with the live
// projector's code, retention is applied to them, and they are swapped in with one RENAME while the
// recordings projector is paused; its watermark then says the log up to the swap is in the new
// tables. A crashed replay resumes from its own watermark (in-doubt batches are reconciled).

export interface RecordingsReplayOptions {
  nc: NatsConnection
  ch: ClickHouseClient
  /** where the tables' rows live (cluster mode: every shard, docs/scaling.md); default: `ch`'s server */
  admin?: TableAdmin
  log: Logger
  retentionDays: number
  /** rebuild one project only; the other projects' rows are carried over unchanged */
  project?: number
  /** start at this time (the rebuilt tables then hold nothing older) */
  from?: Date
  /** stop at this time and leave the tables unswapped, for inspection */
  to?: Date
  batchSize?: number
  pauseTimeoutMs?: number
  /** the log and the live projector's consumer (tests use their own); default RECORDINGS */
  stream?: string
  filterSubject?: string
  durable?: string
  progress?: (p: { phase: string; position: number; end: number; chunks: number }) => void
}

export interface RecordingsReplayResult {
  id: string
  resumed: boolean
  swapped: boolean
  tables: RecordingTables
  lastSeq: number
  chunks: number
}

interface State {
  id: string
  project: number | null
  from: string | null
  to: string | null
}

const stateKey = (stream: string) => `replay.${stream}.state`
const watermarkOf = (stream: string) => `replay.${stream}.w`
const enc = new TextEncoder()

async function readNumber(kv: KV, key: string): Promise<number> {
  const e = await kv.get(key)
  return e?.operation === 'PUT' && e.length > 0 ? Number(e.string()) || 0 : 0
}

export async function replayRecordings(o: RecordingsReplayOptions): Promise<RecordingsReplayResult> {
  const kv = await recordingsBucket(o.nc)
  const admin = o.admin ?? TableAdmin.single(o.ch)
  const stream = o.stream ?? RECORDINGS_STREAM
  const durable = o.durable ?? RECORDINGS_DURABLE
  const STATE_KEY = stateKey(stream)
  const WATERMARK_KEY = watermarkOf(stream)
  const saved = await kv.get(STATE_KEY)
  let state = saved?.operation === 'PUT' && saved.length > 0 ? saved.json<State>() : undefined
  const resumed = state !== undefined
  if (!state) {
    state = {
      id: Date.now().toString(36),
      project: o.project ?? null,
      from: o.from?.toISOString() ?? null,
      to: o.to?.toISOString() ?? null,
    }
    await kv.put(STATE_KEY, enc.encode(JSON.stringify(state)))
    await kv.put(WATERMARK_KEY, enc.encode('0'))
  } else o.log.info({ id: state.id }, 'recordings replay: resuming the unfinished replay')
  const tables = suffixedRecordingTables(`_replay_${state.id}`)
  for (const k of RECORDING_TABLE_KINDS) await admin.createLike(tables[k], LIVE_RECORDING_TABLES[k])
  const js = jetstream(o.nc)
  const jsm = await manager(o.nc)
  const teams = state.project === null ? undefined : new Set([state.project])
  const toMs = state.to === null ? Infinity : Date.parse(state.to)
  let chunks = 0

  const pass = async (phase: string, end: number): Promise<number> => {
    const done = await readNumber(kv, WATERMARK_KEY)
    if (done >= end) return done
    const [{ m } = { m: '0' }] = await selectRows<{ m: string }>(
      o.ch,
      `SELECT max(s) AS m FROM (SELECT max(_seq) AS s FROM ${tables.snapshots}
         UNION ALL SELECT max(_seq) AS s FROM ${tables.deleted})`,
    )
    const mayBeWritten = Number(m)
    const byTime = done === 0 && state.from !== null
    const ci = await jsm.consumers.add(stream, {
      filter_subject: o.filterSubject ?? 'recordings.>',
      ack_policy: AckPolicy.None,
      inactive_threshold: 60e9,
      ...(byTime
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: state.from! }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: done + 1 }),
    })
    const consumer = await js.consumers.get(stream, ci.name)
    try {
      for (;;) {
        const batch: JsMsg[] = []
        for await (const msg of await consumer.fetch({ max_messages: o.batchSize ?? 100, expires: 1000 })) {
          batch.push(msg)
        }
        const inRange = batch.filter((msg) => msg.seq <= end && msg.time.getTime() <= toMs)
        if (inRange.length) {
          const msgs: RecordingLogMessage[] = inRange.map((x) => ({
            seq: x.seq,
            subject: x.subject,
            data: x.data,
          }))
          const out = await projectRecordings(
            { ch: o.ch, admin, js, tables, log: o.log, teams },
            msgs,
            (x) => x.seq <= mayBeWritten,
          )
          chunks += out.chunks
          await kv.put(WATERMARK_KEY, enc.encode(String(msgs.at(-1)!.seq)))
          o.progress?.({ phase, position: msgs.at(-1)!.seq, end, chunks })
        }
        const last = batch.at(-1)
        if (!last || inRange.length < batch.length || last.seq >= end || last.info.pending === 0) break
      }
    } finally {
      await jsm.consumers.delete(stream, ci.name).catch(() => undefined)
    }
    if (end > (await readNumber(kv, WATERMARK_KEY))) await kv.put(WATERMARK_KEY, enc.encode(String(end)))
    return end
  }

  const lastSeq = async () => (await jsm.streams.info(stream)).state.last_seq
  let position = await pass('build', await lastSeq())
  if (state.to !== null) {
    await kv.delete(STATE_KEY)
    return { id: state.id, resumed, swapped: false, tables, lastSeq: position, chunks }
  }
  const token = `recordings-replay-${state.id}-${Date.now()}`
  await pauseProjector(o, kv, token, stream, durable)
  try {
    position = await pass('catch-up', await lastSeq())
    if (state.project !== null) {
      for (const k of RECORDING_TABLE_KINDS) {
        await admin.copyRows(tables[k], LIVE_RECORDING_TABLES[k], `team_id != ${state.project}`)
      }
    }
    // retention (of every project: the tables swapped in are the live ones) before the swap, so
    // the new tables never show a recording the live ones had already expired
    await expireRecordings(
      o.ch,
      admin,
      await PlaylistStore.open(o.nc),
      o.retentionDays,
      Date.now(),
      tables,
      o.log,
    )
    await admin.mutationsDone([tables.snapshots, tables.summary])
    const old = suffixedRecordingTables(`_old_${state.id}`)
    await admin.swap(
      RECORDING_TABLE_KINDS.map((k) => ({ live: LIVE_RECORDING_TABLES[k], fresh: tables[k], old: old[k] })),
    )
    await writeWatermark(kv, durable, position)
    for (const k of RECORDING_TABLE_KINDS) await admin.drop(old[k])
    await kv.delete(STATE_KEY)
    o.progress?.({ phase: 'done', position, end: position, chunks })
  } finally {
    await kv.delete(PAUSE_KEY)
  }
  return {
    id: state.id,
    resumed,
    swapped: true,
    tables: { ...LIVE_RECORDING_TABLES },
    lastSeq: position,
    chunks,
  }
}

/** Pauses the running recordings projector (a consumer with a waiting pull request has an owner). */
async function pauseProjector(
  o: RecordingsReplayOptions,
  kv: KV,
  token: string,
  stream: string,
  durable: string,
): Promise<void> {
  const jsm = await manager(o.nc)
  const info = await jsm.consumers.info(stream, durable).catch(() => undefined)
  await kv.put(PAUSE_KEY, enc.encode(token))
  if (!info || info.num_waiting === 0) return
  const deadline = Date.now() + (o.pauseTimeoutMs ?? 30_000)
  for (;;) {
    const e = await kv.get(pausedKey(durable))
    if (e?.operation === 'PUT' && e.string() === token) return
    if (Date.now() > deadline) {
      await kv.delete(PAUSE_KEY)
      throw new Error('recordings replay: the recordings projector did not pause')
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** `burrow replay`'s recordings part: times in --from/--to apply; a sequence names EVENTS, so it skips. */
export async function replayRecordingsCommand(
  args: { project?: string; from?: string; to?: string },
  env: {
    natsUrl: string
    ch: ClickHouseClient
    admin?: TableAdmin
    log: Logger
    PROJECTOR_BATCH_SIZE: number
    RECORDINGS_RETENTION_DAYS: number
    RECORDINGS_LOG_MAX_AGE_DAYS: number
  },
): Promise<RecordingsReplayResult | { skipped: string }> {
  const isSeq = (s?: string) => s !== undefined && /^\d+$/.test(s)
  if (isSeq(args.from) || isSeq(args.to)) {
    return {
      skipped: 'a stream sequence in --from/--to names a position of EVENTS; recordings were not replayed',
    }
  }
  const time = (s?: string) => (s === undefined ? undefined : new Date(Date.parse(s)))
  const nc = await connectNats(env.natsUrl, 'burrow-replay-recordings')
  try {
    await ensureRecordingsLog(nc, { maxAgeDays: env.RECORDINGS_LOG_MAX_AGE_DAYS })
    return await replayRecordings({
      nc,
      ch: env.ch,
      admin: env.admin,
      log: env.log,
      retentionDays: env.RECORDINGS_RETENTION_DAYS,
      batchSize: env.PROJECTOR_BATCH_SIZE,
      project: args.project === undefined ? undefined : Number(args.project),
      from: time(args.from),
      to: time(args.to),
      progress: (p) =>
        process.stderr.write(
          `recordings replay ${p.phase}: seq ${p.position}/${p.end}, ${p.chunks} chunks\n`,
        ),
    })
  } finally {
    await nc.drain()
  }
}

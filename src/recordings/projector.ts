import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  jetstream,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import { nanos } from '@nats-io/transport-node'
import { TableAdmin } from '../clickhouse/table-admin.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import { manager, type NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { ProjectorControl } from '../projectors/control.ts'
import { backoffDelay, sleep } from '../retry/backoff.ts'
import { DLQ_RECORDINGS_SUBJECT, projectRecordings, type RecordingProjectionContext } from './projection.ts'
import { RECORDINGS_STREAM, recordingsBucket } from './stream.ts'
import { LIVE_RECORDING_TABLES, type RecordingTables } from './tables.ts'

// The recordings projector: one durable pull consumer over the RECORDINGS stream, one batch at a
// time in log order, retried in-process on I/O errors and acknowledged only once ClickHouse has the
// batch (projection.ts says how a redelivered batch is reconciled). Like the events projector it
// recreates an orphaned consumer at its ack floor so in-doubt messages come first, pauses while a
// replay swaps tables (ProjectorControl, in the recordings bucket), and skips what a replay already
// projected (its watermark).

export const RECORDINGS_DURABLE = 'recordings-projector'
export const watermarkKey = (durable: string) => `w.${durable.replace(/[^A-Za-z0-9_-]/g, '_')}`

const enc = new TextEncoder()

/** The sequence up to which a replay already projected this consumer's messages (0: none). */
export async function readWatermark(kv: KV, durable: string): Promise<number> {
  const e = await kv.get(watermarkKey(durable))
  return e?.operation === 'PUT' && e.length > 0 ? Number(e.string()) || 0 : 0
}

export async function writeWatermark(kv: KV, durable: string, seq: number): Promise<void> {
  await kv.put(watermarkKey(durable), enc.encode(String(seq)))
}

export interface RecordingsProjectorOptions {
  nc: NatsConnection
  ch: ClickHouseClient
  /** where deletes' mutations run; default: `ch`'s own database (one server) */
  admin?: TableAdmin
  log: Logger
  batchSize: number
  maxWaitMs: number
  ackWaitMs?: number
  /** the log to read (tests use streams of their own); default RECORDINGS, `recordings.>` */
  stream?: string
  filterSubject?: string
  durable?: string
  tables?: RecordingTables
  /** project only these teams */
  teams?: ReadonlySet<number>
  /** a batch stops growing past this many payload bytes */
  maxBatchBytes?: number
  afterStep?: RecordingProjectionContext['afterStep']
  /** called when a SimulatedCrash stopped the consumer (tests close the connection here) */
  onCrash?: () => Promise<void> | void
}

export interface RunningRecordingsProjector {
  /** messages acknowledged so far */
  processed(): number
  stop(): Promise<void>
}

/** Thrown by a test's fault hook to stop the projector dead between two write steps. */
export class SimulatedCrash extends Error {
  constructor() {
    super('simulated crash')
    this.name = 'SimulatedCrash'
  }
}

const POLICY = { initialMs: 200, maxMs: 10_000 }

/** Starts the recordings projector; resolves once its consumer is running. */
export async function startRecordingsProjector(
  o: RecordingsProjectorOptions,
): Promise<RunningRecordingsProjector> {
  const durable = o.durable ?? RECORDINGS_DURABLE
  const stream = o.stream ?? RECORDINGS_STREAM
  const ackWaitMs = o.ackWaitMs ?? 30_000
  const maxBatchBytes = o.maxBatchBytes ?? 16 * 1024 * 1024
  const log = o.log.child({ component: 'recordings-projector' })
  const js = jetstream(o.nc)
  const jsm = await manager(o.nc)
  const kv = await recordingsBucket(o.nc)
  let watermark = await readWatermark(kv, durable)
  const control = await ProjectorControl.open(kv, () => {
    void readWatermark(kv, durable).then((w) => (watermark = w))
  })
  const recoverUpTo = await ensureConsumer(jsm, {
    stream,
    durable,
    filterSubject: o.filterSubject ?? 'recordings.>',
    batchSize: o.batchSize,
    ackWaitMs,
    log,
  })
  const consumer = await js.consumers.get(stream, durable)
  const messages: ConsumerMessages = await consumer.consume({ max_messages: Math.max(o.batchSize * 2, 16) })
  const queue: JsMsg[] = []
  let wake: (() => void) | undefined
  let stopping = false
  let processed = 0
  void (async () => {
    for await (const m of messages) {
      if (stopping) {
        m.nak()
        continue
      }
      queue.push(m)
      wake?.()
    }
  })().catch((err) => log.error({ err }, 'recordings projector: message feed failed'))
  const offControl = control.onChange(() => wake?.())
  const ctx: RecordingProjectionContext = {
    ch: o.ch,
    admin: o.admin ?? TableAdmin.single(o.ch),
    js,
    tables: o.tables ?? LIVE_RECORDING_TABLES,
    log,
    dlqSubject: DLQ_RECORDINGS_SUBJECT,
    afterStep: o.afterStep,
    teams: o.teams,
  }
  const paused = () => control.token !== null
  const waitFor = (ms?: number) =>
    new Promise<void>((r) => {
      const t = ms === undefined ? undefined : setTimeout(r, ms)
      wake = () => {
        if (t) clearTimeout(t)
        r()
      }
    })

  const nextBatch = async (): Promise<JsMsg[]> => {
    while (queue.length === 0 && !stopping && !paused()) await waitFor()
    const deadline = Date.now() + o.maxWaitMs
    const full = () => {
      let bytes = 0
      for (let i = 0; i < queue.length && i < o.batchSize; i++) bytes += queue[i]!.data.length
      return queue.length >= o.batchSize || bytes >= maxBatchBytes
    }
    while (!full() && !stopping && !paused() && Date.now() < deadline) await waitFor(deadline - Date.now())
    const batch: JsMsg[] = []
    let bytes = 0
    while (queue.length && batch.length < o.batchSize && (batch.length === 0 || bytes < maxBatchBytes)) {
      const m = queue.shift()!
      batch.push(m)
      bytes += m.data.length
    }
    return batch
  }

  /** One batch until it succeeds; false when the consumer must stop (a simulated crash, or stopping). */
  const process = async (batch: JsMsg[]): Promise<boolean> => {
    const alive = setInterval(() => batch.forEach((m) => m.working()), Math.max(ackWaitMs / 3, 100))
    try {
      for (let attempt = 0; ; attempt++) {
        if (attempt > 0) {
          if (stopping) {
            batch.forEach((m) => m.nak())
            return false
          }
          await sleep(backoffDelay(POLICY, attempt))
        }
        const todo = batch.filter((m) => m.seq > watermark)
        const redelivered = new Set(todo.filter((m) => m.redelivered).map((m) => m.seq))
        try {
          const out = await projectRecordings(
            ctx,
            todo.map((m) => ({ seq: m.seq, subject: m.subject, data: m.data })),
            (m) => attempt > 0 || m.seq <= recoverUpTo || redelivered.has(m.seq),
          )
          for (const m of batch) {
            if (out.poison.has(m.seq)) m.term()
            else m.ack()
          }
          processed += batch.length
          return true
        } catch (err) {
          if (err instanceof SimulatedCrash) {
            stopping = true
            await o.onCrash?.()
            return false
          }
          log.warn({ err, attempt: attempt + 1 }, 'recordings projector: batch failed, retrying')
        }
      }
    } finally {
      clearInterval(alive)
    }
  }

  const loop = (async () => {
    while (!stopping) {
      await control.gate(durable, () => stopping)
      const batch = await nextBatch()
      if (batch.length === 0) continue
      if (paused()) {
        queue.unshift(...batch)
        continue
      }
      if (!(await process(batch))) return
    }
  })()

  return {
    processed: () => processed,
    async stop() {
      stopping = true
      wake?.()
      await loop
      offControl()
      control.close()
      await messages.close().catch(() => undefined)
      for (const m of queue.splice(0)) m.nak()
    },
  }
}

// An orphaned consumer (unacknowledged messages, no waiting pull request: its owner died) is
// recreated at its ack floor so the in-doubt messages come first; they are reconciled up to the
// sequence it had delivered. Returns that sequence (0 when nothing is in doubt).
async function ensureConsumer(
  jsm: JetStreamManager,
  o: {
    stream: string
    durable: string
    filterSubject: string
    batchSize: number
    ackWaitMs: number
    log: Logger
  },
): Promise<number> {
  const { stream, durable, batchSize, ackWaitMs, log } = o
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    filter_subject: o.filterSubject,
    ack_wait: nanos(ackWaitMs),
    max_ack_pending: Math.max(batchSize * 4, 1000),
  }
  const info = await jsm.consumers.info(stream, durable).catch(() => undefined)
  if (!info) {
    await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.All }).catch(async (err) => {
      if (!(await jsm.consumers.info(stream, durable).catch(() => undefined))) throw err
    })
    return 0
  }
  if (info.num_ack_pending > 0 && info.num_waiting === 0) {
    await jsm.consumers.delete(stream, durable)
    await jsm.consumers.add(stream, {
      ...config,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: info.ack_floor.stream_seq + 1,
    })
    log.info(
      { durable, from: info.ack_floor.stream_seq + 1, recoverUpTo: info.delivered.stream_seq },
      'recordings projector: resuming after unacknowledged messages',
    )
    return info.delivered.stream_seq
  }
  if (info.config.ack_wait !== config.ack_wait) {
    await jsm.consumers.update(stream, durable, { ack_wait: config.ack_wait })
  }
  return 0
}

import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import type { BackoffPolicy } from '../retry/backoff.ts'
import type { BatchOutcome, LogMessage, PreparedBatch, ProjectionContext } from './batch.ts'
import type { ProjectorControl } from './control.ts'
import { TransientError } from './errors.ts'
import type { Mutex } from './mutex.ts'
import { FeedConsumer } from './feed-consumer.ts'
import { holdBytes, pullBytes } from './batch-cut.ts'
import { ensureDurable } from './durable.ts'
import { prepareBatch } from './prepare.ts'
import { commitBatch, writeRows } from './projection.ts'

/** What a lane consumer needs: its consumer, the shared mutex and control, and its projection. */
export interface LaneConsumerOptions {
  nc: NatsConnection
  js: JetStreamClient
  jsm: JetStreamManager
  stream: string
  durable: string
  filterSubject: string
  batchSize: number
  /** a batch is also cut at this many bytes of message data (default BATCH_BYTES, batch-cut.ts) */
  batchBytes?: number
  /**
   * bytes of message data held delivered and unacknowledged before the consumer stops pulling
   * (default holdBytes(batchBytes), batch-cut.ts); a larger message is still taken, alone
   */
  holdBytes?: number
  maxWaitMs: number
  ackWaitMs: number
  mutex: Mutex
  control?: ProjectorControl
  projection: ProjectionContext
  log: Logger
  /** batches decided ahead while the previous one is written; 0 = one batch at a time */
  pipelineDepth?: number
  /** waits between attempts at a failed batch (default: 200 ms doubling to 10 s) */
  retry?: BackoffPolicy
  /**
   * The consumer's previous owner is known to be gone (its partition lease expired): its
   * unacknowledged messages are taken over even while the server still counts its pull requests,
   * which outlive a dead connection until they expire.
   */
  takeOver?: boolean
}

/** The default waits between attempts at a failed batch. */
export const BATCH_RETRY: BackoffPolicy = { initialMs: 200, maxMs: 10_000 }

/** nats-server's default max_payload, for a connection that has not been told the server's yet */
export const DEFAULT_MAX_PAYLOAD = 1024 * 1024

/** batches a lane projects in a row, when no other lane waits, before it lets the others take a turn */
const MAX_RUN = 8

/** A promise's outcome, held without an unhandled rejection until it is looked at. */
export type Settled<T> = { ok: true; value: T } | { ok: false; err: unknown }
export const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (err: unknown) => ({ ok: false as const, err }),
  )

/** A batch in the pipeline, kept alive (ack deadline) until it is acknowledged or given back. */
interface Stage {
  msgs: JsMsg[]
  alive: NodeJS.Timeout
}

type Committing = Stage & { done: Promise<Settled<BatchOutcome>> }

/** A batch that failed, given back to be tried again. */
interface Failure {
  msgs: JsMsg[]
  err: unknown
}

const toLogMessages = (batch: JsMsg[]): LogMessage[] =>
  batch.map((m) => ({ seq: m.seq, subject: m.subject, data: m.data, redelivered: m.redelivered }))

/**
 * One durable pull consumer over one lane, processing batches strictly in log order. A failed batch
 * is retried in-process with backoff (never nacked: a nack would let later messages overtake it),
 * letting the other lanes of the process go between attempts.
 */
export class LaneConsumer {
  private readonly c: FeedConsumer
  /** messages up to this stream sequence may already be in ClickHouse (delivered before a failure) */
  private recoverUpTo = 0
  /** messages acknowledged (or terminated) so far */
  processed = 0
  /** batches decided while the one before them was being written (the pipeline at work) */
  decidedAhead = 0

  constructor(private readonly o: LaneConsumerOptions) {
    this.c = new FeedConsumer({
      ...o,
      bytes: {
        hold: o.holdBytes ?? holdBytes(o.batchBytes),
        pull: pullBytes(o.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD),
      },
      refuseWhileStopping: true,
      words: { prefix: 'projector', stops: 'lane stops', stopping: 'lane stopping' },
    })
  }

  /** Creates or recovers the durable consumer and starts projecting. */
  async start(): Promise<void> {
    this.recoverUpTo = Math.max(this.recoverUpTo, await ensureDurable(this.o))
    await this.c.start((batch) => this.project(batch))
  }

  /** Finishes the in-flight batch, then stops consuming; what was fetched but not started is nacked. */
  stop(): Promise<void> {
    return this.c.stop()
  }

  /**
   * The one retry-and-ack path. Each attempt holds the identity mutex (a run of batches from `first`,
   * see processRun); a failed batch is tried again alone, after a wait by the retry policy spent
   * outside the mutex, so a lane that keeps failing (ClickHouse refusing or down) never holds up the
   * other lanes for more than the batch it is on. Every retry reconciles (its rows may be written).
   * False when the lane must stop: stopping, or its NATS connection closed for good.
   */
  private async project(first: JsMsg[]): Promise<boolean> {
    let current = first
    let waiting: NodeJS.Timeout | undefined
    try {
      return await this.c.retry(
        async (attempt) => {
          clearInterval(waiting)
          const failed = await this.o.mutex.run(() => this.processRun(current, attempt > 1))
          if (!failed) return
          current = failed.msgs
          waiting = this.c.keepAlive(current)
          throw failed.err
        },
        this.o.retry ?? BATCH_RETRY,
        ({ attempt, waitMs, err }) => {
          if (!(err instanceof TransientError))
            this.o.log.error({ err }, 'projector: unexpected batch failure')
          this.o.log.warn(
            { err, attempt, wait: waitMs, durable: this.o.durable },
            'projector: batch failed, retrying',
          )
        },
        () => current,
      )
    } finally {
      clearInterval(waiting)
    }
  }

  /**
   * Projects `first` and then, while messages are waiting and no other lane waits for the mutex (at
   * most MAX_RUN batches), the batches after it, in a pipeline: while batch N's rows are written,
   * batch N+1 is decided (decode, plugins, identity reads, rules, row encoding) and batch N-1's
   * identity state is committed. Commits and acknowledgements stay in log order; N+1 reads N's
   * identity changes through N's overlay until N's commit is done. A failure gives back every batch
   * in flight: the failed one is returned (to be retried alone), the others go back to the front of
   * the queue and are reconciled when their turn comes (their rows may have been written).
   * `alone`: no batch after `first`.
   */
  private async processRun(first: JsMsg[], alone: boolean): Promise<Failure | undefined> {
    const depth = alone ? 0 : (this.o.pipelineDepth ?? 1)
    let cur: Stage = { msgs: first, alive: this.c.keepAlive(first) }
    let curPrepared = settle(this.prepare(first))
    let committing: Committing | undefined
    for (let n = 1; ; n++) {
      const p = await curPrepared
      if (!p.ok) return this.giveBack(p.err, committing, [cur])
      const prepared = p.value
      let next: Stage | undefined
      let nextPrepared: Promise<Settled<PreparedBatch>> | undefined
      if (this.mayDecideAhead(n, depth)) {
        const msgs = this.c.feed.take()
        next = { msgs, alive: this.c.keepAlive(msgs) }
        this.decidedAhead++
        nextPrepared = settle(this.prepare(msgs, prepared))
      }
      const written = await settle(writeRows(this.o.projection, prepared))
      if (!written.ok) return this.giveBack(written.err, committing, [cur, next], nextPrepared)
      if (committing) {
        const c = await committing.done
        if (!c.ok) return this.giveBack(c.err, undefined, [committing, cur, next], nextPrepared)
        this.ack(committing, c.value)
        prepared.overlay.detach()
      }
      committing = { ...cur, done: settle(commitBatch(this.o.projection, prepared)) }
      if (!next || !nextPrepared) {
        const c = await committing.done
        if (!c.ok) return this.giveBack(c.err, undefined, [committing])
        this.ack(committing, c.value)
        return undefined
      }
      cur = next
      curPrepared = nextPrepared
    }
  }

  private mayDecideAhead(n: number, depth: number): boolean {
    return (
      depth > 0 &&
      n < MAX_RUN &&
      !this.c.stopping &&
      !this.c.pausable.paused &&
      !this.o.mutex.contended &&
      this.c.feed.queue.length > 0
    )
  }

  /**
   * After a failure in the pipeline. `committing` is a commit still in flight (acknowledged if it
   * succeeds), `stages` the other unacknowledged batches in log order; `pending` is awaited first.
   * Returns the first batch that failed; the others go back to the front of the queue.
   */
  private async giveBack(
    err: unknown,
    committing: Committing | undefined,
    stages: (Stage | undefined)[],
    pending?: Promise<unknown>,
  ): Promise<Failure> {
    await pending
    let failure = err
    const inFlight = stages.filter((s) => s !== undefined)
    if (committing) {
      const c = await committing.done
      if (c.ok) this.ack(committing, c.value)
      else {
        failure = c.err
        inFlight.unshift(committing)
      }
    }
    for (const s of inFlight) {
      clearInterval(s.alive)
      for (const m of s.msgs) this.recoverUpTo = Math.max(this.recoverUpTo, m.seq)
    }
    const [failed, ...rest] = inFlight
    this.c.feed.queue.unshift(...rest.flatMap((s) => s.msgs))
    return { msgs: failed!.msgs, err: failure }
  }

  private prepare(batch: JsMsg[], previous?: PreparedBatch): Promise<PreparedBatch> {
    return prepareBatch(
      this.o.projection,
      toLogMessages(batch),
      (m) => m.redelivered || m.seq <= this.recoverUpTo,
      previous?.overlay,
    )
  }

  private ack(stage: Stage, outcome: BatchOutcome): void {
    clearInterval(stage.alive)
    for (const m of stage.msgs) this.c.reply(m, outcome.poison.has(m.seq) ? 'term' : 'ack')
    this.processed += stage.msgs.length
    const t = outcome.timings
    this.o.log.debug(
      { messages: stage.msgs.length, events: outcome.events, written: outcome.written, ms: t },
      'projector: batch done',
    )
  }
}

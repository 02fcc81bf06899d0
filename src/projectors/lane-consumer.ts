import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream'
import { nanos } from '@nats-io/transport-node'
import type { Logger } from '../observability/logger.ts'
import type { ProjectorControl } from './control.ts'
import {
  type BatchOutcome,
  commitBatch,
  finishBatch,
  type LogMessage,
  type PreparedBatch,
  prepareBatch,
  type ProjectionContext,
  writeRows,
} from './projection.ts'
import { TransientError } from './errors.ts'
import type { Mutex } from './mutex.ts'

/** Thrown by a fault-injection hook to simulate a crash: the consumer stops dead, acknowledging nothing. */
export class SimulatedCrash extends Error {
  constructor() {
    super('simulated crash')
    this.name = 'SimulatedCrash'
  }
}

export interface LaneConsumerOptions {
  js: JetStreamClient
  jsm: JetStreamManager
  stream: string
  durable: string
  filterSubject: string
  batchSize: number
  maxWaitMs: number
  ackWaitMs: number
  mutex: Mutex
  control?: ProjectorControl
  projection: ProjectionContext
  log: Logger
  /** called when a SimulatedCrash stopped the consumer (tests close the connection here) */
  onCrash?: () => Promise<void> | void
  /** batches decided ahead while the previous one is written; 0 = one batch at a time */
  pipelineDepth?: number
}

const MAX_BACKOFF_MS = 10_000
/** batches a lane projects in a row before it lets the other lanes of the process take a turn */
const MAX_RUN = 8

type Settled<T> = { ok: true; value: T } | { ok: false; err: unknown }
const settle = <T>(p: Promise<T>): Promise<Settled<T>> =>
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

const toLogMessages = (batch: JsMsg[]): LogMessage[] =>
  batch.map((m) => ({ seq: m.seq, subject: m.subject, data: m.data, redelivered: m.redelivered }))

/**
 * One durable pull consumer over one lane, processing batches strictly in log order. A batch is
 * retried in-process on I/O errors (never nacked: a nack would let later messages overtake it).
 */
export class LaneConsumer {
  private messages?: ConsumerMessages
  private readonly queue: JsMsg[] = []
  private wake?: () => void
  private stopping = false
  private loop?: Promise<void>
  /** messages up to this stream sequence may already be in ClickHouse (delivered before a crash) */
  private recoverUpTo = 0
  private offControl?: () => void
  processed = 0
  /** batches decided while the one before them was being written (the pipeline at work) */
  decidedAhead = 0

  constructor(private readonly o: LaneConsumerOptions) {}

  async start(): Promise<void> {
    await this.ensureConsumer()
    const consumer = await this.o.js.consumers.get(this.o.stream, this.o.durable)
    this.messages = await consumer.consume({ max_messages: Math.max(this.o.batchSize * 2, 16) })
    void (async () => {
      for await (const m of this.messages!) {
        if (this.stopping) {
          m.nak()
          continue
        }
        this.queue.push(m)
        this.wake?.()
      }
    })().catch((err) => this.o.log.error({ err }, 'projector: message feed failed'))
    this.offControl = this.o.control?.onChange(() => this.wake?.())
    this.loop = this.run()
  }

  /** Finishes the in-flight batch, then stops consuming; what was fetched but not started is nacked. */
  async stop(): Promise<void> {
    this.stopping = true
    this.wake?.()
    await this.loop
    this.offControl?.()
    await this.messages?.close().catch(() => undefined)
    for (const m of this.queue.splice(0)) m.nak()
  }

  // A consumer whose previous owner died holds delivered-but-unacked messages that JetStream would
  // only redeliver after ack_wait, behind newer ones: order would break. Recreating it at the ack
  // floor delivers them again first; the projection reconciles them against ClickHouse. A consumer
  // has one owner process at a time (docs/projectors.md); a live owner is left alone.
  private async ensureConsumer(): Promise<void> {
    const { jsm, stream, durable, filterSubject, ackWaitMs, batchSize } = this.o
    const config = {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      filter_subject: filterSubject,
      ack_wait: nanos(ackWaitMs),
      max_ack_pending: Math.max(batchSize * 4, 1000),
    }
    const info = await jsm.consumers.info(stream, durable).catch(() => undefined)
    if (!info) {
      await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.All })
      return
    }
    // No waiting pull request means no live owner (the server drops those of closed connections).
    const orphaned = info.num_ack_pending > 0 && info.num_waiting === 0
    if (orphaned || info.config.filter_subject !== filterSubject) {
      this.recoverUpTo = info.delivered.stream_seq
      await jsm.consumers.delete(stream, durable)
      await jsm.consumers.add(stream, {
        ...config,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: info.ack_floor.stream_seq + 1,
      })
      this.o.log.info(
        { durable, from: info.ack_floor.stream_seq + 1, recoverUpTo: this.recoverUpTo },
        'projector: resuming after unacknowledged messages',
      )
    } else if (info.config.ack_wait !== config.ack_wait) {
      await jsm.consumers.update(stream, durable, { ack_wait: config.ack_wait })
    }
  }

  private async nextBatch(): Promise<JsMsg[]> {
    const paused = () => (this.o.control?.token ?? null) !== null
    while (this.queue.length === 0 && !this.stopping && !paused()) {
      await new Promise<void>((r) => {
        this.wake = r
      })
    }
    const deadline = Date.now() + this.o.maxWaitMs
    while (this.queue.length < this.o.batchSize && !this.stopping && !paused()) {
      const left = deadline - Date.now()
      if (left <= 0) break
      await new Promise<void>((r) => {
        const t = setTimeout(r, left)
        this.wake = () => {
          clearTimeout(t)
          r()
        }
      })
    }
    return this.queue.splice(0, this.o.batchSize)
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      await this.o.control?.gate(this.o.durable, () => this.stopping)
      const batch = await this.nextBatch()
      if (batch.length === 0) continue
      if (this.paused()) {
        // paused while the batch was being gathered: it goes first after the resume
        this.queue.unshift(...batch)
        continue
      }
      const done = await this.o.mutex.run(() => this.processRun(batch))
      if (!done) return
    }
  }

  private paused(): boolean {
    return (this.o.control?.token ?? null) !== null
  }

  /**
   * Projects `first` and then, while messages are waiting, the batches after it, in a pipeline: while
   * batch N's rows are written, batch N+1 is decided (decode, plugins, identity reads, rules, row
   * encoding) and batch N-1's identity state is committed. Commits and acknowledgements stay in log
   * order; N+1 reads N's identity changes through N's overlay until N's commit is done. A failure
   * gives back every batch in flight: the failed one is retried alone, the others are reconciled
   * when their turn comes (their rows may have been written). False when the consumer must stop.
   */
  private async processRun(first: JsMsg[]): Promise<boolean> {
    if ((this.o.pipelineDepth ?? 1) <= 0) return this.process(first)
    let cur: Stage = { msgs: first, alive: this.keepAlive(first) }
    let curPrepared = settle(this.prepare(first))
    let committing: Committing | undefined
    for (let n = 1; ; n++) {
      const p = await curPrepared
      if (!p.ok) return this.recover(p.err, committing, [cur])
      const prepared = p.value
      let next: Stage | undefined
      let nextPrepared: Promise<Settled<PreparedBatch>> | undefined
      if (n < MAX_RUN && !this.stopping && !this.paused() && this.queue.length > 0) {
        const msgs = this.queue.splice(0, this.o.batchSize)
        next = { msgs, alive: this.keepAlive(msgs) }
        this.decidedAhead++
        nextPrepared = settle(this.prepare(msgs, prepared))
      }
      const written = await settle(writeRows(this.o.projection, prepared))
      if (!written.ok) return this.recover(written.err, committing, [cur, next], nextPrepared)
      if (committing) {
        const c = await committing.done
        if (!c.ok) return this.recover(c.err, undefined, [committing, cur, next], nextPrepared)
        this.ack(committing, c.value)
        prepared.overlay.detach()
      }
      committing = { ...cur, done: settle(commitBatch(this.o.projection, prepared)) }
      if (!next || !nextPrepared) {
        const c = await committing.done
        if (!c.ok) return this.recover(c.err, undefined, [committing])
        this.ack(committing, c.value)
        return true
      }
      cur = next
      curPrepared = nextPrepared
    }
  }

  /**
   * After a failure in the pipeline. `committing` is a commit still in flight (acknowledged if it
   * succeeds), `stages` the other unacknowledged batches in log order; `pending` is awaited first.
   */
  private async recover(
    err: unknown,
    committing: Committing | undefined,
    stages: (Stage | undefined)[],
    pending?: Promise<unknown>,
  ): Promise<boolean> {
    if (err instanceof SimulatedCrash) {
      for (const s of [committing, ...stages]) if (s) clearInterval(s.alive)
      this.stopping = true
      await this.o.onCrash?.()
      return false
    }
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
    this.queue.unshift(...rest.flatMap((s) => s.msgs))
    return this.process(failed!.msgs, failure)
  }

  private prepare(batch: JsMsg[], previous?: PreparedBatch): Promise<PreparedBatch> {
    return prepareBatch(
      this.o.projection,
      toLogMessages(batch),
      (m) => m.redelivered || m.seq <= this.recoverUpTo,
      previous?.overlay,
    )
  }

  private keepAlive(batch: JsMsg[]): NodeJS.Timeout {
    return setInterval(
      () => {
        for (const m of batch) m.working()
      },
      Math.max(this.o.ackWaitMs / 3, 100),
    )
  }

  private ack(stage: Stage | JsMsg[], outcome: BatchOutcome): void {
    const batch = Array.isArray(stage) ? stage : stage.msgs
    if (!Array.isArray(stage)) clearInterval(stage.alive)
    for (const m of batch) {
      if (outcome.poison.has(m.seq)) m.term()
      else m.ack()
    }
    this.processed += batch.length
    const t = outcome.timings
    this.o.log.debug(
      { messages: batch.length, events: outcome.events, written: outcome.written, ms: t },
      'projector: batch done',
    )
  }

  /**
   * One batch on its own, retried in-process until it succeeds. After a failure its rows may be
   * partly written, so every retry reconciles. False when the consumer must stop (crash simulated,
   * or stopping during retries).
   */
  private async process(batch: JsMsg[], failure?: unknown): Promise<boolean> {
    const msgs = toLogMessages(batch)
    let forceReconcile = failure !== undefined
    for (let attempt = failure === undefined ? 0 : 1; ; attempt++) {
      if (attempt > 0) {
        const err = failure
        if (!(err instanceof TransientError)) this.o.log.error({ err }, 'projector: unexpected batch failure')
        if (this.stopping) {
          for (const m of batch) m.nak()
          return false
        }
        forceReconcile = true
        const wait = Math.min(MAX_BACKOFF_MS, 200 * 2 ** Math.min(attempt - 1, 6))
        this.o.log.warn({ err, attempt, wait, durable: this.o.durable }, 'projector: batch failed, retrying')
        await new Promise((r) => setTimeout(r, wait))
      }
      const keepAlive = this.keepAlive(batch)
      try {
        const prepared = await prepareBatch(
          this.o.projection,
          msgs,
          (m) => forceReconcile || m.redelivered || m.seq <= this.recoverUpTo,
        )
        this.ack(batch, await finishBatch(this.o.projection, prepared))
        return true
      } catch (err) {
        if (err instanceof SimulatedCrash) {
          this.stopping = true
          await this.o.onCrash?.()
          return false
        }
        failure = err
      } finally {
        clearInterval(keepAlive)
      }
    }
  }
}

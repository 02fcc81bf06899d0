import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream'
import { nanos } from '@nats-io/transport-node'
import type { Logger } from '../logger.ts'
import type { ProjectorControl } from './control.ts'
import { type LogMessage, type ProjectionContext, projectBatch } from './projection.ts'
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
}

const MAX_BACKOFF_MS = 10_000

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
      if (this.o.control?.token) {
        // paused while the batch was being gathered: it goes first after the resume
        this.queue.unshift(...batch)
        continue
      }
      const done = await this.process(batch)
      if (!done) return
    }
  }

  /** False when the consumer must stop (crash simulated, or stopping during retries). */
  private async process(batch: JsMsg[]): Promise<boolean> {
    const msgs: LogMessage[] = batch.map((m) => ({
      seq: m.seq,
      subject: m.subject,
      data: m.data,
      redelivered: m.redelivered,
    }))
    let forceReconcile = false
    for (let attempt = 0; ; attempt++) {
      const keepAlive = setInterval(
        () => {
          for (const m of batch) m.working()
        },
        Math.max(this.o.ackWaitMs / 3, 100),
      )
      try {
        const outcome = await this.o.mutex.run(() =>
          projectBatch(
            this.o.projection,
            msgs,
            (m) => forceReconcile || m.redelivered || m.seq <= this.recoverUpTo,
          ),
        )
        for (const m of batch) {
          if (outcome.poison.has(m.seq)) m.term()
          else m.ack()
        }
        this.processed += batch.length
        return true
      } catch (err) {
        if (err instanceof SimulatedCrash) {
          this.stopping = true
          await this.o.onCrash?.()
          return false
        }
        if (!(err instanceof TransientError)) this.o.log.error({ err }, 'projector: unexpected batch failure')
        if (this.stopping) {
          for (const m of batch) m.nak()
          return false
        }
        forceReconcile = true
        const wait = Math.min(MAX_BACKOFF_MS, 200 * 2 ** Math.min(attempt, 6))
        this.o.log.warn({ err, attempt, wait, durable: this.o.durable }, 'projector: batch failed, retrying')
        await new Promise((r) => setTimeout(r, wait))
      } finally {
        clearInterval(keepAlive)
      }
    }
  }
}

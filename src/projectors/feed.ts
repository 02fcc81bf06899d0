import type { ConsumerMessages, JetStreamClient, JsMsg } from '@nats-io/jetstream'
import type { Logger } from '../observability/logger.ts'
import { batchCut } from './batch-cut.ts'

/** How a feed answers a message it gives back. */
export type Reply = (m: JsMsg, how: 'nak') => void

/** What a feed needs: the batch limits, and how to give a message back. */
export interface FeedOptions {
  batchSize: number
  /** a batch is also cut at this many bytes of message data (default BATCH_BYTES, batch-cut.ts) */
  batchBytes?: number
  /** a batch is gathered for at most this long after its first message */
  maxWaitMs: number
  log: Logger
  reply: Reply
  /** true: messages arriving now are given back at once (the owner is stopping) */
  refusing: () => boolean
}

/**
 * A durable consumer's delivered messages, waiting in order to be taken in batches. Batching is done
 * in-process because `fetch()` cannot wait less than one second; the client keeps pulling, so what it
 * holds is bounded by the consumer's max_ack_pending (batch-cut.ts).
 */
export class MessageFeed {
  readonly queue: JsMsg[] = []
  private wake?: () => void
  private messages?: ConsumerMessages

  constructor(private readonly o: FeedOptions) {}

  /** Starts receiving the durable consumer's messages. */
  async open(js: JetStreamClient, stream: string, durable: string): Promise<void> {
    const consumer = await js.consumers.get(stream, durable)
    this.messages = await consumer.consume({ max_messages: Math.max(this.o.batchSize * 2, 16) })
    void (async () => {
      for await (const m of this.messages!) {
        if (this.o.refusing()) {
          this.o.reply(m, 'nak')
          continue
        }
        this.queue.push(m)
        this.wake?.()
      }
    })().catch((err) => this.o.log.error({ err }, 'projector: message feed failed'))
  }

  /** Wakes a waiting `next` (to look at its `halt` again). */
  poke(): void {
    this.wake?.()
  }

  /**
   * The next batch: waits for a first message, then gathers until the batch is full or maxWaitMs
   * passed. Returns early (possibly empty) once `halt` says so.
   */
  async next(halt: () => boolean): Promise<JsMsg[]> {
    while (this.queue.length === 0 && !halt()) {
      await new Promise<void>((r) => {
        this.wake = r
      })
    }
    const deadline = Date.now() + this.o.maxWaitMs
    while (!batchCut(this.queue, this.o.batchSize, this.o.batchBytes).full && !halt()) {
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
    return this.take()
  }

  /** A batch of what is waiting now, without waiting. */
  take(): JsMsg[] {
    return this.queue.splice(0, batchCut(this.queue, this.o.batchSize, this.o.batchBytes).n)
  }

  /** Stops receiving; what was received but not taken is given back. */
  async close(): Promise<void> {
    await this.messages?.close().catch(() => undefined)
    for (const m of this.queue.splice(0)) this.o.reply(m, 'nak')
  }
}

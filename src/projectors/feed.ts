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
  /**
   * Bounds the feed by bytes (absent: by the consumer's max_ack_pending alone). The owner then
   * calls `settled` for every message it acknowledges, terminates or gives back.
   */
  bytes?: {
    /** the feed stops taking delivered messages in while it holds this many bytes unsettled */
    hold: number
    /** the max_bytes of the consumer's pulls (pullBytes, batch-cut.ts) */
    pull: number
  }
}

/**
 * Keeps `msgs` from being redelivered while they are worked on: a `working` reply for each every
 * third of the ack wait (at least every 100 ms). Clear the returned timer once they are answered.
 */
export function keepWorking(
  msgs: readonly JsMsg[],
  ackWaitMs: number,
  reply: (m: JsMsg, how: 'working') => void,
): NodeJS.Timeout {
  return setInterval(
    () => {
      for (const m of msgs) reply(m, 'working')
    },
    Math.max(ackWaitMs / 3, 100),
  )
}

// Pulls bounded by bytes can all end together, and then only two missed idle heartbeats make the
// client ask again (batch-cut.ts pullBytes). At its default heartbeat (15 s, half the 30-second
// expiry) the projector sat idle for 35-41 s with the log full in 2 runs of 20 of bench/ingest.ts
// with `BENCH_EVENTS=web` (messages near max_payload); a heartbeat every second makes it ~2 s.
const PULL_HEARTBEAT_MS = 1000
const PULL_EXPIRES_MS = 5000

/**
 * A durable consumer's delivered messages, waiting in order to be taken in batches. Batching is done
 * in-process because `fetch()` cannot wait less than one second. The client pulls again as messages
 * arrive, not as they are processed, so without a byte bound what the process holds is bounded only
 * by the consumer's max_ack_pending (batch-cut.ts). With one (`bytes`), the client's pulls ask for
 * at most `pull` bytes, and the feed stops reading the client's messages while it holds `hold` bytes
 * delivered and not yet settled: the client sends its next pull only when the feed reads on, so the
 * process holds at most `hold` + one message + `pull` bytes (the last in the client's buffer).
 */
export class MessageFeed {
  readonly queue: JsMsg[] = []
  private wake?: () => void
  private messages?: ConsumerMessages
  /** messages delivered and not yet settled, when bounded by bytes */
  private readonly held = new Set<JsMsg>()
  /** bytes of their data */
  private heldBytes = 0
  private room?: () => void
  private closing = false

  constructor(private readonly o: FeedOptions) {}

  /** Starts receiving the durable consumer's messages. */
  async open(js: JetStreamClient, stream: string, durable: string): Promise<void> {
    const consumer = await js.consumers.get(stream, durable)
    const bytes = this.o.bytes
    this.messages = await consumer.consume(
      bytes
        ? { max_bytes: bytes.pull, expires: PULL_EXPIRES_MS, idle_heartbeat: PULL_HEARTBEAT_MS }
        : { max_messages: Math.max(this.o.batchSize * 2, 16) },
    )
    const messages = this.messages
    void (async () => {
      for await (const m of messages) {
        if (this.o.refusing()) {
          this.o.reply(m, 'nak')
          continue
        }
        this.queue.push(m)
        this.wake?.()
        if (!bytes) continue
        this.held.add(m)
        this.heldBytes += m.data.length
        // Not reading on is what stops the pulls: the client sends its next pull request from
        // this loop's next read.
        while (this.heldBytes >= bytes.hold && !this.o.refusing() && !this.closing) {
          await new Promise<void>((r) => {
            this.room = r
          })
        }
      }
    })().catch((err) => this.o.log.error({ err }, 'projector: message feed failed'))
  }

  /**
   * The owner is done with `m` (acknowledged, terminated or given back): its bytes no longer count
   * against the feed's bound. Settling a message twice, or one the feed did not count, does nothing.
   */
  settled(m: JsMsg): void {
    if (!this.held.delete(m)) return
    this.heldBytes -= m.data.length
    if (this.heldBytes < (this.o.bytes?.hold ?? 0)) this.room?.()
  }

  /** Wakes a waiting `next` (to look at its `halt` again). */
  poke(): void {
    this.wake?.()
    this.room?.()
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
    this.closing = true
    const closing = this.messages?.close().catch(() => undefined)
    this.room?.()
    await closing
    for (const m of this.queue.splice(0)) this.o.reply(m, 'nak')
  }
}

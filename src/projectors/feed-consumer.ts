import type { JetStreamClient, JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { type BackoffPolicy, retry, type RetryOptions } from '../retry/backoff.ts'
import { PausableFeed, type ProjectorControl } from './control.ts'
import { FencedError } from './errors.ts'
import { keepWorking, MessageFeed } from './feed.ts'

// The lane consumer and the row writer differ in what they do with a batch, not in how they take
// batches from their durable consumer, stop, retry a batch and answer its messages: that part is
// here, once.

/** How a projector consumer answers one of its messages. */
export type Answer = 'ack' | 'nak' | 'term' | 'working'

/** What a feed consumer needs. */
export interface FeedConsumerOptions {
  nc: NatsConnection
  js: JetStreamClient
  stream: string
  durable: string
  batchSize: number
  batchBytes?: number
  maxWaitMs: number
  ackWaitMs: number
  control?: ProjectorControl
  log: Logger
  /** bounds the feed by bytes (FeedOptions.bytes, feed.ts) */
  bytes?: { hold: number; pull: number }
  /** messages delivered while stopping are given back at once instead of queued */
  refuseWhileStopping?: boolean
  /** its log lines: `${prefix}: lease lost, ${stops}`; `stopping` is the reason a stop aborts with */
  words: { prefix: string; stops: string; stopping: string }
}

/**
 * A durable consumer's batches as a projector stage takes them: in turn, waiting out replays'
 * pauses, until it stops. Its answers go nowhere once it is fenced out (a lease lost) or its
 * connection is closed.
 */
export class FeedConsumer {
  readonly feed: MessageFeed
  readonly pausable: PausableFeed
  /** no batch is taken after this: stop was called, or a batch could not be finished */
  stopping = false
  private readonly stopped = new AbortController()
  private loop?: Promise<void>
  /** the lease is lost: another process owns the consumer now, this one answers nothing */
  private fenced = false

  constructor(private readonly o: FeedConsumerOptions) {
    this.feed = new MessageFeed({
      ...o,
      reply: (m, how) => this.reply(m, how),
      refusing: () => o.refuseWhileStopping === true && this.stopping,
    })
    this.pausable = new PausableFeed(this.feed, o.control, o.durable, () => this.stopping)
  }

  /** Starts receiving; each batch goes to `each`, which answers false when no more may be taken. */
  async start(each: (batch: JsMsg[]) => Promise<boolean>): Promise<void> {
    await this.feed.open(this.o.js, this.o.stream, this.o.durable)
    this.loop = (async () => {
      while (!this.stopping) {
        const batch = await this.pausable.next()
        if (batch.length > 0 && !(await each(batch))) return
      }
    })()
  }

  /** Finishes the batch in flight, then stops; what was fetched but not started is nacked. */
  async stop(): Promise<void> {
    this.stopping = true
    this.stopped.abort(new Error(this.o.words.stopping))
    this.feed.poke()
    await this.loop
    this.pausable.close()
    await this.feed.close()
  }

  /**
   * Tries `attempt` until it succeeds, waiting by `policy` between tries, for as long as the
   * consumer may go on. False when it may not (stopping, fenced out, connection closed): the
   * consumer then stops, and `unanswered()`, the messages in hand, are given back if anyone can
   * hear it (a fenced-out consumer's naks would reach the consumer its new owner recreated;
   * JetStream redelivers after ack_wait instead).
   */
  async retry(
    attempt: (n: number) => Promise<void>,
    policy: BackoffPolicy,
    onRetry: RetryOptions['onRetry'],
    unanswered: () => readonly JsMsg[],
  ): Promise<boolean> {
    try {
      await retry(attempt, {
        ...policy,
        maxAttempts: Number.POSITIVE_INFINITY,
        retryable: (err) => !(err instanceof FencedError) && !this.stopping && !this.o.nc.isClosed(),
        signal: this.stopped.signal,
        onRetry,
      })
      return true
    } catch (err) {
      const { prefix, stops } = this.o.words
      // A closed connection: the process is as good as gone, and nothing can be answered.
      if (this.o.nc.isClosed()) this.o.log.error({ err }, `${prefix}: connection closed, ${stops}`)
      else if (err instanceof FencedError) {
        this.fenced = true
        this.o.log.warn({ err, durable: this.o.durable }, `${prefix}: lease lost, ${stops}`)
      } else for (const m of unanswered()) this.reply(m, 'nak')
      this.stopping = true
      return false
    }
  }

  /** Keeps `msgs` from being redelivered while they are worked on; clear the timer once answered. */
  keepAlive(msgs: readonly JsMsg[]): NodeJS.Timeout {
    return keepWorking(msgs, this.o.ackWaitMs, (m, how) => this.reply(m, how))
  }

  // A reply on a closed connection throws; there is nobody to tell then.
  reply(m: JsMsg, how: Answer): void {
    if (how !== 'working') this.feed.settled(m)
    if (this.fenced || this.o.nc.isClosed()) return
    try {
      m[how]()
    } catch (err) {
      this.o.log.warn({ err, seq: m.seq }, `${this.o.words.prefix}: ${how} failed`)
    }
  }
}

import { setImmediate as nextTurn } from 'node:timers/promises'
import type { JetStreamClient, JsMsg } from '@nats-io/jetstream'
import type { Logger } from '../observability/logger.ts'
import type { BatchOutcome, LogMessage, PreparedBatch, ProjectionContext } from './batch.ts'
import { pullBytes } from './batch-cut.ts'
import { MessageFeed } from './feed.ts'
import { type Settled, settle } from './lane-consumer.ts'
import { prepareBatch } from './prepare.ts'
import { commitBatch, writeRows } from './projection.ts'

// One pass of a replay over a range of the log, in a pipeline: while batch N's rows are written,
// batch N+1 is decided, and batch N-1's identity state is committed; the messages after them are
// already being received. The replay's process runs prepareBatch on its one thread, and ClickHouse
// works on the INSERT on the other core meanwhile (a strictly serial loop left each idle while the
// other worked: docs/performance.md, "Ingestion on ClickHouse 26.7").
//
// Exactly once holds as in a live lane (lane-consumer.ts): commits stay in log order, each after
// its batch's rows; N+1 reads N's identity changes through N's overlay until N's commit is done. A
// crash leaves the replay's watermark at the last batch committed, with the rows of up to two
// batches after it perhaps written: the resumed pass reconciles every message up to max(_seq).

/** How long the feed may stay empty before the pass asks the server whether anything is left. */
const IDLE_MS = 1000
/** How long messages the server still counts may fail to arrive before the pass gives up (and can resume). */
const STALLED_MS = 60_000

/** What a pass needs besides the projection context. */
export interface PassOptions {
  js: JetStreamClient
  stream: string
  /** the pass's own consumer (no acks) on `stream`, positioned at the pass's start */
  consumer: string
  /** the last stream sequence of the range */
  end: number
  /** whether a message lies after the range by its time (`--to` a time) */
  pastTo: (m: JsMsg) => boolean
  /** messages a batch holds at most */
  batchSize: number
  /** bytes of message data a batch holds at most */
  batchBytes: number
  /** the server's max_payload (the pulls' byte bound, pullBytes) */
  maxPayload: number
  /** messages up to this sequence may have been written by a replay that crashed: reconciled */
  mayBeWritten: number
  log: Logger
  /** called after each batch's identity state is committed, in log order */
  committed: (out: BatchOutcome, lastSeq: number) => void
  /** messages left to deliver to the consumer, as the server counts them */
  pending: () => Promise<number>
}

interface InFlight<T> {
  p: PreparedBatch
  done: Promise<Settled<T>>
}

const toLogMessages = (batch: JsMsg[]): LogMessage[] =>
  batch.map((m) => ({ seq: m.seq, subject: m.subject, data: m.data, redelivered: false }))

/** Projects the pass's range; resolves once every batch of it is committed. */
export async function projectPass(ctx: ProjectionContext, o: PassOptions): Promise<void> {
  const { batchBytes } = o
  const feed = new MessageFeed({
    batchSize: o.batchSize,
    batchBytes,
    // a batch is taken as it is when the feed has less (the end of the range, or a slow server)
    maxWaitMs: 50,
    log: o.log,
    // the consumer acknowledges nothing
    reply: () => undefined,
    refusing: () => false,
    // a batch's messages are settled once it is decided: the feed holds the next batch gathering
    // and the one being decided
    bytes: { hold: 2 * batchBytes, pull: pullBytes(o.maxPayload) },
  })
  await feed.open(o.js, o.stream, o.consumer)
  const reconcile = (m: LogMessage) => m.seq <= o.mayBeWritten
  let writing: InFlight<void> | undefined
  let committing: InFlight<BatchOutcome> | undefined
  const finishCommit = async () => {
    if (!committing) return
    const c = await committing.done
    if (!c.ok) throw c.err
    o.committed(c.value, committing.p.last.seq)
    // the store now holds what the committed batch's overlay held
    writing?.p.overlay.detach()
    committing = undefined
  }
  // rows written, then (after the previous commit) the commit started
  const finishWrite = async () => {
    if (!writing) return
    const w = await writing.done
    if (!w.ok) throw w.err
    await finishCommit()
    committing = { p: writing.p, done: settle(commitBatch(ctx, writing.p)) }
    writing = undefined
  }
  const batches = rangeBatches(feed, o)
  try {
    for (;;) {
      const msgs = await batches.next()
      if (!msgs) break
      const parent = writing?.p.overlay ?? committing?.p.overlay
      const prepared = await prepareBatch(ctx, toLogMessages(msgs), reconcile, parent)
      // decoded: their bytes no longer count against the feed's bound
      for (const m of msgs) feed.settled(m)
      await finishWrite()
      writing = { p: prepared, done: settle(writeRows(ctx, prepared)) }
      // The INSERT's request goes out before the next batch is decided (the decision gives the
      // event loop its first turn after 1,000 events).
      await nextTurn()
    }
    await finishWrite()
    await finishCommit()
  } finally {
    // after a failure: nothing is left running when the caller deletes the consumer
    await writing?.done
    await committing?.done
    await feed.close()
  }
}

/**
 * The range's messages in batches: up to `end` (and not past `to`), or until the consumer has no
 * more messages.
 */
function rangeBatches(feed: MessageFeed, o: PassOptions): { next(): Promise<JsMsg[] | undefined> } {
  let ended = false
  const inRange = (m: JsMsg) => m.seq <= o.end && !o.pastTo(m)
  let since = Date.now()
  return {
    async next() {
      while (!ended) {
        let idle = false
        const timer = setTimeout(() => {
          idle = true
          feed.poke()
        }, IDLE_MS)
        const got = await feed.next(() => idle).finally(() => clearTimeout(timer))
        if (got.length === 0) {
          // nothing came for a while: the range is done only if the server has nothing left
          if (feed.queue.length === 0 && (await o.pending()) === 0) ended = true
          else if (Date.now() - since > STALLED_MS) throw new Error('replay: the log stopped arriving')
          continue
        }
        since = Date.now()
        const last = got.findIndex((m) => !inRange(m) || m.seq >= o.end || m.info.pending === 0)
        if (last < 0) return got
        ended = true
        const batch = got.slice(0, last + 1).filter(inRange)
        if (batch.length > 0) return batch
      }
      return undefined
    },
  }
}

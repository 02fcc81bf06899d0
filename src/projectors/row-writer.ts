import type { JetStreamClient, JetStreamManager, JsMsg } from '@nats-io/jetstream'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { CapturedEvent } from '../jetstream/messages.ts'
import type { Logger } from '../observability/logger.ts'
import type { BackoffPolicy } from '../retry/backoff.ts'
import { FeedConsumer } from './feed-consumer.ts'
import type { ProjectorControl } from './control.ts'
import { DeadLetterList, publishDeadLetter } from './dead-letters.ts'
import { ensureDurable } from './durable.ts'
import { type Fence, io } from './errors.ts'
import { parseResolved, RECONCILE_HEADER, rebuildRows, type ResolvedEvent } from './resolved.ts'
import { eventLine } from './rows.ts'
import { findWrittenRows, positionKey } from './steps/skip-written.ts'
import type { BatchWriter, EventRow } from './batch.ts'

// Team spread (docs/scaling.md): a row writer owns one partition of the resolved stream
// (resolved.ts) and inserts its events' rows, in parallel with the other partitions' writers. Rows
// are independent of each other once the identity stage stamped them, so order does not matter here;
// exactly once does: a message that may have been written before (redelivered, taken over from a dead
// owner, retried, or marked by the identity stage) is reconciled against ClickHouse by the rows'
// (_seq, _offset), the source log's positions, as the lane consumer does.

/** What a row writer needs. */
export interface RowWriterOptions {
  nc: NatsConnection
  js: JetStreamClient
  jsm: JetStreamManager
  ch: ClickHouseClient
  /** the stream holding the resolved subjects */
  stream: string
  /** the log the identity stages read (decisions-only messages name their source message in it) */
  sourceStream: string
  durable: string
  filterSubject: string
  /** the events table (reconciliation reads it) */
  table: string
  /** where the rows go (ClickHouse; tests wrap it to inject faults) */
  writer: BatchWriter
  batchSize: number
  batchBytes?: number
  maxWaitMs: number
  ackWaitMs: number
  dlqSubject?: string
  control?: ProjectorControl
  retry: BackoffPolicy
  takeOver?: boolean
  /**
   * The resolved stream's last sequence at the last replay's swap (control.ts): messages up to it
   * are reconciled, their rows may be in the swapped-in tables
   */
  replayedUpTo?: () => Promise<number>
  /** leases: called before each insert (a fenced-out writer stops without acknowledging) */
  fence?: Fence
  log: Logger
}

/** A resolved event as its dead letter shows it, should ClickHouse refuse its row: as projected. */
const asCaptured = (e: ResolvedEvent): CapturedEvent => ({
  uuid: e.uuid,
  event: e.event,
  distinct_id: e.distinctId,
  properties: e.properties,
  timestamp: new Date(e.timestampMs).toISOString(),
  now: new Date(e.createdAtMs).toISOString(),
  sent_at: null,
  ip: null,
  team_id: e.teamId,
})

export class RowWriter {
  private readonly c: FeedConsumer
  private recoverUpTo = 0
  /** a replay swapped the tables: what the stream holds now is reconciled (see afterReplay) */
  private replayed = false
  /** event rows inserted so far */
  written = 0

  constructor(private readonly o: RowWriterOptions) {
    this.c = new FeedConsumer({
      ...o,
      words: { prefix: 'row writer', stops: 'stops', stopping: 'row writer stopping' },
    })
  }

  /**
   * A replay may have swapped the tables in while this writer was paused (control.ts). The resolved
   * messages published before its swap are of events at or below the replay's end, whose rows the
   * new tables hold (the replay rebuilt them; the projects it left alone have theirs copied, and
   * find theirs missing), and the writer may hold some already: each of them is reconciled by
   * (_seq, _offset) instead of inserted blindly. A writer starting after a replay does the same.
   */
  afterReplay(): void {
    this.replayed = true
  }

  /** Creates or recovers the durable consumer and starts writing. */
  async start(): Promise<void> {
    this.recoverUpTo = Math.max(await ensureDurable(this.o), (await this.o.replayedUpTo?.()) ?? 0)
    await this.c.start((batch) => this.take(batch))
  }

  /** Finishes the batch in flight, then stops; what was fetched but not started is nacked. */
  stop(): Promise<void> {
    return this.c.stop()
  }

  /** Writes one batch, retrying; false when the writer must stop (see FeedConsumer.retry). */
  private async take(batch: JsMsg[]): Promise<boolean> {
    const alive = this.c.keepAlive(batch)
    try {
      return await this.c.retry(
        (attempt) => this.write(batch, attempt > 1),
        this.o.retry,
        ({ attempt, waitMs, err }) =>
          this.o.log.warn({ err, attempt, wait: waitMs, durable: this.o.durable }, 'row writer: retrying'),
        () => batch,
      )
    } finally {
      clearInterval(alive)
    }
  }

  /** Inserts the batch's rows that ClickHouse does not hold yet, dead-letters refused ones, acks. */
  private async write(batch: JsMsg[], retried: boolean): Promise<void> {
    if (this.replayed && this.o.replayedUpTo) {
      const upTo = await io(this.o.replayedUpTo)
      this.recoverUpTo = Math.max(this.recoverUpTo, upTo)
      this.replayed = false
    }
    const dead = new DeadLetterList()
    const poison = new Set<JsMsg>()
    const pieces: { events: ResolvedEvent[]; suspect: boolean }[] = []
    const sources = new Map<number, { seq: number; subject: string; data: Uint8Array }>()
    for (const m of batch) {
      const parsed = parseResolved(m.data)
      let events: ResolvedEvent[] | string =
        parsed?.kind === 'rows' ? parsed.events : 'not a resolved message'
      if (parsed?.kind === 'decisions') {
        // the source message, read once per batch (a chunk's pieces tend to come together)
        let source = sources.get(parsed.seq)
        if (!source) {
          const stored = await io(() =>
            this.o.jsm.streams.getMessage(this.o.sourceStream, { seq: parsed.seq }),
          )
          if (stored) source = { seq: parsed.seq, subject: stored.subject, data: stored.data }
          if (source) sources.set(parsed.seq, source)
        }
        events = source
          ? rebuildRows(parsed.events, source)
          : `source message ${parsed.seq} is not in the log`
      }
      if (typeof events === 'string') {
        poison.add(m)
        dead.message({ subject: m.subject, seq: m.seq, data: m.data }, events)
        continue
      }
      const suspect =
        retried || m.redelivered || m.seq <= this.recoverUpTo || m.headers?.get(RECONCILE_HEADER) === '1'
      pieces.push({ events, suspect })
    }
    // a piece's events all come from one source message: one team, one sequence
    const suspects = pieces
      .filter((p) => p.suspect)
      .map((p) => ({ msg: { seq: p.events[0]!.seq }, teamId: p.events[0]!.teamId, events: p.events }))
    const written = await io(() => findWrittenRows(this.o.ch, this.o.table, suspects))
    const events: EventRow[] = []
    for (const p of pieces) {
      for (const e of p.events) {
        if (written.has(positionKey(e.seq, e.offset))) continue
        const { subject, seq, offset, timestampMs } = e
        // made only for a refused row's dead letter
        events.push({
          line: eventLine(e),
          timestampMs,
          subject,
          seq,
          offset,
          get event() {
            return asCaptured(e)
          },
        })
      }
    }
    await this.o.fence?.()
    const refused = await io(() => this.o.writer.write({ batch: 0, identity: [], events }))
    for (const r of refused)
      if (r.event) dead.event(r.event, r.event.offset, r.reason, r.event.event, 'refused')
    const dlq = this.o.dlqSubject
    if (dlq) for (const d of dead.items) await io(() => publishDeadLetter(this.o.js, dlq, d))
    for (const m of batch) this.c.reply(m, poison.has(m) ? 'term' : 'ack')
    this.written += events.length - refused.length
  }
}

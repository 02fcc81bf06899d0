import { type ConsumerMessages, DeliverPolicy, type JsMsg, jetstream } from '@nats-io/jetstream'
import { EVENTS_STREAM } from '../../../schema/jetstream.ts'
import type { NatsConnection } from '../../jetstream/connection.ts'
import { parseLogMessage } from '../../jetstream/messages.ts'
import type { Logger } from '../../observability/logger.ts'
import { ProjectionTracker } from './projection-tracker.ts'
import { SecondCounts } from './second-counts.ts'
import { parseEventsSubject } from './subjects.ts'
import { matchesTail, type TailFilter, TailQueue } from './tail.ts'

// Reads the event log as it grows (an ordered consumer: no durable state, nothing acknowledged,
// invisible to the projectors) and keeps, per project, events per second captured and projected,
// and feeds the live tails. Runs only while a console watches (see hub.ts).

/** Seconds of history the chart shows; the watch starts this far back in the log. */
export const WINDOW_SECONDS = 120
/** Events a tail subscriber gets per flush at most (flushes run every TAIL_FLUSH_MS). */
export const TAIL_BATCH = 100
export const TAIL_FLUSH_MS = 250

interface Subscriber {
  team: number
  filter: TailFilter
  queue: TailQueue
}

interface LogEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

/**
 * The team of one log message, how many events it holds, and those well-formed enough to show in a
 * tail; undefined for anything that is not an event chunk.
 */
export function readChunk(data: Uint8Array): { team: number; count: number; events: LogEvent[] } | undefined {
  const parsed = parseLogMessage(data)
  if ('undecodable' in parsed) return undefined
  const c = parsed.envelope as { team_id?: unknown; events?: unknown } | null
  if (typeof c?.team_id !== 'number' || !Array.isArray(c.events)) return undefined
  const events = (c.events as Partial<LogEvent>[]).filter(
    (e): e is LogEvent =>
      typeof e?.event === 'string' && typeof e.distinct_id === 'string' && typeof e.uuid === 'string',
  )
  for (const e of events) {
    if (typeof e.timestamp !== 'string') e.timestamp = ''
    if (e.properties === null || typeof e.properties !== 'object') e.properties = {}
  }
  return { team: c.team_id, count: c.events.length, events }
}

/** The project's view of the log since the watch started. */
export class LogWatch {
  readonly startedMs = Date.now()
  readonly tracker = new ProjectionTracker(this.startedMs)
  private readonly captured = new Map<number, SecondCounts>()
  private readonly projected = new Map<number, SecondCounts>()
  /** subjects (lane.partition) each team's events were seen on */
  private readonly subjects = new Map<number, Set<string>>()
  private readonly subscribers = new Set<Subscriber>()
  private messages: ConsumerMessages | undefined
  private flusher: NodeJS.Timeout | undefined
  private pruner: NodeJS.Timeout | undefined
  lastSeq = 0

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    private readonly stream = EVENTS_STREAM,
  ) {}

  async start(onFlush: () => void): Promise<void> {
    // No subject filter: the stream holds only events.> (and nats-server < 2.10, Debian's, refuses
    // the ordered consumer's filter_subjects list).
    const consumer = await jetstream(this.nc).consumers.get(this.stream, {
      deliver_policy: DeliverPolicy.StartTime,
      opt_start_time: new Date(this.startedMs - WINDOW_SECONDS * 1000).toISOString(),
    })
    this.messages = await consumer.consume({ max_messages: 1000 })
    void (async () => {
      try {
        for await (const m of this.messages!) this.onMessage(m)
      } catch (err) {
        this.log.warn({ err }, 'console: log watch stopped')
      }
    })()
    this.flusher = setInterval(onFlush, TAIL_FLUSH_MS)
    // Teams quiet for a whole window are forgotten, so memory follows the active teams only.
    this.pruner = setInterval(() => this.prune(Date.now()), WINDOW_SECONDS * 1000)
  }

  private onMessage(m: JsMsg): void {
    this.lastSeq = m.seq
    const where = parseEventsSubject(m.subject)
    const chunk = where && readChunk(m.data)
    if (!where || !chunk || chunk.count === 0) return
    const storedMs = m.info.timestampNanos / 1e6
    // Every event in the log counts, including one the projector will refuse (a dead letter).
    const n = chunk.count
    this.counter(this.captured, chunk.team).add(storedMs, n)
    let subjects = this.subjects.get(chunk.team)
    if (!subjects) this.subjects.set(chunk.team, (subjects = new Set()))
    subjects.add(m.subject)
    this.tracker.see(m.subject, { seq: m.seq, team: chunk.team, events: n, storedMs })
    for (const s of this.subscribers) {
      if (s.team !== chunk.team) continue
      for (const e of chunk.events) if (matchesTail(s.filter, e)) s.queue.push(e, where.lane)
    }
  }

  private counter(map: Map<number, SecondCounts>, team: number): SecondCounts {
    let c = map.get(team)
    if (!c) map.set(team, (c = new SecondCounts(WINDOW_SECONDS)))
    return c
  }

  /** Applies the ack floor of the consumers covering `subject`: what is at or below it is projected. */
  acknowledged(subject: string, ackFloor: number, nowMs: number): void {
    for (const p of this.tracker.advance(subject, ackFloor, nowMs)) {
      this.counter(this.projected, p.team).add(p.atMs, p.events)
    }
  }

  /** Subjects the watch has seen events on (any team). */
  seenSubjects(): string[] {
    const all = new Set<string>()
    for (const s of this.subjects.values()) for (const x of s) all.add(x)
    return [...all]
  }

  stats(team: number, nowMs: number) {
    const cap = this.captured.get(team)
    const proj = this.projected.get(team)
    const empty = new SecondCounts(WINDOW_SECONDS)
    const c = (cap ?? empty).series(nowMs)
    const p = (proj ?? empty).series(nowMs)
    const subjects = [...(this.subjects.get(team) ?? [])].sort()
    return {
      series: { start: c.start, captured: c.counts, projected: p.counts },
      totals: { captured: cap?.total ?? 0, projected: proj?.total ?? 0 },
      subjects: subjects.map((subject) => ({
        subject,
        ...parseEventsSubject(subject)!,
        unprojected_events: this.tracker.unprojected(subject, team),
      })),
    }
  }

  subscribe(team: number, filter: TailFilter): { take: () => ReturnType<TailQueue['take']>; close(): void } {
    const sub: Subscriber = { team, filter, queue: new TailQueue(TAIL_BATCH) }
    this.subscribers.add(sub)
    return { take: () => sub.queue.take(), close: () => void this.subscribers.delete(sub) }
  }

  get subscriberCount(): number {
    return this.subscribers.size
  }

  private prune(nowMs: number): void {
    for (const [team, c] of this.captured) {
      if (c.activeAt(nowMs) || this.projected.get(team)?.activeAt(nowMs)) continue
      if (this.tracker.teamPending(team)) continue
      this.captured.delete(team)
      this.projected.delete(team)
      this.subjects.delete(team)
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.flusher)
    clearInterval(this.pruner)
    await this.messages?.close()
  }
}

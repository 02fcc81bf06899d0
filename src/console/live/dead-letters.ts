import {
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream'
import { DLQ_STREAM, EVENTS_STREAM } from '../../../schema/jetstream.ts'
import type { NatsConnection } from '../../jetstream/connection.ts'
import type { Logger } from '../../observability/logger.ts'
import { DLQ_HEADERS } from '../../projectors/dead-letters.ts'

// Dead letters per project, read from the DEAD_LETTERS stream (the projectors publish there with
// the reason in a header). A dead letter names its project in its data (a whole chunk or one event
// carries `team_id`); an event too broken to carry one is attributed through the log message it came
// from. The index holds counts and the newest few per project, not the letters themselves.

export interface DeadLetterSummary {
  seq: number
  at: string
  reason: string
  subject: string
  /** stream sequence of the log message it came from */
  source_seq: number | null
  /** index of the event in that message; null when the whole message was refused */
  offset: number | null
  event: string | null
  distinct_id: string | null
}

const RECENT = 20
const dec = new TextDecoder()

function parse(data: Uint8Array): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(dec.decode(data)) as unknown
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

export class DeadLetterIndex {
  private readonly perTeam = new Map<number, { count: number; recent: DeadLetterSummary[] }>()
  /** letters no project could be found for */
  unattributed = 0
  private messages: ConsumerMessages | undefined
  private queue: Promise<void> = Promise.resolve()

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    private readonly stream = DLQ_STREAM,
    private readonly eventsStream = EVENTS_STREAM,
  ) {}

  async start(): Promise<void> {
    const consumer = await jetstream(this.nc).consumers.get(this.stream, {
      deliver_policy: DeliverPolicy.All,
    })
    this.messages = await consumer.consume({ max_messages: 256 })
    void (async () => {
      try {
        for await (const m of this.messages!) {
          // In order, one at a time: attribution may ask JetStream for the source message.
          this.queue = this.queue.then(() => this.add(m)).catch(() => undefined)
        }
      } catch (err) {
        this.log.warn({ err }, 'console: dead-letter watch stopped')
      }
    })()
  }

  private async add(m: JsMsg): Promise<void> {
    const h = m.headers
    const num = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : null)
    const body = parse(m.data)
    const sourceSeq = num(h?.get(DLQ_HEADERS.seq))
    let team = typeof body?.team_id === 'number' ? body.team_id : undefined
    if (team === undefined && sourceSeq !== null) team = await this.teamOfSource(sourceSeq)
    const summary: DeadLetterSummary = {
      seq: m.seq,
      at: new Date(m.info.timestampNanos / 1e6).toISOString(),
      reason: h?.get(DLQ_HEADERS.reason) ?? '',
      subject: h?.get(DLQ_HEADERS.subject) ?? '',
      source_seq: sourceSeq,
      offset: num(h?.get(DLQ_HEADERS.offset)),
      event: typeof body?.event === 'string' ? body.event : null,
      distinct_id: typeof body?.distinct_id === 'string' ? body.distinct_id : null,
    }
    if (team === undefined) {
      this.unattributed++
      return
    }
    let t = this.perTeam.get(team)
    if (!t) this.perTeam.set(team, (t = { count: 0, recent: [] }))
    t.count++
    t.recent.unshift(summary)
    if (t.recent.length > RECENT) t.recent.pop()
  }

  private async teamOfSource(seq: number): Promise<number | undefined> {
    try {
      const jsm = await jetstreamManager(this.nc)
      const sm = await jsm.streams.getMessage(this.eventsStream, { seq })
      const body = sm ? parse(sm.data) : undefined
      return typeof body?.team_id === 'number' ? body.team_id : undefined
    } catch {
      return undefined
    }
  }

  /** The project's dead letters: how many, and the newest first. */
  of(team: number): { count: number; recent: DeadLetterSummary[] } {
    const t = this.perTeam.get(team)
    return { count: t?.count ?? 0, recent: t?.recent ?? [] }
  }

  async stop(): Promise<void> {
    await this.messages?.close()
    await this.queue
  }
}

import {
  type ConsumerMessages,
  DeliverPolicy,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream'
import { DLQ_STREAM, EVENTS_STREAM } from '../../../schema/jetstream.ts'
import type { NatsConnection } from '../../jetstream/connection.ts'
import { parseLogMessage } from '../../jetstream/messages.ts'
import type { Logger } from '../../observability/logger.ts'
import { DLQ_HEADERS } from '../../projectors/dead-letters.ts'

// Dead letters per project, read from the DEAD_LETTERS stream (the projectors publish there with
// the reason in a header). A refused event belongs to the project of the log message it came from
// (read back from the EVENTS stream by the sequence in its header); a refused whole message names
// its project in its own data when it still parses. The index holds counts and the newest few per
// project, not the letters themselves.

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

/** The project a log message (any version) names, when it reads as one. */
function teamOfChunk(data: Uint8Array): number | undefined {
  const parsed = parseLogMessage(data)
  const env = 'envelope' in parsed ? (parsed.envelope as { team_id?: unknown } | null) : undefined
  return typeof env?.team_id === 'number' ? env.team_id : undefined
}

export class DeadLetterIndex {
  private readonly perTeam = new Map<number, { count: number; recent: DeadLetterSummary[] }>()
  /** letters no project could be found for */
  unattributed = 0
  private messages: ConsumerMessages | undefined
  private queue: Promise<void> = Promise.resolve()
  private lastSource: { seq: number; team: number | undefined } | undefined

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
    const offset = num(h?.get(DLQ_HEADERS.offset))
    const team = await this.teamOfLetter(m.data, body, offset, sourceSeq)
    const summary: DeadLetterSummary = {
      seq: m.seq,
      at: new Date(m.info.timestampNanos / 1e6).toISOString(),
      reason: h?.get(DLQ_HEADERS.reason) ?? '',
      subject: h?.get(DLQ_HEADERS.subject) ?? '',
      source_seq: sourceSeq,
      offset,
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

  /**
   * The project a letter belongs to. A whole refused message (no offset): the chunk's own, if it still
   * reads as one. One refused event: its source chunk's project (the event's own team_id may be what
   * was wrong), else the team_id the event carries.
   */
  private async teamOfLetter(
    data: Uint8Array,
    body: Record<string, unknown> | undefined,
    offset: number | null,
    sourceSeq: number | null,
  ): Promise<number | undefined> {
    if (offset === null) return teamOfChunk(data)
    const team = sourceSeq === null ? undefined : await this.teamOfSource(sourceSeq)
    return team ?? (typeof body?.team_id === 'number' ? body.team_id : undefined)
  }

  private async teamOfSource(seq: number): Promise<number | undefined> {
    // The letters of one message arrive together: ask JetStream once for them.
    if (this.lastSource?.seq === seq) return this.lastSource.team
    const team = await this.readSourceTeam(seq)
    this.lastSource = { seq, team }
    return team
  }

  private async readSourceTeam(seq: number): Promise<number | undefined> {
    try {
      const jsm = await jetstreamManager(this.nc)
      const sm = await jsm.streams.getMessage(this.eventsStream, { seq })
      return sm ? teamOfChunk(sm.data) : undefined
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

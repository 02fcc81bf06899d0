import { createHash } from 'node:crypto'
import type { JetStreamClient } from '@nats-io/jetstream'
import { headers } from '@nats-io/transport-node'
import { deadLetters } from '../observability/metrics.ts'

// Where a projector puts what it cannot project: a message it cannot decode, an event that is invalid
// or that the person rules fail on, a row ClickHouse refuses for its content. Each batch collects its
// dead letters in one DeadLetterList (the one place they are made) and publishes them when it commits,
// before its identity state, so that a crash in between sends them again (deduplicated by id).

/** Subject of the dead-letter stream the lanes publish to (stream DEAD_LETTERS, `dlq.>`). */
export const DLQ_EVENTS_SUBJECT = 'dlq.events'

/** Headers of a dead letter. */
export const DLQ_HEADERS = {
  reason: 'Burrow-Dlq-Reason',
  subject: 'Burrow-Dlq-Subject',
  seq: 'Burrow-Dlq-Seq',
  offset: 'Burrow-Dlq-Offset',
} as const

/** What a dead letter holds (metric label `kind`): a whole message, one event, one refused row. */
export type DeadLetterKind = 'message' | 'event' | 'refused'

/** One dead letter, ready to publish. */
export interface DeadLetter {
  kind: DeadLetterKind
  reason: string
  /** log subject and stream sequence of the message it came from */
  subject: string
  seq: number
  /** index of the event in its chunk; absent when the whole message was unusable */
  offset?: number
  data: Uint8Array
  /** message id: a second publish of the same dead letter is dropped by JetStream's duplicate window */
  id: string
}

/** The position of a log message. */
interface Origin {
  subject: string
  seq: number
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v ?? null))
const baseId = (o: Origin) => `dlq-${o.subject}-${o.seq}`

/** A batch's dead letters, in the order they were found. */
export class DeadLetterList {
  readonly items: DeadLetter[] = []

  /** A whole message that could not be used; `data` is the message as it was. */
  message(msg: Origin & { data: Uint8Array }, reason: string): void {
    this.items.push({
      kind: 'message',
      reason,
      subject: msg.subject,
      seq: msg.seq,
      data: msg.data,
      id: baseId(msg),
    })
  }

  /** One event of a message (`raw`: the event as it was in the chunk, or as projected). */
  event(
    msg: Origin,
    offset: number,
    reason: string,
    raw: unknown,
    kind: 'event' | 'refused' = 'event',
  ): void {
    const id = `${baseId(msg)}-${offset}`
    this.items.push({ kind, reason, subject: msg.subject, seq: msg.seq, offset, data: json(raw), id })
  }

  /** A person/group row ClickHouse refused; it belongs to the batch, named by its last message. */
  identityRow(batchEnd: Origin, table: string, line: string, reason: string): void {
    const hash = createHash('sha1').update(line).digest('hex').slice(0, 16)
    const data = Buffer.from(line)
    const id = `${baseId(batchEnd)}-${table}-${hash}`
    this.items.push({ kind: 'refused', reason, subject: batchEnd.subject, seq: batchEnd.seq, data, id })
  }

  get length(): number {
    return this.items.length
  }
}

/** Publishes one dead letter to `subject` and counts it; resolves once JetStream has it. */
export async function publishDeadLetter(js: JetStreamClient, subject: string, d: DeadLetter): Promise<void> {
  const h = headers()
  // Header values are single lines.
  h.set(DLQ_HEADERS.reason, d.reason.replace(/[\r\n]+/g, ' ').slice(0, 1000))
  h.set(DLQ_HEADERS.subject, d.subject)
  h.set(DLQ_HEADERS.seq, String(d.seq))
  if (d.offset !== undefined) h.set(DLQ_HEADERS.offset, String(d.offset))
  await js.publish(subject, d.data, { msgID: d.id, headers: h })
  deadLetters.inc({ kind: d.kind })
}

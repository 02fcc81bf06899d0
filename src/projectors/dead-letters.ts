import type { JetStreamClient } from '@nats-io/jetstream'
import { headers } from '@nats-io/transport-node'
import { deadLetters } from '../observability/metrics.ts'

export const DLQ_EVENTS_SUBJECT = 'dlq.events'

export const DLQ_HEADERS = {
  reason: 'Burrow-Dlq-Reason',
  subject: 'Burrow-Dlq-Subject',
  seq: 'Burrow-Dlq-Seq',
  offset: 'Burrow-Dlq-Offset',
} as const

export interface DeadLetter {
  reason: string
  subject: string
  seq: number
  /** index of the event in its chunk; absent when the whole message was unusable */
  offset?: number
  data: Uint8Array
}

/**
 * Publishes to the dead-letter stream. The message id makes a redelivered batch's second publish a
 * no-op inside JetStream's duplicate window.
 */
export async function publishDeadLetter(js: JetStreamClient, subject: string, d: DeadLetter): Promise<void> {
  const h = headers()
  // Header values are single lines.
  h.set(DLQ_HEADERS.reason, d.reason.replace(/[\r\n]+/g, ' ').slice(0, 1000))
  h.set(DLQ_HEADERS.subject, d.subject)
  h.set(DLQ_HEADERS.seq, String(d.seq))
  if (d.offset !== undefined) h.set(DLQ_HEADERS.offset, String(d.offset))
  const id = `dlq-${d.subject}-${d.seq}${d.offset === undefined ? '' : `-${d.offset}`}`
  await js.publish(subject, d.data, { msgID: id, headers: h })
  deadLetters.inc({ kind: d.offset === undefined ? 'message' : 'event' })
}

import type { LogMessage } from '../../../../src/projectors/batch.ts'
import type { CapturedEvent } from '../../../../src/jetstream/messages.ts'
import type { DecodedEvent } from '../../../../src/projectors/decode.ts'

export const TEAM = 7

/** A captured event as capture writes it. */
export function captured(over: Partial<CapturedEvent> = {}): CapturedEvent {
  return {
    uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
    event: '$pageview',
    distinct_id: 'user-1',
    properties: {},
    timestamp: '2024-05-01T12:00:00.000Z',
    now: '2024-05-01T12:00:01.000Z',
    sent_at: null,
    ip: null,
    team_id: TEAM,
    ...over,
  }
}

export function decoded(event: CapturedEvent = captured(), offset = 0): DecodedEvent {
  return { offset, event, timestampMs: Date.parse(event.timestamp), nowMs: Date.parse(event.now) }
}

/** A log message holding `body` (a string or bytes are sent as they are, anything else as JSON). */
export function message(body: unknown, seq = 10): LogMessage {
  if (body instanceof Uint8Array) return { seq, subject: 'events.live.0', data: body, redelivered: false }
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return { seq, subject: 'events.live.0', data: new TextEncoder().encode(text), redelivered: false }
}

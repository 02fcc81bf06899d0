import type { LogMessage } from '../batch.ts'
import { type DecodedEvent, decodeChunk, type RejectedEvent } from '../decode.ts'
import { dlq, ok, type StepResult } from './results.ts'

/** A message's chunk: its team, its valid events, and the events that failed validation. */
export interface DecodedChunk {
  teamId: number
  events: DecodedEvent[]
  rejected: RejectedEvent[]
}

/** Decodes a log message; a message that is not a chunk at all goes to the dead letters whole. */
export function decodeMessage(msg: LogMessage): StepResult<DecodedChunk> {
  const d = decodeChunk(msg.data)
  return d.ok ? ok({ teamId: d.teamId, events: d.events, rejected: d.rejected }) : dlq(d.reason)
}

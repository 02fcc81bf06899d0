import { createHash } from 'node:crypto'
import { z } from 'zod'
import { LANES } from '../../schema/jetstream.ts'

// The unit written to the EVENTS stream: a chunk of captured events of one team, one lane and one
// partition. Chunking is what makes capture fast (one JetStream round trip per ~1,000 events
// instead of one per event); see docs/capture.md.

export const CapturedEventSchema = z.object({
  uuid: z.string().uuid(),
  event: z.string().min(1),
  distinct_id: z.string().min(1),
  properties: z.record(z.string(), z.unknown()),
  /** ISO 8601 with milliseconds, clock-skew corrected */
  timestamp: z.string(),
  /** when capture received the request */
  now: z.string(),
  sent_at: z.string().nullable(),
  ip: z.string().nullable(),
  team_id: z.number().int(),
})
export type CapturedEvent = z.infer<typeof CapturedEventSchema>

export const EventChunkSchema = z.object({
  v: z.literal(1),
  team_id: z.number().int(),
  lane: z.enum(LANES),
  events: z.array(CapturedEventSchema).min(1),
})
export type EventChunk = z.infer<typeof EventChunkSchema>

/** Same events, same id: a resent request is dropped by JetStream's duplicate window. */
export function chunkMessageId(chunk: EventChunk): string {
  const h = createHash('sha1')
  for (const e of chunk.events) h.update(e.uuid)
  return `${chunk.team_id}-${chunk.events.length}-${h.digest('hex')}`
}

/**
 * A team's events stay in one partition, in log order: person merges read and write state across
 * distinct ids, so one writer per team keeps them race-free. Teams spread over partitions.
 */
export function partitionOf(teamId: number, partitions: number): number {
  const h = createHash('md5').update(String(teamId)).digest()
  return h.readUInt32BE(0) % partitions
}

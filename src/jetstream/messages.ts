import { createHash } from 'node:crypto'
import { z } from 'zod'
import { LANES } from '../../schema/jetstream.ts'

// The unit written to the EVENTS stream: a chunk of captured events of one team, one lane and one
// partition. Chunking is what makes capture fast (one JetStream round trip per ~1,000 events
// instead of one per event); see docs/capture.md.
//
// Versions (`v`): a reader must understand every version still in a log (replay reads the oldest).
// - 1: events without top-level person updates.
// - 2 (written now): an event may carry `$set` / `$set_once` at its top level, as the SDK sent them;
//   the projector merges them into `properties` (src/projectors/steps/merge-person-updates.ts).
//   A reader of version 1 only would silently lose them, hence the new version.

/** The version capture writes. */
export const LOG_FORMAT_VERSION = 2

/** Every version this release reads. */
export const LOG_FORMAT_VERSIONS = [1, 2] as const

const PersonUpdates = z.record(z.string(), z.unknown())

/** One captured event as the log holds it. */
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
  /** person properties sent at the top level of the event (version 2) */
  $set: PersonUpdates.optional(),
  /** person properties set only when absent, sent at the top level of the event (version 2) */
  $set_once: PersonUpdates.optional(),
})
/** One captured event as the log holds it. */
export type CapturedEvent = z.infer<typeof CapturedEventSchema>

/** A chunk as capture writes it (the current version). */
export const EventChunkSchema = z.object({
  v: z.literal(LOG_FORMAT_VERSION),
  team_id: z.number().int(),
  lane: z.enum(LANES),
  events: z.array(CapturedEventSchema).min(1),
})
/** A chunk as capture writes it (the current version). */
export type EventChunk = z.infer<typeof EventChunkSchema>

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * `properties` with person updates sent at the top level of an event merged into `$set` / `$set_once`,
 * which is what version 2's top-level fields mean (PostHog's sanitizeEvent, nodejs/src/utils/event.ts):
 * a key present in both takes the top-level value; values that are not objects are ignored. Returns
 * `properties` itself when there is nothing to merge; never changes its arguments.
 */
export function withTopLevelUpdates(
  properties: Record<string, unknown>,
  set: unknown,
  setOnce: unknown,
): Record<string, unknown> {
  const topSet = isPlainObject(set) ? set : undefined
  const topSetOnce = isPlainObject(setOnce) ? setOnce : undefined
  if (!topSet && !topSetOnce) return properties
  const out = { ...properties }
  if (topSet) out.$set = { ...(isPlainObject(out.$set) ? out.$set : {}), ...topSet }
  if (topSetOnce) out.$set_once = { ...(isPlainObject(out.$set_once) ? out.$set_once : {}), ...topSetOnce }
  return out
}

/** Same events, same id: a resent request is dropped by JetStream's duplicate window. */
export function chunkMessageId(chunk: EventChunk): string {
  return messageIdOf(
    chunk.team_id,
    chunk.events.map((e) => e.uuid),
  )
}

/** The message id of a chunk of `teamId` holding events with these uuids, in log order. */
export function messageIdOf(teamId: number, uuids: readonly string[]): string {
  const h = createHash('sha1')
  for (const u of uuids) h.update(u)
  return `${teamId}-${uuids.length}-${h.digest('hex')}`
}

/**
 * A team's events stay in one partition, in log order: person merges read and write state across
 * distinct ids, so one writer per team keeps them race-free. Teams spread over partitions.
 */
export function partitionOf(teamId: number, partitions: number): number {
  const h = createHash('md5').update(String(teamId)).digest()
  return h.readUInt32BE(0) % partitions
}

import { createHash } from 'node:crypto'
import { z } from 'zod'
import { type Lane, LANES } from '../../schema/jetstream.ts'

// The unit written to the EVENTS stream: a chunk of captured events of one team, one lane and one
// partition. Chunking is what makes capture fast (one JetStream round trip per ~1,000 events
// instead of one per event); see docs/capture.md.
//
// Versions (`v`): a reader must understand every version still in a log (replay reads the oldest).
// - 1: events without top-level person updates.
// - 2: an event may carry `$set` / `$set_once` at its top level, as the SDK sent them; the projector
//   merges them into `properties` (src/projectors/steps/merge-person-updates.ts). A reader of
//   version 1 only would silently lose them, hence the new version.
// - 3 (written now): version 2's events, one per line. The first line is the envelope
//   (`{"v":3,"team_id":…,"lane":…}`), then each event's JSON on a line of its own (JSON text never
//   holds a raw newline). Versions 1 and 2 are one JSON document, which the reader had to turn into
//   one string of the whole message: strings over 128 KiB are V8 large objects, each on freshly
//   mapped pages, and a 1 MB chunk cost ~3 ms to decode as text against ~0.2 ms in pieces on this
//   project's machines (docs/performance.md, "The log, one event per line"). Read line by line, a
//   message never becomes one string, and an event that does not parse is refused alone.

/** The version capture writes. */
export const LOG_FORMAT_VERSION = 3

/** Every version this release reads. */
export const LOG_FORMAT_VERSIONS = [1, 2, 3] as const

/**
 * The version written as lines (an envelope line, then one event a line), which parseLogMessage
 * reads line by line. Not LOG_FORMAT_VERSION: a later version moves that one, and its messages need
 * their own branch in parseLogMessage whatever their layout.
 */
const LINES_FORMAT_VERSION = 3

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

/** A chunk as capture writes it (the current version), its events decoded. */
export const EventChunkSchema = z.object({
  v: z.literal(LOG_FORMAT_VERSION),
  team_id: z.number().int(),
  lane: z.enum(LANES),
  events: z.array(CapturedEventSchema).min(1),
})
/** A chunk as capture writes it (the current version), its events decoded. */
export type EventChunk = z.infer<typeof EventChunkSchema>

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const NEWLINE = 0x0a

/**
 * The log message (current version) of `teamId`'s events in `lane`, each already serialized by
 * JSON.stringify. `bytes`, when given, is the sum of their UTF-8 sizes plus one separator each (as
 * capture counts them). The lines are written straight into one buffer of the message's size.
 */
export function logMessage(teamId: number, lane: Lane, events: readonly string[], bytes?: number): Buffer {
  const head = `{"v":${LOG_FORMAT_VERSION},"team_id":${teamId},"lane":"${lane}"}`
  let body = bytes
  if (body === undefined) {
    body = 0
    for (const e of events) body += Buffer.byteLength(e) + 1
  }
  const out = Buffer.allocUnsafe(head.length + body)
  let at = out.write(head, 0, 'latin1')
  for (const e of events) {
    out[at++] = NEWLINE
    at += out.write(e, at, 'utf8')
  }
  if (at !== out.length) throw new Error(`log message of ${at} bytes written into ${out.length}`)
  return out
}

/** The log message of a chunk, as capture writes it (for tools and tests that write the log). */
export function encodeChunk(chunk: EventChunk): Buffer {
  return logMessage(
    chunk.team_id,
    chunk.lane,
    chunk.events.map((e) => JSON.stringify(e)),
  )
}

/** An event line of a version 3 message that is not JSON: its text and the parser's message. */
export class UndecodableLine {
  constructor(
    readonly text: string,
    readonly reason: string,
  ) {}
}

/**
 * A log message of any version as its envelope, with `events` holding each event as parsed JSON
 * (version 3: an UndecodableLine for a line that does not parse). Nothing is validated beyond JSON:
 * the envelope is whatever the message holds (a version 3 envelope gets `events` from its lines).
 * Returns the parser's message when the message (or its first line) is not JSON at all.
 */
export function parseLogMessage(data: Uint8Array): { envelope: unknown } | { undecodable: string } {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const nl = buf.indexOf(NEWLINE)
  if (nl >= 0) {
    let head: unknown
    try {
      head = JSON.parse(buf.toString('utf8', 0, nl))
    } catch {
      head = undefined // a version 1 or 2 document written across lines
    }
    if (isPlainObject(head) && head.v === LINES_FORMAT_VERSION) {
      const events: unknown[] = []
      let at = nl + 1
      while (at < buf.length) {
        let end = buf.indexOf(NEWLINE, at)
        if (end < 0) end = buf.length
        const text = buf.toString('utf8', at, end)
        try {
          events.push(JSON.parse(text))
        } catch (err) {
          events.push(new UndecodableLine(text, (err as Error).message))
        }
        at = end + 1
      }
      return { envelope: { ...head, events } }
    }
  }
  try {
    return { envelope: JSON.parse(buf.toString('utf8')) as unknown }
  } catch (err) {
    return { undecodable: (err as Error).message }
  }
}

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

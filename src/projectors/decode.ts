import { z } from 'zod'
import { LANES } from '../../schema/jetstream.ts'
import {
  type CapturedEvent,
  CapturedEventSchema,
  LOG_FORMAT_VERSIONS,
  parseLogMessage,
  UndecodableLine,
} from '../jetstream/messages.ts'
import { MAX_DATETIME_MS, MIN_DATETIME_MS } from './tsv.ts'

// A chunk is checked in two steps so that one bad event does not take its 999 neighbours to the
// dead-letter stream with it: the envelope first (a bad one poisons the whole message), then each event.
// Every version of the log format is read (src/jetstream/messages.ts): replay reads old logs.
const EnvelopeSchema = z.object({
  v: z.literal(LOG_FORMAT_VERSIONS),
  team_id: z.number().int(),
  lane: z.enum(LANES),
  events: z.array(z.unknown()).min(1),
})

// The hot path checks an event by hand (the schema's rules, same UUID pattern as zod's); only an event
// that fails goes through the schema, for the reason. Projection reads the known fields only, so the
// extra keys zod would strip do no harm.
const UUID =
  /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}|00000000-0000-0000-0000-000000000000|ffffffff-ffff-ffff-ffff-ffffffffffff)$/
const isNonEmpty = (v: unknown) => typeof v === 'string' && v.length > 0
const isStringOrNull = (v: unknown) => v === null || typeof v === 'string'
const isUpdatesOrAbsent = (v: unknown) =>
  v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v))

function quickCheck(raw: unknown): CapturedEvent | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined
  const e = raw as Record<string, unknown>
  const p = e.properties
  const ok =
    typeof e.uuid === 'string' &&
    UUID.test(e.uuid) &&
    isNonEmpty(e.event) &&
    isNonEmpty(e.distinct_id) &&
    typeof p === 'object' &&
    p !== null &&
    !Array.isArray(p) &&
    typeof e.timestamp === 'string' &&
    typeof e.now === 'string' &&
    isStringOrNull(e.sent_at) &&
    isStringOrNull(e.ip) &&
    Number.isInteger(e.team_id) &&
    isUpdatesOrAbsent(e.$set) &&
    isUpdatesOrAbsent(e.$set_once)
  return ok ? (e as CapturedEvent) : undefined
}

/** A valid event of a chunk, its position in the chunk and its times in epoch milliseconds. */
export interface DecodedEvent {
  offset: number
  event: CapturedEvent
  timestampMs: number
  nowMs: number
}

/** An event of a chunk that failed validation, as it was, with the reason. */
export interface RejectedEvent {
  offset: number
  raw: unknown
  reason: string
}

/** A decoded chunk, or why the whole message is unusable. */
export type Decoded =
  | { ok: true; teamId: number; events: DecodedEvent[]; rejected: RejectedEvent[] }
  | { ok: false; reason: string }

/** Decodes a log message: the envelope must hold, each event is checked on its own. */
export function decodeChunk(data: Uint8Array): Decoded {
  const parsed = parseLogMessage(data)
  if ('undecodable' in parsed) return { ok: false, reason: `undecodable: ${parsed.undecodable}` }
  const env = EnvelopeSchema.safeParse(parsed.envelope)
  if (!env.success) return { ok: false, reason: `invalid chunk: ${summarize(env.error)}` }
  const teamId = env.data.team_id
  const version = env.data.v
  const events: DecodedEvent[] = []
  const rejected: RejectedEvent[] = []
  // The events of a chunk share capture's receive time: its text is parsed once.
  let lastNow = ''
  let lastNowMs = Number.NaN
  const raws = env.data.events
  for (let offset = 0; offset < raws.length; offset++) {
    const raw = raws[offset]
    if (raw instanceof UndecodableLine) {
      rejected.push({ offset, raw: raw.text, reason: `undecodable event: ${raw.reason}` })
      continue
    }
    let e = quickCheck(raw)
    if (!e) {
      const parsed = CapturedEventSchema.safeParse(raw)
      if (!parsed.success) {
        rejected.push({ offset, raw, reason: `invalid event: ${summarize(parsed.error)}` })
        continue
      }
      e = parsed.data
    }
    if (e.team_id !== teamId) {
      rejected.push({ offset, raw, reason: 'invalid event: team_id differs from chunk' })
      continue
    }
    const timestampMs = parseTime(e.timestamp)
    if (!Number.isFinite(timestampMs) || timestampMs < MIN_DATETIME_MS || timestampMs > MAX_DATETIME_MS) {
      rejected.push({ offset, raw, reason: `invalid event: timestamp out of range: ${e.timestamp}` })
      continue
    }
    // Version 1 had no top-level person updates: whatever a v1 event holds there was never meant.
    if (version === 1 && (e.$set !== undefined || e.$set_once !== undefined)) {
      const { $set: _set, $set_once: _setOnce, ...v1 } = e
      e = v1
    }
    if (e.now !== lastNow) {
      lastNow = e.now
      lastNowMs = parseTime(e.now)
    }
    const nowMs = Number.isFinite(lastNowMs) ? lastNowMs : timestampMs
    events.push({ offset, event: e, timestampMs, nowMs })
  }
  return { ok: true, teamId, events, rejected }
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** The value of the ASCII digits s[at..at+len), or -1 when one is not a digit. */
function digits(s: string, at: number, len: number): number {
  let v = 0
  for (let i = at; i < at + len; i++) {
    const d = s.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    v = v * 10 + d
  }
  return v
}

/**
 * Date.parse(s), without its general parser for the text capture writes (toISOString's
 * 'YYYY-MM-DDThh:mm:ss.sssZ' with a real calendar date and time of day); anything else, or out of
 * those ranges, goes to Date.parse.
 */
export function parseTime(s: string): number {
  if (
    s.length !== 24 ||
    s.charCodeAt(4) !== 45 || // -
    s.charCodeAt(7) !== 45 ||
    s.charCodeAt(10) !== 84 || // T
    s.charCodeAt(13) !== 58 || // :
    s.charCodeAt(16) !== 58 ||
    s.charCodeAt(19) !== 46 || // .
    s.charCodeAt(23) !== 90 // Z
  )
    return Date.parse(s)
  const y = digits(s, 0, 4)
  const mo = digits(s, 5, 2)
  const d = digits(s, 8, 2)
  const h = digits(s, 11, 2)
  const mi = digits(s, 14, 2)
  const sec = digits(s, 17, 2)
  const ms = digits(s, 20, 3)
  if (
    y < 0 ||
    mo < 1 ||
    mo > 12 ||
    d < 1 ||
    h < 0 ||
    h > 23 ||
    mi < 0 ||
    mi > 59 ||
    sec < 0 ||
    sec > 59 ||
    ms < 0
  )
    return Date.parse(s)
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
  if (d > DAYS_IN_MONTH[mo - 1]! + (mo === 2 && leap ? 1 : 0)) return Date.parse(s)
  return daysFromCivil(y, mo, d) * 86_400_000 + ((h * 60 + mi) * 60 + sec) * 1000 + ms
}

/** Days from 1970-01-01 to a date of the proleptic Gregorian calendar (the epoch-day algorithm). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
  return era * 146_097 + doe - 719_468
}

function summarize(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ')
}

import { validate as isUuid, v7 as uuidv7 } from 'uuid'
import { z } from 'zod'
import { AuthenticationError, ValidationError } from '../http/errors.ts'
import { type CapturedEvent, withTopLevelUpdates } from '../jetstream/messages.ts'

// From a decoded body to the events Burrow stores: find the project token, apply PostHog's drop
// rules (no name, no or empty distinct_id: dropped, the request still succeeds), and stamp each
// event with uuid, receive time, clock-skew corrected timestamp and client ip.

const Obj = z.record(z.string(), z.unknown())

const RawEvent = z
  .object({
    event: z.unknown().optional(),
    distinct_id: z.unknown().optional(),
    $distinct_id: z.unknown().optional(),
    properties: z.unknown().optional(),
    timestamp: z.unknown().optional(),
    uuid: z.unknown().optional(),
    sent_at: z.unknown().optional(),
    offset: z.unknown().optional(),
    api_key: z.unknown().optional(),
    token: z.unknown().optional(),
    $token: z.unknown().optional(),
    $set: z.unknown().optional(),
    $set_once: z.unknown().optional(),
  })
  .passthrough()
type RawEvent = z.infer<typeof RawEvent>

const Envelope = z
  .object({
    batch: z.array(z.unknown()),
    api_key: z.unknown().optional(),
    token: z.unknown().optional(),
    historical_migration: z.unknown().optional(),
    sent_at: z.unknown().optional(),
  })
  .passthrough()

export const DROP_REASONS = [
  'no_event_name',
  'no_distinct_id',
  'invalid_distinct_id',
  'invalid_event',
] as const
export type DropReason = (typeof DROP_REASONS)[number] | 'event_too_large'

export interface ParsedRequest {
  token: string
  historical: boolean
  items: unknown[]
  sentAt: unknown
}

// (an absent value is answered before the schema: a failed parse builds an error, and most events
// have no top-level $set or $set_once)
const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== undefined && v !== null && Obj.safeParse(v).success && !Array.isArray(v)

/**
 * What `Obj` accepts, checked without the copy its parse makes. Every value here comes from
 * JSON.parse, so it is a plain object exactly when it is a non-null, non-array object; its keys are
 * strings and enumerable.
 */
const ObjectChecked = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
)

/**
 * An event's properties without the project token keys, as `Obj`'s copy minus those: a key
 * `__proto__` is dropped as that copy drops it. Properties without any of them are the decoded
 * object itself (the decoded body belongs to this request alone), and the others a spread copy
 * (V8 copies its layout; a copy made key by key was three times slower to make and to serialize).
 * In that copy the token keys hold undefined rather than being deleted: the properties only ever
 * leave capture as JSON, which leaves out undefined values, so the bytes are the same; but a
 * delete turns the copy into a slow dictionary, to make and to serialize (measured on 31-key
 * posthog-js properties, whose `token` is always there).
 */
function withoutTokens(p: Record<string, unknown>): Record<string, unknown> {
  const token = Object.hasOwn(p, 'token')
  const $token = Object.hasOwn(p, '$token')
  const proto = Object.hasOwn(p, '__proto__')
  if (!token && !$token && !proto) return p
  const out = { ...p }
  if (token) out.token = undefined
  if ($token) out.$token = undefined
  // (deleted: an assignment would set the prototype; rare)
  if (proto) delete out['__proto__']
  return out
}

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined)

function tokenOf(e: unknown): string | undefined {
  const p = RawEvent.safeParse(e)
  if (!p.success) return undefined
  // (ObjectChecked, not Obj: only two keys are read, so no copy of every property)
  const props = ObjectChecked.safeParse(p.data.properties)
  return (
    str(p.data.api_key) ??
    str(p.data.token) ??
    str(p.data.$token) ??
    (props.success ? (str(props.data.token) ?? str(props.data.$token)) : undefined)
  )
}

/** Splits a body (one event, an array of events, or `{batch: [...]}`) into its items and token. */
export function parseEnvelope(body: unknown, query: { token?: string; sentAtMs?: number }): ParsedRequest {
  let items: unknown[]
  let token: string | undefined
  let historical = false
  let sentAt: unknown = query.sentAtMs
  if (Array.isArray(body)) {
    items = body
  } else if (body !== null && typeof body === 'object') {
    // A body without `batch` is one event: it is not parsed as a batch only to fail (a failed
    // parse builds an error with its stack: ~3.5 of the ~6 µs that reading and normalizing one
    // event took in a micro-benchmark).
    const env = 'batch' in body ? Envelope.safeParse(body) : undefined
    if (env?.success) {
      items = env.data.batch
      token = str(env.data.api_key) ?? str(env.data.token)
      historical = env.data.historical_migration === true
      sentAt = env.data.sent_at ?? sentAt
    } else if ('batch' in body) {
      throw new ValidationError('batch must be an array of events.', 'batch', 'invalid_payload')
    } else {
      items = [body]
      const b = body as Record<string, unknown>
      historical = b.historical_migration === true
    }
  } else {
    throw new ValidationError(
      'Body must be an event, an array of events or a batch object.',
      null,
      'invalid_payload',
    )
  }
  // (the first event with a token ends the search: each look parses an event)
  for (let i = 0; token === undefined && i < items.length; i++) token = tokenOf(items[i])
  token ??= str(query.token)
  if (!token) {
    throw new AuthenticationError(
      'API key not found. Send the project API key as api_key, token or properties.token.',
      'missing_api_key',
    )
  }
  return { token, historical, items, sentAt }
}

// ClickHouse strings may hold NUL, but ids and names with one break exports and clients.
// (looked for first: replaceAll scans and copies every name and id, which almost never hold one)
const withoutNul = (s: string) => (s.includes('\u0000') ? s.replaceAll('\u0000', '\uFFFD') : s)

const MAX_DISTINCT_ID_LENGTH = 200
const MAX_EVENT_NAME_LENGTH = 200
/** A timestamp further ahead than this is the client's clock, not the event: use receive time. */
const MAX_FUTURE_MS = 23 * 3600 * 1000

function distinctIdOf(e: RawEvent, props: Record<string, unknown>): { id: string } | { drop: DropReason } {
  const raw = e.distinct_id ?? e.$distinct_id ?? props.distinct_id ?? props.$distinct_id
  if (raw === undefined || raw === null) return { drop: 'no_distinct_id' }
  let id: string
  if (typeof raw === 'string') id = raw
  else if (typeof raw === 'number' && Number.isFinite(raw)) id = String(raw)
  else if (typeof raw === 'boolean') id = String(raw)
  else return { drop: 'invalid_distinct_id' }
  id = id.trim()
  if (id.length === 0) return { drop: 'no_distinct_id' }
  return { id: withoutNul(id).slice(0, MAX_DISTINCT_ID_LENGTH) }
}

function parseTime(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v
  if (typeof v !== 'string' || v.length === 0) return undefined
  const t = Date.parse(v)
  return Number.isNaN(t) ? undefined : t
}

// A request's events share its sent_at: parsed and written out once, not once per event.
let lastSentRaw: unknown = Symbol('none')
let lastSent: { ms: number | undefined; iso: string | null } = { ms: undefined, iso: null }
function sentAtOf(raw: unknown): { ms: number | undefined; iso: string | null } {
  if (raw !== lastSentRaw) {
    const ms = parseTime(raw)
    lastSent = { ms, iso: ms !== undefined ? new Date(ms).toISOString() : null }
    lastSentRaw = raw
  }
  return lastSent
}

/**
 * PostHog's timestamp rule: with both `timestamp` and `sent_at` the client's clock skew is removed
 * (now + timestamp − sent_at); with `offset` (ms ago) it is now − offset; else `timestamp`; else now.
 */
export function eventTimeMs(
  e: { timestamp?: unknown; sent_at?: unknown; offset?: unknown },
  requestSentAt: unknown,
  nowMs: number,
): number {
  const ts = parseTime(e.timestamp)
  const sentAt = parseTime(e.sent_at) ?? sentAtOf(requestSentAt).ms
  let t: number
  if (ts !== undefined && sentAt !== undefined) t = nowMs + (ts - sentAt)
  else if (typeof e.offset === 'number' && Number.isFinite(e.offset)) t = nowMs - e.offset
  else t = ts ?? nowMs
  if (!Number.isFinite(t) || t - nowMs > MAX_FUTURE_MS || t < 0 || t > 253402300799000) return nowMs
  return Math.round(t)
}

export type Normalized = { ok: CapturedEvent } | { drop: DropReason }

// A request's events share its receive time: its text is made once, not once per event.
let lastMs = Number.NaN
let lastIso = ''
function isoOf(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString()
    lastMs = ms
  }
  return lastIso
}

// Events of a request mostly fall in the same minute: its text (Date's own) is made once and the
// seconds and milliseconds written after it; Date's toISOString was half of an event's
// normalization. Only for times from 1970 on (those eventTimeMs returns), where they are the
// remainder of a division by a minute.
let minuteOf = Number.NaN
let minuteIso = ''
function timestampIso(ms: number): string {
  const minute = Math.floor(ms / 60_000)
  if (minute !== minuteOf) {
    // "YYYY-MM-DDTHH:MM:"
    minuteIso = new Date(minute * 60_000).toISOString().slice(0, 17)
    minuteOf = minute
  }
  const inMinute = ms - minute * 60_000
  const sec = Math.floor(inMinute / 1000)
  const milli = inMinute - sec * 1000
  return `${minuteIso}${sec < 10 ? '0' : ''}${sec}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`
}

export function normalizeEvent(
  item: unknown,
  ctx: { teamId: number; nowMs: number; ip: string | null; sentAt: unknown },
): Normalized {
  const parsed = RawEvent.safeParse(item)
  if (!parsed.success) return { drop: 'invalid_event' }
  const e = parsed.data
  const propsParsed = ObjectChecked.safeParse(e.properties ?? {})
  if (!propsParsed.success) return { drop: 'invalid_event' }
  let properties = withoutTokens(propsParsed.data)
  let name = e.event
  // Person updates at the top level (posthog-js identify and capture's $set option) travel in the log
  // as sent; the projector merges them into properties (src/jetstream/messages.ts, version 2). A
  // top-level $unset is not read, as in PostHog (its capture's event has no such field).
  let set = isObject(e.$set) ? e.$set : undefined
  let setOnce = isObject(e.$set_once) ? e.$set_once : undefined
  // Legacy /engage/ payloads are person updates without an event name: an $identify carrying them.
  if (name === undefined && (e.$set !== undefined || e.$set_once !== undefined)) {
    name = '$identify'
    properties = withTopLevelUpdates(properties, e.$set, e.$set_once)
    set = setOnce = undefined
  }
  if (typeof name !== 'string' || name.trim().length === 0) return { drop: 'no_event_name' }
  const distinctId = distinctIdOf(e, properties)
  if ('drop' in distinctId) return distinctId
  const sentAt = sentAtOf(e.sent_at ?? ctx.sentAt)
  const event: CapturedEvent = {
    uuid: typeof e.uuid === 'string' && isUuid(e.uuid) ? e.uuid.toLowerCase() : uuidv7(),
    event: withoutNul(name).slice(0, MAX_EVENT_NAME_LENGTH),
    distinct_id: distinctId.id,
    properties,
    timestamp: timestampIso(eventTimeMs(e, ctx.sentAt, ctx.nowMs)),
    now: isoOf(ctx.nowMs),
    sent_at: sentAt.iso,
    ip: ctx.ip,
    team_id: ctx.teamId,
  }
  // (added after the others, so they come last when serialized, as before)
  if (set) event.$set = set
  if (setOnce) event.$set_once = setOnce
  return { ok: event }
}

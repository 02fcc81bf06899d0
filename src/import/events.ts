import { v5 as uuidv5, validate as isUuid } from 'uuid'

// From one record of a migration file to the event `burrow import` posts to capture, or the reason
// it is rejected. A record is a PostHog-shaped event (`event`, `distinct_id`, `properties`,
// `timestamp`, optional `uuid`, `$set`, `$set_once`) or a row of PostHog's batch export (`set`,
// `set_once`, `ip`, `elements_chain`/`elements`, `properties` possibly as JSON text).

/** Names the events of imported records that carry no uuid (uuid v5 of the record's text). */
export const IMPORT_UUID_NAMESPACE = 'c1a5b1d2-6f0e-4d8a-9c3b-2e7f4a6b8d10'

export interface ImportEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

/** A mapped record: the event and its JSON text (made once, for the size check and the request body). */
export type Mapped = { ok: ImportEvent; json: string } | { error: string }

/** capture drops larger events (the NATS payload limit); rejecting them here names the line */
export const MAX_EVENT_BYTES = 1_000_000

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** An object, or JSON text of one (batch exports store property bags as text). */
function objectOf(v: unknown, what: string): Record<string, unknown> | string | undefined {
  if (v === undefined || v === null || v === '') return undefined
  if (isObject(v)) return v
  if (typeof v === 'string') {
    try {
      const parsed: unknown = JSON.parse(v)
      if (isObject(parsed)) return parsed
    } catch {}
  }
  return `${what} is not an object`
}

const CANONICAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/**
 * A timestamp as ISO 8601 in UTC, or undefined. Accepts ISO strings, `YYYY-MM-DD hh:mm:ss[.ffffff]`
 * (PostHog's exports; no zone means UTC) and epoch milliseconds.
 */
export function parseTimestamp(v: unknown): string | undefined {
  let ms: number
  if (typeof v === 'number' && Number.isFinite(v)) ms = v
  // Already ISO 8601 in UTC to the millisecond (what exports and SDKs write): none of the rewrites
  // below applies, so it goes straight to Date.parse.
  else if (typeof v === 'string' && CANONICAL.test(v)) ms = Date.parse(v)
  else if (typeof v === 'string' && v.trim() !== '') {
    let s = v.trim().replace(/^(\d{4}-\d{2}-\d{2}) (\d)/, '$1T$2')
    // Fractions longer than milliseconds are cut, so every engine reads them the same way.
    s = s.replace(/(T\d{2}:\d{2}:\d{2}\.\d{3})\d+/, '$1')
    if (/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) s += 'Z'
    ms = /^\d+$/.test(s) ? Number(s) : Date.parse(s)
  } else return undefined
  if (!Number.isFinite(ms) || ms < 0 || ms > Date.UTC(2105, 11, 31)) return undefined
  return new Date(ms).toISOString()
}

/**
 * Maps one record. `name` is the text the uuid is derived from when the record has none, so that the
 * same line imported twice (a resumed run) yields the same event.
 */
export function toImportEvent(rec: Record<string, unknown>, name: string): Mapped {
  const props = objectOf(rec.properties, 'properties')
  if (typeof props === 'string') return { error: props }
  const properties: Record<string, unknown> = { ...(props ?? {}) }

  const event = rec.event
  if (typeof event !== 'string' || event.trim() === '') return { error: 'no event name' }

  const rawId = rec.distinct_id ?? rec.$distinct_id ?? properties.distinct_id ?? properties.$distinct_id
  const distinctId = typeof rawId === 'string' ? rawId.trim() : typeof rawId === 'number' ? String(rawId) : ''
  if (distinctId === '') return { error: 'no distinct_id' }

  const timestamp = parseTimestamp(rec.timestamp)
  if (!timestamp) {
    return {
      error: rec.timestamp === undefined ? 'no timestamp' : `invalid timestamp: ${String(rec.timestamp)}`,
    }
  }

  let uuid: string
  if (rec.uuid === undefined || rec.uuid === null || rec.uuid === '') {
    uuid = uuidv5(name, IMPORT_UUID_NAMESPACE)
  } else if (typeof rec.uuid === 'string' && isUuid(rec.uuid)) {
    uuid = rec.uuid.toLowerCase()
  } else {
    return { error: `invalid uuid: ${String(rec.uuid)}` }
  }

  for (const [from, to] of [
    ['$set', '$set'],
    ['set', '$set'],
    ['$set_once', '$set_once'],
    ['set_once', '$set_once'],
  ] as const) {
    const bag = objectOf(rec[from], from)
    if (typeof bag === 'string') return { error: bag }
    // The event's own properties win over the export's copy of them.
    if (bag && properties[to] === undefined) properties[to] = bag
  }
  if (typeof rec.ip === 'string' && rec.ip !== '' && properties.$ip === undefined) properties.$ip = rec.ip
  const chain = rec.elements_chain ?? rec.elements
  if (typeof chain === 'string' && chain !== '' && properties.$elements_chain === undefined) {
    properties.$elements_chain = chain
  }

  const out: ImportEvent = { uuid, event, distinct_id: distinctId, timestamp, properties }
  const json = JSON.stringify(out)
  if (Buffer.byteLength(json) > MAX_EVENT_BYTES)
    return { error: `event larger than ${MAX_EVENT_BYTES} bytes` }
  return { ok: out, json }
}

/** A JSON lines record. */
export function fromJsonLine(text: string): Mapped {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (err) {
    return { error: `invalid JSON: ${(err as Error).message}` }
  }
  if (!isObject(parsed)) return { error: 'not a JSON object' }
  return toImportEvent(parsed, text)
}

// What the live tail sends a browser: matching events, summarized, at a bounded rate.

export interface TailFilter {
  /** case-insensitive substring of the event name */
  event?: string
  /** case-insensitive substring of the distinct id */
  distinctId?: string
}

export interface TailEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  lane: string
  properties: Record<string, unknown>
  /** the event had more properties than were sent */
  truncated: boolean
}

const MAX_KEYS = 30
const MAX_VALUE_CHARS = 200

/** True when the event passes the filter. */
export function matchesTail(f: TailFilter, e: { event: string; distinct_id: string }): boolean {
  if (f.event && !e.event.toLowerCase().includes(f.event.toLowerCase())) return false
  if (f.distinctId && !e.distinct_id.toLowerCase().includes(f.distinctId.toLowerCase())) return false
  return true
}

/**
 * At most MAX_KEYS properties, each value cut to MAX_VALUE_CHARS characters (objects as JSON text),
 * so one huge event cannot stall the stream: the tail is for seeing events arrive, HogQL for reading them.
 */
export function summarize(
  e: {
    uuid: string
    event: string
    distinct_id: string
    timestamp: string
    properties: Record<string, unknown>
  },
  lane: string,
): TailEvent {
  const keys = Object.keys(e.properties)
  const properties: Record<string, unknown> = {}
  let truncated = keys.length > MAX_KEYS
  for (const k of keys.slice(0, MAX_KEYS)) {
    let v = e.properties[k]
    if (v !== null && typeof v === 'object') v = JSON.stringify(v)
    if (typeof v === 'string' && v.length > MAX_VALUE_CHARS) {
      v = `${v.slice(0, MAX_VALUE_CHARS)}…`
      truncated = true
    }
    properties[k] = v
  }
  return {
    uuid: e.uuid,
    event: e.event,
    distinct_id: e.distinct_id,
    timestamp: e.timestamp,
    lane,
    properties,
    truncated,
  }
}

type RawEvent = Parameters<typeof summarize>[0]

/**
 * A subscriber's queue between flushes: keeps the newest `max` events as they came and counts what it
 * had to skip. Events are summarized only when taken, so a burst costs a reference per event.
 */
export class TailQueue {
  private items: { e: RawEvent; lane: string }[] = []
  skipped = 0

  constructor(private readonly max: number) {}

  push(e: RawEvent, lane: string): void {
    this.items.push({ e, lane })
    if (this.items.length >= this.max * 2) this.trim()
  }

  private trim(): void {
    const over = this.items.length - this.max
    if (over > 0) {
      this.items = this.items.slice(over)
      this.skipped += over
    }
  }

  /** The queued events (at most `max`, newest kept) and how many were skipped since the last take. */
  take(): { events: TailEvent[]; skipped: number } {
    this.trim()
    const out = { events: this.items.map(({ e, lane }) => summarize(e, lane)), skipped: this.skipped }
    this.items = []
    this.skipped = 0
    return out
  }
}

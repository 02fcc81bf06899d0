// What a chunk of rrweb events tells about its session, by PostHog's rules (its session replay
// ingestion's summary of a message, and its player's activity segmenter): counts of clicks,
// keypresses and mouse activity, console lines by level, the first URL, the time span and the
// milliseconds of activity. Per-chunk values add up to the session's (the summary table sums them).

/** rrweb event types and incremental sources used here (rrweb's numbering). */
export const RRWEB = {
  FullSnapshot: 2,
  IncrementalSnapshot: 3,
  Meta: 4,
  Custom: 5,
  Plugin: 6,
} as const
const SOURCE = { MouseMove: 1, MouseInteraction: 2, Input: 5, TouchMove: 6 } as const
/** MouseInteraction types counted as clicks: Click, ContextMenu, DblClick, TouchEnd. */
const CLICKS = new Set([2, 3, 4, 9])
/** incremental sources that mean the user is doing something (mouse, scroll, resize, input, touch, media, drag) */
const ACTIVE_SOURCES = new Set([1, 2, 3, 4, 5, 6, 7, 12])
/** a pause longer than this between active events ends an active segment */
const ACTIVITY_THRESHOLD_MS = 5000

/** Browser console levels folded into PostHog's three; anything else is info. */
const LEVELS = new Map<unknown, 'warn' | 'error'>([
  ['warn', 'warn'],
  ['countReset', 'warn'],
  ['error', 'error'],
  ['assert', 'error'],
])

export interface RRWebEvent {
  type?: unknown
  timestamp?: unknown
  data?: unknown
  windowId?: unknown
}

export interface ChunkStats {
  first_ms: number
  last_ms: number
  click_count: number
  keypress_count: number
  mouse_activity_count: number
  active_ms: number
  console_log_count: number
  console_warn_count: number
  console_error_count: number
  first_url: string | null
  /** bytes of the events as JSON */
  size: number
  event_count: number
}

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined

const validTime = (t: unknown): t is number => typeof t === 'number' && Number.isFinite(t) && t > 0

/** A Meta event's `data.href`, or a Custom event's `data.payload.href` (trimmed, non-empty). */
function hrefOf(e: RRWebEvent): string | undefined {
  const data = obj(e.data)
  const href = data?.href ?? obj(data?.payload)?.href
  if (typeof href !== 'string') return undefined
  const t = href.trim()
  return t.length ? t : undefined
}

function isActive(e: RRWebEvent): boolean {
  return e.type === RRWEB.IncrementalSnapshot && ACTIVE_SOURCES.has(obj(e.data)?.source as number)
}

/**
 * Milliseconds of activity: events of each window are cut into segments (a new one when activity
 * starts, or when no active event came for 5 s); active segments count their span, at least 1 ms.
 * Windows are summed separately, even when they overlap in time.
 */
export function activeMilliseconds(events: RRWebEvent[]): number {
  const byWindow = new Map<unknown, RRWebEvent[]>()
  for (const e of events) {
    const list = byWindow.get(e.windowId)
    if (list) list.push(e)
    else byWindow.set(e.windowId, [e])
  }
  let total = 0
  for (const list of byWindow.values()) {
    let seg: { start: number; end: number; active: boolean } | undefined
    let lastActive = 0
    const close = () => {
      if (seg?.active) total += Math.max(1, seg.end - seg.start)
    }
    for (const e of list) {
      const t = typeof e.timestamp === 'number' ? e.timestamp : 0
      const active = isActive(e)
      let fresh = !seg || (active && !seg.active)
      if (seg?.active && lastActive + ACTIVITY_THRESHOLD_MS < t) fresh = true
      if (active) lastActive = t
      if (fresh) {
        close()
        seg = { start: t, end: t, active }
      } else seg!.end = t
    }
    close()
  }
  return total
}

/**
 * The summary of one chunk, or null when no event has a usable timestamp (PostHog ignores such a
 * message). `jsonBytes` is the size of the events as a JSON array when the caller already knows it.
 */
export function summarizeChunk(events: RRWebEvent[], jsonBytes?: number): ChunkStats | null {
  let first = Infinity
  let last = -Infinity
  const s: ChunkStats = {
    first_ms: 0,
    last_ms: 0,
    click_count: 0,
    keypress_count: 0,
    mouse_activity_count: 0,
    active_ms: 0,
    console_log_count: 0,
    console_warn_count: 0,
    console_error_count: 0,
    first_url: null,
    size: jsonBytes ?? Buffer.byteLength(JSON.stringify(events)),
    event_count: events.length,
  }
  for (const e of events) {
    if (validTime(e.timestamp)) {
      if (e.timestamp < first) first = e.timestamp
      if (e.timestamp > last) last = e.timestamp
    }
    const data = obj(e.data)
    if (e.type === RRWEB.IncrementalSnapshot) {
      const source = data?.source
      if (source === SOURCE.MouseInteraction && CLICKS.has(data?.type as number)) s.click_count++
      if (source === SOURCE.MouseInteraction || source === SOURCE.MouseMove || source === SOURCE.TouchMove) {
        s.mouse_activity_count++
      }
      if (source === SOURCE.Input) s.keypress_count++
    }
    if (s.first_url === null) s.first_url = hrefOf(e) ?? null
    if (e.type === RRWEB.Plugin && data?.plugin === 'rrweb/console@1') {
      const folded = LEVELS.get(obj(data.payload)?.level) ?? 'info'
      if (folded === 'info') s.console_log_count++
      else if (folded === 'warn') s.console_warn_count++
      else s.console_error_count++
    }
  }
  if (first === Infinity) return null
  s.first_ms = first
  s.last_ms = last
  s.active_ms = Math.round(activeMilliseconds(events))
  return s
}

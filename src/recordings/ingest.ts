import { createHash } from 'node:crypto'
import { promisify } from 'node:util'
import { gzip as gzipCb, gzipSync } from 'node:zlib'
import { normalizeEvent } from '../capture/normalize.ts'
import { type ChunkHeader, encodeMessage } from './message.ts'
import { recordingsSubject } from './stream.ts'
import { type RRWebEvent, summarizeChunk } from './summary.ts'

// From the items of an /s/ request to the messages of the RECORDINGS stream. posthog-js sends
// `$snapshot` events, each carrying a list of rrweb events for one session and window; items are
// grouped by (session, window), written as JSON lines `[window_id, event]`, cut into chunks of at
// most CHUNK_RAW_BYTES, gzipped, summarized, and split into fragments when a chunk's gzip member is
// larger than one NATS message may be.

const gzip = promisify(gzipCb)

/** Uncompressed bytes per chunk: a 25 MB body becomes a few chunks, a usual posthog-js one stays one. */
export const CHUNK_RAW_BYTES = 4 * 1024 * 1024
/** chunks smaller than this are gzipped on the event loop, larger ones on the thread pool */
const SYNC_GZIP_BYTES = 64 * 1024
/** room left in a message for the header line */
const HEADER_ROOM = 8 * 1024
/** long first URLs are cut in the header (the row keeps what the header has) */
const MAX_URL = 2048
const MAX_SESSION_ID = 200

export type SnapshotDropReason =
  | 'not_a_snapshot'
  | 'no_session_id'
  | 'no_snapshot_data'
  | 'no_timestamps'
  | 'no_event_name'
  | 'no_distinct_id'
  | 'invalid_distinct_id'
  | 'invalid_event'

export interface IngestContext {
  teamId: number
  nowMs: number
  ip: string | null
  sentAt: unknown
  partitions: number
  /** the NATS server's max payload */
  maxMessageBytes: number
  gzipLevel?: number
}

export interface OutgoingRecordingMessage {
  subject: string
  msgId: string
  payload: Buffer
  header: ChunkHeader
}

interface Group {
  sessionId: string
  windowId: string
  distinctId: string
  source: string
  library: string
  events: object[]
}

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined)

/** Groups the request's `$snapshot` items by session and window, in the order they came. */
export function groupSnapshots(
  items: unknown[],
  ctx: Pick<IngestContext, 'teamId' | 'nowMs' | 'ip' | 'sentAt'>,
): { groups: Group[]; drops: Map<SnapshotDropReason, number> } {
  const drops = new Map<SnapshotDropReason, number>()
  const drop = (r: SnapshotDropReason) => drops.set(r, (drops.get(r) ?? 0) + 1)
  const groups = new Map<string, Group>()
  for (const item of items) {
    const n = normalizeEvent(item, ctx)
    if ('drop' in n) {
      drop(n.drop === 'event_too_large' ? 'invalid_event' : n.drop)
      continue
    }
    const e = n.ok
    if (e.event !== '$snapshot') {
      drop('not_a_snapshot')
      continue
    }
    const p = e.properties
    const sessionId = str(p.$session_id)
    if (!sessionId || sessionId.length > MAX_SESSION_ID) {
      drop('no_session_id')
      continue
    }
    const raw = p.$snapshot_data
    const events = (Array.isArray(raw) ? raw : [raw]).filter(
      (x): x is object => x !== null && typeof x === 'object' && !Array.isArray(x),
    )
    if (events.length === 0) {
      drop('no_snapshot_data')
      continue
    }
    const windowId = typeof p.$window_id === 'string' ? p.$window_id : ''
    const key = `${sessionId}\u0000${windowId}`
    let g = groups.get(key)
    if (!g) {
      g = {
        sessionId,
        windowId,
        distinctId: e.distinct_id,
        source: str(p.$snapshot_source) ?? 'web',
        library: str(p.$lib) ?? '',
        events: [],
      }
      groups.set(key, g)
    }
    for (const ev of events) g.events.push(ev)
  }
  return { groups: [...groups.values()], drops }
}

interface RawChunk {
  lines: string[]
  bytes: number
  events: object[]
  /** bytes of the chunk's events as one JSON array (PostHog's `size`) */
  jsonBytes: number
}

/** The group's events as JSON lines, cut into chunks of at most `maxRaw` bytes (one line may exceed it). */
export function chunkLines(g: Group, maxRaw = CHUNK_RAW_BYTES): RawChunk[] {
  const prefix = `[${JSON.stringify(g.windowId)},`
  const prefixBytes = Buffer.byteLength(prefix)
  const chunks: RawChunk[] = []
  let cur: RawChunk = { lines: [], bytes: 0, events: [], jsonBytes: 1 }
  for (const ev of g.events) {
    const json = JSON.stringify(ev)
    const line = `${prefix}${json}]\n`
    const size = Buffer.byteLength(line)
    if (cur.lines.length > 0 && cur.bytes + size > maxRaw) {
      chunks.push(cur)
      cur = { lines: [], bytes: 0, events: [], jsonBytes: 1 }
    }
    cur.lines.push(line)
    cur.bytes += size
    cur.events.push(ev)
    // the event's own JSON, plus a comma or the closing bracket
    cur.jsonBytes += size - prefixBytes - 2 + 1
  }
  if (cur.lines.length) chunks.push(cur)
  return chunks
}

/**
 * The messages for a request's snapshots, with the reasons for what was dropped. Message ids derive
 * from the content, so a resent request is dropped by JetStream's duplicate window.
 */
export async function snapshotMessages(
  items: unknown[],
  ctx: IngestContext,
): Promise<{ messages: OutgoingRecordingMessage[]; drops: Map<SnapshotDropReason, number>; chunks: number }> {
  const { groups, drops } = groupSnapshots(items, ctx)
  const messages: OutgoingRecordingMessage[] = []
  const subject = recordingsSubject(ctx.teamId, ctx.partitions)
  const piece = Math.max(1024, ctx.maxMessageBytes - HEADER_ROOM)
  let chunks = 0
  for (const g of groups) {
    for (const c of chunkLines(g)) {
      const stats = summarizeChunk(c.events as RRWebEvent[], c.jsonBytes)
      if (!stats) {
        drops.set('no_timestamps', (drops.get('no_timestamps') ?? 0) + 1)
        continue
      }
      if (stats.first_url !== null) stats.first_url = stats.first_url.slice(0, MAX_URL)
      const raw = Buffer.from(c.lines.join(''))
      const level = ctx.gzipLevel ?? 6
      // Small chunks (posthog-js sends one every few seconds) are gzipped on the event loop with
      // zlib's smallest state: its default 256 KB allocation costs several times the compression
      // of a few KB (measured: ~7x), for the same size. Large ones go to the thread pool.
      const member =
        raw.length < SYNC_GZIP_BYTES ? gzipSync(raw, { level, memLevel: 1 }) : await gzip(raw, { level })
      const chunkId = createHash('sha1').update(member).digest('hex')
      const parts = Math.max(1, Math.ceil(member.length / piece))
      chunks++
      for (let part = 0; part < parts; part++) {
        const header: ChunkHeader = {
          v: 1,
          kind: 'chunk',
          team_id: ctx.teamId,
          session_id: g.sessionId,
          window_id: g.windowId,
          distinct_id: g.distinctId,
          chunk_id: chunkId,
          part,
          parts,
          received_at: new Date(ctx.nowMs).toISOString(),
          snapshot_source: g.source,
          snapshot_library: g.library,
          stats,
        }
        const data = member.subarray(part * piece, (part + 1) * piece)
        messages.push({
          subject,
          msgId: `rec-${ctx.teamId}-${chunkId}-${part}`,
          payload: encodeMessage(header, data),
          header,
        })
      }
    }
  }
  return { messages, drops, chunks }
}

import { z } from 'zod'

// The messages of the RECORDINGS stream. Each is a JSON header line, then (for a chunk) the bytes of
// a gzip member holding JSON lines `[window_id, rrweb event]` (PostHog's v2 blob line format), or a
// fragment of such a member when the member is larger than one NATS message may be. Fragments of one
// chunk share `chunk_id` and are numbered `part` of `parts`; the summary is on every fragment and
// counted once (part 0).

const Stats = z.object({
  first_ms: z.number(),
  last_ms: z.number(),
  click_count: z.number().int().min(0),
  keypress_count: z.number().int().min(0),
  mouse_activity_count: z.number().int().min(0),
  active_ms: z.number().int().min(0),
  console_log_count: z.number().int().min(0),
  console_warn_count: z.number().int().min(0),
  console_error_count: z.number().int().min(0),
  first_url: z.string().nullable(),
  size: z.number().int().min(0),
  event_count: z.number().int().min(0),
})

export const ChunkHeader = z.object({
  v: z.literal(1),
  kind: z.literal('chunk'),
  team_id: z.number().int(),
  session_id: z.string().min(1),
  window_id: z.string(),
  distinct_id: z.string(),
  /** sha1 (hex) of the whole gzip member: the same snapshots sent twice have the same id */
  chunk_id: z.string().regex(/^[0-9a-f]{40}$/),
  part: z.number().int().min(0),
  parts: z.number().int().min(1),
  /** when capture received the request (ISO 8601) */
  received_at: z.string(),
  snapshot_source: z.string(),
  snapshot_library: z.string(),
  stats: Stats,
})
export type ChunkHeader = z.infer<typeof ChunkHeader>

export const DeleteHeader = z.object({
  v: z.literal(1),
  kind: z.literal('delete'),
  team_id: z.number().int(),
  session_id: z.string().min(1),
  deleted_at: z.string(),
  deleted_by: z.number().int().nullable(),
})
export type DeleteHeader = z.infer<typeof DeleteHeader>

export type RecordingMessage = { header: ChunkHeader; data: Buffer } | { header: DeleteHeader }

const NL = 0x0a

/** Header line + payload, as published. */
export function encodeMessage(header: ChunkHeader | DeleteHeader, data?: Buffer): Buffer {
  const head = Buffer.from(`${JSON.stringify(header)}\n`)
  return data ? Buffer.concat([head, data]) : head
}

/** Parses a message; throws with the reason when it is not one Burrow wrote. */
export function decodeMessage(bytes: Uint8Array): RecordingMessage {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const nl = buf.indexOf(NL)
  if (nl < 0) throw new Error('no header line')
  const json: unknown = JSON.parse(buf.subarray(0, nl).toString('utf8'))
  const kind = (json as { kind?: unknown } | null)?.kind
  if (kind === 'delete') return { header: DeleteHeader.parse(json) }
  const header = ChunkHeader.parse(json)
  if (header.part >= header.parts) throw new Error('part out of range')
  return { header, data: buf.subarray(nl + 1) }
}

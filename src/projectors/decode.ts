import { z } from 'zod'
import { LANES } from '../../schema/jetstream.ts'
import { type CapturedEvent, CapturedEventSchema } from '../log/messages.ts'
import { MAX_DATETIME_MS, MIN_DATETIME_MS } from './tsv.ts'

// A chunk is checked in two steps so that one bad event does not take its 999 neighbours to the
// dead-letter stream with it: the envelope first (a bad one poisons the whole message), then each event.
const EnvelopeSchema = z.object({
  v: z.literal(1),
  team_id: z.number().int(),
  lane: z.enum(LANES),
  events: z.array(z.unknown()).min(1),
})

export interface DecodedEvent {
  offset: number
  event: CapturedEvent
  timestampMs: number
  nowMs: number
}

export interface RejectedEvent {
  offset: number
  raw: unknown
  reason: string
}

export type Decoded =
  | { ok: true; teamId: number; events: DecodedEvent[]; rejected: RejectedEvent[] }
  | { ok: false; reason: string }

export function decodeChunk(data: Uint8Array): Decoded {
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'))
  } catch (err) {
    return { ok: false, reason: `undecodable: ${(err as Error).message}` }
  }
  const env = EnvelopeSchema.safeParse(json)
  if (!env.success) return { ok: false, reason: `invalid chunk: ${summarize(env.error)}` }
  const teamId = env.data.team_id
  const events: DecodedEvent[] = []
  const rejected: RejectedEvent[] = []
  env.data.events.forEach((raw, offset) => {
    const parsed = CapturedEventSchema.safeParse(raw)
    if (!parsed.success)
      return rejected.push({ offset, raw, reason: `invalid event: ${summarize(parsed.error)}` })
    const e = parsed.data
    if (e.team_id !== teamId)
      return rejected.push({ offset, raw, reason: 'invalid event: team_id differs from chunk' })
    const timestampMs = Date.parse(e.timestamp)
    if (!Number.isFinite(timestampMs) || timestampMs < MIN_DATETIME_MS || timestampMs > MAX_DATETIME_MS) {
      return rejected.push({ offset, raw, reason: `invalid event: timestamp out of range: ${e.timestamp}` })
    }
    const nowParsed = Date.parse(e.now)
    const nowMs = Number.isFinite(nowParsed) ? nowParsed : timestampMs
    events.push({ offset, event: e, timestampMs, nowMs })
  })
  return { ok: true, teamId, events, rejected }
}

function summarize(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ')
}

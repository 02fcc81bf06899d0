import type { JetStreamClient } from '@nats-io/jetstream'
import { headers, type MsgHdrs } from '@nats-io/transport-node'
import type { BatchRows, BatchWriter, RefusedRow } from './batch.ts'
import type { EventRow as EventFields } from './rows.ts'

// Team spread (PROJECTOR_TEAM_SPREAD, docs/scaling.md): the identity stage decides every event's
// person in log order and, instead of inserting the event rows, publishes each event's row fields to
// the `RESOLVED` stream, where parallel row writers (row-writer.ts) insert them.
//
// The stream's messages: one per source message (chunk) and piece (a range of offsets in the chunk:
// PIECE_EVENTS, halved while the message is too large), on `<prefix>.<seq % partitions>`, message
// id `<source stream>:<seq>:<first offset>-<last offset>`. A republished batch decides the same
// content (the identity commit protocol), and an id names the same offsets every time, so
// JetStream's duplicate window drops the copy. A message whose source may have been projected before
// carries RECONCILE_HEADER: a copy older than the duplicate window then still never makes a row twice,
// because the row writer reconciles it against ClickHouse by (_seq, _offset).
//
// Versions (`v`), a reader must understand every version still in the stream:
// - 1: `{v: 1, pp: [person properties], events: [row fields + subject, person properties as index
//   `pi` into pp]}`.

/** The version the identity stage writes. */
export const RESOLVED_FORMAT_VERSION = 1

/** Header of a resolved message whose rows may already be in ClickHouse. */
export const RECONCILE_HEADER = 'Burrow-Reconcile'

/** One event as the row writers receive it: its row's fields and the log subject it came from. */
export type ResolvedEvent = EventFields & { subject: string }

/** Where resolved events go: `<prefix>.<partition>`. */
export interface ResolvedTarget {
  prefix: string
  partitions: number
}

/** The row partition of a source message: its events stay together, messages spread round robin. */
export const resolvedPartition = (seq: number, partitions: number) => seq % partitions

/** Events per piece, by offset (NATS refuses messages over 1 MB by default). */
const PIECE_EVENTS = 200

// Person properties are identity state: immutable, shared by a person's events (rows.ts), so their
// JSON text is made once per object, and a message holds each person's once (`pp`, events point to
// it with `pi`): the row writer then parses it once and encodes its TSV field once.
const personText = new WeakMap<object, string>()

function personJson(properties: object): string {
  let text = personText.get(properties)
  if (text === undefined) {
    text = JSON.stringify(properties)
    personText.set(properties, text)
  }
  return text
}

/** An event of a message being made: its JSON without the person properties, and those. */
interface Part {
  offset: number
  json: string
  person: Record<string, unknown>
}

function part(e: ResolvedEvent): Part {
  const json = JSON.stringify({ ...e, personProperties: undefined, personPropertiesShared: undefined })
  return { offset: e.offset, json, person: e.personProperties }
}

function messageJson(parts: Part[]): string {
  const index = new Map<object, number>()
  const texts: string[] = []
  const events = parts.map((p) => {
    let i = index.get(p.person)
    if (i === undefined) {
      i = texts.push(personJson(p.person)) - 1
      index.set(p.person, i)
    }
    return `{"pi":${i},${p.json.slice(1)}`
  })
  return `{"v":${RESOLVED_FORMAT_VERSION},"pp":[${texts.join(',')}],"events":[${events.join(',')}]}`
}

/** A resolved message read back; `undefined` for one this release cannot read. */
export function parseResolved(data: Uint8Array): ResolvedEvent[] | undefined {
  let body: unknown
  try {
    body = JSON.parse(Buffer.from(data).toString('utf8'))
  } catch {
    return undefined
  }
  // Written by the identity stage of this release or an earlier one: the version is checked, the
  // rows are what that version wrote (checking each field would cost as much as encoding the row).
  if (typeof body !== 'object' || body === null) return undefined
  const { v, pp, events } = body as { v?: unknown; pp?: unknown; events?: unknown }
  if (v !== RESOLVED_FORMAT_VERSION || !Array.isArray(pp) || !Array.isArray(events) || events.length === 0)
    return undefined
  for (const e of events as (ResolvedEvent & { pi: number })[]) {
    const person: unknown = pp[e.pi]
    if (typeof person !== 'object' || person === null) return undefined
    e.personProperties = person as Record<string, unknown>
    // one object per person in the message: its TSV field is made once (rows.ts)
    e.personPropertiesShared = true
  }
  return events as ResolvedEvent[]
}

/**
 * The identity stage's BatchWriter: person and group rows through `inner` (ClickHouse), then the
 * batch's events to the resolved stream. Resolves once JetStream stored every piece, so the caller's
 * identity commit and ack come after (a crash before them republishes the same pieces).
 */
/** One message of the resolved stream, ready to publish. */
export interface ResolvedPiece {
  subject: string
  data: string
  msgID: string
  /** its source message may have been projected before (RECONCILE_HEADER) */
  reconcile: boolean
}

/** Bytes of a resolved message above which its offset range is halved (NATS' default max_payload is 1 MiB). */
export const PIECE_BYTES = 900 * 1024

/**
 * The resolved messages of a batch's events (each with its row's fields), in the events' order: per
 * source message, the events of each range of PIECE_EVENTS offsets; a range whose message would
 * exceed `maxBytes` is halved until it fits (or holds one event). A message is named by its source
 * sequence and offset range, so one id always stands for the same events. `source` names the source
 * stream in the ids.
 */
export function resolvedPieces(
  rows: BatchRows,
  target: ResolvedTarget,
  source: string,
  maxBytes = PIECE_BYTES,
): ResolvedPiece[] {
  const out: ResolvedPiece[] = []
  const emit = (seq: number, lo: number, hi: number, parts: Part[]) => {
    const data = messageJson(parts)
    if (Buffer.byteLength(data) > maxBytes && parts.length > 1) {
      const mid = Math.floor((lo + hi) / 2)
      emit(
        seq,
        lo,
        mid,
        parts.filter((p) => p.offset <= mid),
      )
      emit(
        seq,
        mid + 1,
        hi,
        parts.filter((p) => p.offset > mid),
      )
      return
    }
    if (parts.length === 0) return
    out.push({
      subject: `${target.prefix}.${resolvedPartition(seq, target.partitions)}`,
      data,
      msgID: `${source}:${seq}:${lo}-${hi}`,
      reconcile: rows.mayRepeat?.has(seq) === true,
    })
  }
  let seq = -1
  let piece = -1
  let parts: Part[] = []
  const flush = () => {
    emit(seq, piece * PIECE_EVENTS, (piece + 1) * PIECE_EVENTS - 1, parts)
    parts = []
  }
  for (const r of rows.events) {
    if (!r.fields) throw new Error('resolved events need the rows’ fields (resolveOnly)')
    const p = Math.floor(r.offset / PIECE_EVENTS)
    if (r.seq !== seq || p !== piece) {
      flush()
      seq = r.seq
      piece = p
    }
    parts.push(part({ ...r.fields, subject: r.subject }))
  }
  flush()
  return out
}

export class ResolvedPublisher implements BatchWriter {
  constructor(
    private readonly js: JetStreamClient,
    private readonly inner: BatchWriter,
    private readonly target: ResolvedTarget,
    /** names the source stream in message ids */
    private readonly source: string,
  ) {}

  async write(rows: BatchRows): Promise<RefusedRow[]> {
    const refused = await this.inner.write({ ...rows, events: [] })
    await Promise.all(
      resolvedPieces(rows, this.target, this.source).map((p) => {
        let h: MsgHdrs | undefined
        if (p.reconcile) {
          h = headers()
          h.set(RECONCILE_HEADER, '1')
        }
        return this.js.publish(p.subject, p.data, { msgID: p.msgID, headers: h })
      }),
    )
    return refused
  }
}

import type { JetStreamClient } from '@nats-io/jetstream'
import { headers, type MsgHdrs } from '@nats-io/transport-node'
import type { BatchRows, BatchWriter, EventRow, RefusedRow } from './batch.ts'
import type { Fence } from './errors.ts'
import { groupColumns } from './identity/groups.ts'
import { storedEventProperties } from './identity/index.ts'
import type { EventRow as EventFields } from './rows.ts'
import { decodeMessage } from './steps/decode-message.ts'
import { eventFields } from './steps/encode-event-row.ts'
import { mergePersonUpdates } from './steps/merge-person-updates.ts'

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
// Versions (`v`), a reader must understand every version still in the stream; the identity stage
// writes both, by event:
// - 1 (whole rows, for events a plugin ran on: the plugin's output is in no log): `{v: 1, pp: [person
//   properties], events: [row fields + subject, person properties as index `pi` into pp]}`.
// - 2 (decisions only, for the rest): `{v: 2, seq, pp: [...], events: [{o: offset, p: person id,
//   pi, gi?: group type indexes}]}`; the row writer reads the source message `seq` of the log and
//   rebuilds each row with the projector's own steps (decode, top-level person updates,
//   storedEventProperties, eventFields). Its JSON is a fraction of the rows' (no properties).

/** The whole-rows version. */
export const RESOLVED_FORMAT_VERSION = 1
/** The decisions-only version. */
export const RESOLVED_DECISIONS_VERSION = 2

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
  /** decisions only (version 2) */
  decision: boolean
}

function part(r: EventRow & { fields: EventFields }): Part {
  const f = r.fields
  const json = r.recompute
    ? JSON.stringify({ o: f.offset, p: f.personId, gi: r.recompute.groupIndexes })
    : JSON.stringify({
        ...f,
        subject: r.subject,
        personProperties: undefined,
        personPropertiesShared: undefined,
      })
  return { offset: f.offset, json, person: f.personProperties, decision: r.recompute !== undefined }
}

function messageJson(seq: number, parts: Part[]): string {
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
  // a source message's events are one team's: all decisions or all whole rows
  const head = parts.every((p) => p.decision)
    ? `"v":${RESOLVED_DECISIONS_VERSION},"seq":${seq}`
    : `"v":${RESOLVED_FORMAT_VERSION}`
  return `{${head},"pp":[${texts.join(',')}],"events":[${events.join(',')}]}`
}

/** One event of a decisions-only message, its person properties resolved. */
export interface ResolvedDecision {
  o: number
  p: string
  gi?: Record<string, number | null>
  personProperties: Record<string, unknown>
}

/** A resolved message read back: whole rows, or decisions on the events of source message `seq`. */
export type ResolvedMessage =
  { kind: 'rows'; events: ResolvedEvent[] } | { kind: 'decisions'; seq: number; events: ResolvedDecision[] }

/** A resolved message read back; `undefined` for one this release cannot read. */
export function parseResolved(data: Uint8Array): ResolvedMessage | undefined {
  let body: unknown
  try {
    body = JSON.parse(Buffer.from(data).toString('utf8'))
  } catch {
    return undefined
  }
  // Written by the identity stage of this release or an earlier one: the version is checked, the
  // rows are what that version wrote (checking each field would cost as much as encoding the row).
  if (typeof body !== 'object' || body === null) return undefined
  const { v, seq, pp, events } = body as { v?: unknown; seq?: unknown; pp?: unknown; events?: unknown }
  const known = v === RESOLVED_FORMAT_VERSION || (v === RESOLVED_DECISIONS_VERSION && typeof seq === 'number')
  if (!known || !Array.isArray(pp) || !Array.isArray(events) || events.length === 0) return undefined
  for (const e of events as { pi: number; personProperties: unknown; personPropertiesShared?: boolean }[]) {
    const person: unknown = pp[e.pi]
    if (typeof person !== 'object' || person === null) return undefined
    e.personProperties = person
    // one object per person in the message: its TSV field is made once (rows.ts)
    e.personPropertiesShared = true
  }
  return v === RESOLVED_FORMAT_VERSION
    ? { kind: 'rows', events: events as ResolvedEvent[] }
    : { kind: 'decisions', seq: seq as number, events: events as ResolvedDecision[] }
}

/**
 * The rows of a decisions-only message, rebuilt from its source message (`source`, read from the log)
 * with the projector's own steps; a string says why they cannot be (the source is not what the
 * identity stage read).
 */
export function rebuildRows(
  decisions: ResolvedDecision[],
  source: { seq: number; subject: string; data: Uint8Array },
): ResolvedEvent[] | string {
  const chunk = decodeMessage({ ...source, redelivered: false })
  if (chunk.type !== 'ok') return `source message ${source.seq} unreadable`
  const byOffset = new Map(chunk.value.events.map((d) => [d.offset, d]))
  const out: ResolvedEvent[] = []
  for (const r of decisions) {
    const decoded = byOffset.get(r.o)
    const merged = decoded && mergePersonUpdates(decoded.event)
    if (!decoded || merged?.type !== 'ok') return `source message ${source.seq} has no event ${r.o}`
    const e = merged.value
    const eventProperties = storedEventProperties(
      {
        uuid: e.uuid,
        event: e.event,
        distinct_id: e.distinct_id,
        properties: e.properties,
        timestamp_ms: decoded.timestampMs,
      },
      r.gi,
    )
    if (!eventProperties) return `the person rules drop event ${r.o} of source message ${source.seq}`
    const fields = eventFields(
      source.seq,
      chunk.value.teamId,
      { ...decoded, event: e },
      {
        personId: r.p,
        personProperties: r.personProperties,
        personPropertiesShared: true,
        groupColumns: groupColumns(eventProperties),
        eventProperties,
      },
    )
    out.push({ ...fields, subject: source.subject })
  }
  return out
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
    const data = messageJson(seq, parts)
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
    parts.push(part(r as EventRow & { fields: EventFields }))
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
    /** leases: called again before publishing (the identity rows' insert may have been long) */
    private readonly fence?: Fence,
  ) {}

  async write(rows: BatchRows): Promise<RefusedRow[]> {
    const refused = await this.inner.write({ ...rows, events: [] })
    await this.fence?.()
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

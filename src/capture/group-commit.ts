import type { Lane } from '../../schema/jetstream.ts'
import { logMessage, messageIdOf } from '../jetstream/messages.ts'

// Group commit for small requests (docs/capture.md, "Group commit"). One JetStream message and one
// ack per request costs a publish, an ack and a socket write per event when SDKs send one event per
// request; requests arriving together for the same team, lane and partition are instead written as
// one log message of the existing format and answered together when JetStream acks it. Nothing is
// answered before its message is acked, and a failed publish fails every request in it.
//
// When a request waits: the group is sent on the next turn of the event loop (so requests parsed in
// the same turn share it) unless `maxInFlight` messages of that key are already awaiting acks; then
// it goes when one of them is acked, or after `maxWaitMs` at the latest. A request therefore never
// waits for company longer than `maxWaitMs` plus one loop turn.

/** One serialized event ready for the log. */
export interface SerializedEvent {
  uuid: string
  json: string
  /** UTF-8 bytes of `json` plus its separator */
  size: number
}

export interface GroupCommitOptions {
  /** events in one message at most (CAPTURE_CHUNK_EVENTS) */
  maxEvents: number
  /** bytes of the events (their lines) in one message at most (below the server's max payload) */
  maxBytes: number
  /** messages of one key awaiting their ack before new requests wait for one of them */
  maxInFlight: number
  /** the longest a request waits for company once its key is at `maxInFlight` */
  maxWaitMs: number
  /**
   * How long a message that got no ack is remembered for resends of its requests: less than the
   * stream's duplicate window, within which JetStream drops a message id it already stored.
   */
  unackedTtlMs: number
}

/** Sends one log message; resolves with JetStream's ack (duplicate: dropped by the dedup window). */
export type SendMessage = (
  subject: string,
  payload: Uint8Array,
  msgId: string,
) => Promise<{ duplicate: boolean }>

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

interface Group {
  key: string
  subject: string
  teamId: number
  lane: Lane
  parts: string[]
  uuids: string[]
  bytes: number
  waiters: Waiter[]
  timer?: NodeJS.Timeout
  scheduled: boolean
}

/** A group message whose publish failed: it may be stored even so (the ack may have been lost). */
interface Unacked {
  teamId: number
  subject: string
  payload: Uint8Array
  msgId: string
  uuids: ReadonlySet<string>
  expires: number
  resending?: Promise<unknown>
}

/** Events of unacknowledged messages remembered at most (the oldest are forgotten first). */
const MAX_UNACKED_EVENTS = 200_000

// A client that got no 200 sends the same request again, with the same event uuids. Grouped anew,
// its events would go into a message with another id, and if the first message was stored after
// all (its ack lost when a stream leader died) they would be stored twice. So the events of a
// message that failed are remembered with that message: a resend whose events all belong to it
// sends that very message again, same bytes and id. JetStream then stores it once, or answers that
// it is a duplicate; either way the events are in the log exactly once and the request gets its 200.
export class GroupCommit {
  private readonly open = new Map<string, Group>()
  private readonly inFlight = new Map<string, number>()
  /** event uuid -> the unacknowledged message holding it, oldest first */
  private readonly unacked = new Map<string, Unacked>()
  /** messages sent and requests answered, for tests and metrics */
  readonly stats = { messages: 0, requests: 0 }

  constructor(
    private readonly send: SendMessage,
    private readonly opts: GroupCommitOptions,
  ) {}

  /**
   * Resolves once every event of `events` (one request's, of one team, lane and partition) is in an
   * acked log message; rejects if the message holding them failed. A request's events for one key
   * always go in one message, so they are stored all or none.
   */
  add(teamId: number, lane: Lane, subject: string, events: readonly SerializedEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve()
    const earlier = this.unackedHolding(teamId, subject, events)
    if (earlier) return this.resend(earlier)
    const key = `${teamId}\u0000${subject}`
    let bytes = 0
    for (const e of events) bytes += e.size
    let g = this.open.get(key)
    // A request never spans two messages: if it does not fit the open group, that group goes now.
    if (g && (g.uuids.length + events.length > this.opts.maxEvents || g.bytes + bytes > this.opts.maxBytes)) {
      this.flush(g)
      g = undefined
    }
    if (!g) {
      g = { key, subject, teamId, lane, parts: [], uuids: [], bytes: 0, waiters: [], scheduled: false }
      this.open.set(key, g)
    }
    for (const e of events) {
      g.parts.push(e.json)
      g.uuids.push(e.uuid)
    }
    g.bytes += bytes
    this.stats.requests++
    const done = new Promise<void>((resolve, reject) => g.waiters.push({ resolve, reject }))
    this.schedule(g)
    return done
  }

  private schedule(g: Group): void {
    if ((this.inFlight.get(g.key) ?? 0) < this.opts.maxInFlight) {
      if (!g.scheduled) {
        g.scheduled = true
        setImmediate(() => this.flush(g))
      }
    } else if (!g.timer) {
      // Waits for an in-flight message's ack (see `sent`), bounded by maxWaitMs.
      g.timer = setTimeout(() => this.flush(g), this.opts.maxWaitMs)
    }
  }

  private flush(g: Group): void {
    if (this.open.get(g.key) !== g) return // already sent
    this.open.delete(g.key)
    if (g.timer) clearTimeout(g.timer)
    this.inFlight.set(g.key, (this.inFlight.get(g.key) ?? 0) + 1)
    this.stats.messages++
    const payload = logMessage(g.teamId, g.lane, g.parts, g.bytes)
    const msgId = messageIdOf(g.teamId, g.uuids)
    let sent: Promise<unknown>
    try {
      sent = this.send(g.subject, payload, msgId)
    } catch (err) {
      sent = Promise.reject(err)
    }
    sent.then(
      () => {
        for (const w of g.waiters) w.resolve()
        this.sent(g.key)
      },
      (err: unknown) => {
        this.remember({
          teamId: g.teamId,
          subject: g.subject,
          payload,
          msgId,
          uuids: new Set(g.uuids),
        })
        for (const w of g.waiters) w.reject(err)
        this.sent(g.key)
      },
    )
  }

  /** The team's unacknowledged message holding every one of `events`, if there is one. */
  private unackedHolding(
    teamId: number,
    subject: string,
    events: readonly SerializedEvent[],
  ): Unacked | undefined {
    if (this.unacked.size === 0) return undefined
    const m = this.unacked.get(events[0]!.uuid)
    // another team's uuids never stand for this request's events
    if (!m || m.teamId !== teamId || m.subject !== subject || m.expires < Date.now()) return undefined
    return events.every((e) => m.uuids.has(e.uuid)) ? m : undefined
  }

  /** Sends an unacknowledged message again (once for concurrent resends); rejects if it fails again. */
  private resend(m: Unacked): Promise<void> {
    this.stats.requests++
    m.resending ??= (async () => {
      try {
        this.stats.messages++
        await this.send(m.subject, m.payload, m.msgId)
      } finally {
        m.resending = undefined
      }
    })()
    return m.resending.then(() => undefined)
  }

  private remember(failed: Omit<Unacked, 'expires'>): void {
    const now = Date.now()
    const m: Unacked = { ...failed, expires: now + this.opts.unackedTtlMs }
    for (const uuid of m.uuids) {
      this.unacked.delete(uuid) // re-inserted last: the map stays oldest first
      this.unacked.set(uuid, m)
    }
    for (const [uuid, old] of this.unacked) {
      if (old.expires >= now && this.unacked.size <= MAX_UNACKED_EVENTS) break
      this.unacked.delete(uuid)
    }
  }

  private sent(key: string): void {
    const n = (this.inFlight.get(key) ?? 1) - 1
    if (n === 0) this.inFlight.delete(key)
    else this.inFlight.set(key, n)
    // The requests that waited for this ack go now.
    const waiting = this.open.get(key)
    if (waiting && !waiting.scheduled) {
      waiting.scheduled = true
      if (waiting.timer) clearTimeout(waiting.timer)
      waiting.timer = undefined
      setImmediate(() => this.flush(waiting))
    }
  }
}

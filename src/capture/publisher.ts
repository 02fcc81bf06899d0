import { type JetStreamClient, jetstream } from '@nats-io/jetstream'
import { wellFormedJson } from './well-formed.ts'
import { EVENTS_DUPLICATE_WINDOW_SECONDS, eventsSubject, type Lane } from '../../schema/jetstream.ts'
import { Unavailable } from '../http/errors.ts'
import {
  type CapturedEvent,
  type EventChunk,
  LOG_FORMAT_VERSION,
  logMessage,
  messageIdOf,
  partitionOf,
} from '../jetstream/messages.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { GroupCommit, type SerializedEvent } from './group-commit.ts'

// Resending a message the log did not acknowledge: the pause between attempts, and the shortest
// wait for one attempt's ack.
const RETRY_PAUSE_MS = 100
const MIN_ATTEMPT_MS = 500

export interface PublishOptions {
  partitions: number
  chunkEvents: number
  ackTimeoutMs: number
  /** group commit (src/capture/group-commit.ts): messages of one key awaiting acks before requests wait */
  groupMaxInFlight?: number
  /** group commit: the longest a small request waits for company */
  groupMaxWaitMs?: number
}

export interface OutgoingChunk {
  subject: string
  chunk: EventChunk
  payload: Uint8Array
  msgId: string
}

/**
 * Publishes a request's events as chunks (one JetStream message per lane, partition and up to
 * `chunkEvents` events, under the server's max payload) and resolves only once JetStream acked
 * every chunk. Any failure rejects with Unavailable: the client must not get a 200.
 */
export class EventPublisher {
  private readonly js: JetStreamClient
  private readonly groups: GroupCommit
  private readonly partitionCache = new Map<number, number>()
  /** bytes of events one group message may hold (a request's events over it are chunked instead) */
  private readonly groupMaxBytes: number

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: PublishOptions,
  ) {
    this.js = jetstream(nc)
    this.groupMaxBytes = this.maxMessageBytes - 256
    this.groups = new GroupCommit(
      async (subject, payload, msgID) => {
        const ack = await this.publishUntilAcked(subject, payload, msgID)
        return { duplicate: ack.duplicate }
      },
      {
        maxEvents: opts.chunkEvents,
        maxBytes: this.groupMaxBytes,
        // 4, not 2: with 2, 32 clients in flight waited on acks with a core idle (9.0K against 13.8K
        // single events/s, p99 19 against 11.5 ms, the same CPU per event; docs/performance.md)
        maxInFlight: opts.groupMaxInFlight ?? 4,
        maxWaitMs: opts.groupMaxWaitMs ?? 2,
        // 20 s less than the stream's duplicate window, for the resend's own round trips
        unackedTtlMs: (EVENTS_DUPLICATE_WINDOW_SECONDS - 20) * 1000,
      },
    )
  }

  /** Messages written and requests answered by group commit so far. */
  get groupStats(): Readonly<{ messages: number; requests: number }> {
    return this.groups.stats
  }

  private partition(teamId: number): number {
    let p = this.partitionCache.get(teamId)
    if (p === undefined) {
      p = partitionOf(teamId, this.opts.partitions)
      if (this.partitionCache.size > 100_000) this.partitionCache.clear()
      this.partitionCache.set(teamId, p)
    }
    return p
  }

  /** Events serialized once and grouped by lane (a team's events share one partition). */
  private serialize(teamId: number, events: { lane: Lane; event: CapturedEvent }[]) {
    const byLane = new Map<Lane, { e: CapturedEvent; s: SerializedEvent }[]>()
    const tooLarge: CapturedEvent[] = []
    const max = this.maxMessageBytes
    for (const { lane, event } of events) {
      // lone surrogates become U+FFFD, as PostHog's capture does (well-formed.ts)
      const json = wellFormedJson(JSON.stringify(event))
      const size = Buffer.byteLength(json) + 1
      if (size > max) {
        tooLarge.push(event)
        continue
      }
      let g = byLane.get(lane)
      if (!g) byLane.set(lane, (g = []))
      g.push({ e: event, s: { uuid: event.uuid, json, size } })
    }
    return { byLane, tooLarge, partition: this.partition(teamId) }
  }

  /**
   * Writes a small request's events with those of concurrent requests of the same team and lane
   * (group commit) and resolves once JetStream acked the messages holding them. Rejects with
   * Unavailable if any failed: the client must not get a 200. Returns the events too large to store.
   */
  async commitGrouped(
    teamId: number,
    events: { lane: Lane; event: CapturedEvent }[],
  ): Promise<{ tooLarge: CapturedEvent[] }> {
    if (this.nc.isClosed()) throw new Unavailable('The event log is unavailable.')
    const { byLane, tooLarge, partition } = this.serialize(teamId, events)
    const results = await Promise.allSettled(
      [...byLane].map(([lane, items]) => {
        // A few events can still be more than one message holds (each under the limit, together
        // over it): those are written in chunks as a large request's are. One group message of
        // them was refused by NATS (max_payload), a 503 the SDK would resend forever.
        let bytes = 0
        for (const i of items) bytes += i.s.size
        if (bytes > this.groupMaxBytes) {
          return this.publish(
            this.chunk(
              teamId,
              items.map((i) => ({ lane, event: i.e })),
            ).chunks,
          )
        }
        return this.groups.add(
          teamId,
          lane,
          eventsSubject(lane, partition),
          items.map((i) => i.s),
        )
      }),
    )
    const failed = results.find((r) => r.status === 'rejected')
    if (failed) {
      throw new Unavailable(
        `The event log did not acknowledge the events: ${(failed.reason as Error)?.message ?? 'unknown error'}`,
      )
    }
    return { tooLarge }
  }

  /**
   * Publishes one message and resolves with JetStream's ack. While the log does not answer (a
   * stream leader being elected, NATS reconnecting) the same message is sent again with the same id
   * until `ackTimeoutMs` have passed; then it rejects. Why: an attempt whose ack was lost may be
   * stored already, and only a resend under its id is dropped as a duplicate. The client's own
   * resend after a 503 may be grouped with other requests (group commit), get another id and be
   * stored twice.
   */
  private async publishUntilAcked(subject: string, payload: Uint8Array, msgID: string) {
    const deadline = Date.now() + this.opts.ackTimeoutMs
    // a few attempts fit in the budget even when one waits for an ack that never comes
    const attemptMs = Math.max(MIN_ATTEMPT_MS, Math.floor(this.opts.ackTimeoutMs / 3))
    for (;;) {
      const left = deadline - Date.now()
      try {
        return await this.js.publish(subject, payload, {
          msgID,
          timeout: Math.max(1, Math.min(attemptMs, left)),
        })
      } catch (err) {
        if (this.nc.isClosed() || deadline - Date.now() <= RETRY_PAUSE_MS) throw err
        await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS))
      }
    }
  }

  /** Bytes one message may hold, leaving room for headers. */
  get maxMessageBytes(): number {
    return (this.nc.info?.max_payload ?? 1024 * 1024) - 4096
  }

  /** Events grouped into chunks; an event that alone exceeds the payload limit is returned apart. */
  chunk(teamId: number, events: { lane: Lane; event: CapturedEvent }[]) {
    const { byLane, tooLarge, partition } = this.serialize(teamId, events)
    const max = this.maxMessageBytes
    const chunks: OutgoingChunk[] = []
    for (const [lane, items] of byLane) {
      let current: CapturedEvent[] = []
      let parts: string[] = []
      let bytes = 0
      const flush = () => {
        if (current.length === 0) return
        // Each event was serialized once above; the message is assembled from those strings.
        chunks.push({
          subject: eventsSubject(lane, partition),
          chunk: { v: LOG_FORMAT_VERSION, team_id: teamId, lane, events: current },
          payload: logMessage(teamId, lane, parts, bytes),
          msgId: messageIdOf(
            teamId,
            current.map((e) => e.uuid),
          ),
        })
        current = []
        parts = []
        bytes = 0
      }
      for (const { e, s } of items) {
        if (current.length >= this.opts.chunkEvents || bytes + s.size > max - 256) flush()
        current.push(e)
        parts.push(s.json)
        bytes += s.size
      }
      flush()
    }
    return { chunks, tooLarge }
  }

  async publish(chunks: OutgoingChunk[]): Promise<{ duplicates: number }> {
    if (this.nc.isClosed()) throw new Unavailable('The event log is unavailable.')
    const results = await Promise.allSettled(
      chunks.map(({ subject, payload, msgId }) => this.publishUntilAcked(subject, payload, msgId)),
    )
    const failed = results.find((r) => r.status === 'rejected')
    if (failed) {
      throw new Unavailable(
        `The event log did not acknowledge the events: ${(failed.reason as Error)?.message ?? 'unknown error'}`,
      )
    }
    return {
      duplicates: results.filter((r) => r.status === 'fulfilled' && r.value.duplicate).length,
    }
  }
}

import { type JetStreamClient, jetstream } from '@nats-io/jetstream'
import { eventsSubject, type Lane } from '../../schema/jetstream.ts'
import { Unavailable } from '../http/errors.ts'
import {
  type CapturedEvent,
  type EventChunk,
  LOG_FORMAT_VERSION,
  messageIdOf,
  partitionOf,
} from '../jetstream/messages.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { chunkPayload, GroupCommit, type SerializedEvent } from './group-commit.ts'

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

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: PublishOptions,
  ) {
    this.js = jetstream(nc)
    this.groups = new GroupCommit(
      async (subject, payload, msgID) => {
        const ack = await this.js.publish(subject, payload, { msgID, timeout: opts.ackTimeoutMs })
        return { duplicate: ack.duplicate }
      },
      {
        maxEvents: opts.chunkEvents,
        maxBytes: this.maxMessageBytes - 256,
        maxInFlight: opts.groupMaxInFlight ?? 2,
        maxWaitMs: opts.groupMaxWaitMs ?? 2,
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
      const json = JSON.stringify(event)
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
      [...byLane].map(([lane, items]) =>
        this.groups.add(
          teamId,
          lane,
          eventsSubject(lane, partition),
          items.map((i) => i.s),
        ),
      ),
    )
    const failed = results.find((r) => r.status === 'rejected')
    if (failed) {
      throw new Unavailable(
        `The event log did not acknowledge the events: ${(failed.reason as Error)?.message ?? 'unknown error'}`,
      )
    }
    return { tooLarge }
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
          payload: chunkPayload(teamId, lane, parts),
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
      chunks.map(({ subject, payload, msgId }) =>
        this.js.publish(subject, payload, {
          msgID: msgId,
          timeout: this.opts.ackTimeoutMs,
        }),
      ),
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

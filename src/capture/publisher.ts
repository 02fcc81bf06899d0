import { type JetStreamClient, jetstream } from '@nats-io/jetstream'
import { eventsSubject, type Lane } from '../../schema/jetstream.ts'
import { Unavailable } from '../http/errors.ts'
import {
  type CapturedEvent,
  chunkMessageId,
  type EventChunk,
  LOG_FORMAT_VERSION,
  partitionOf,
} from '../jetstream/messages.ts'
import type { NatsConnection } from '../jetstream/connection.ts'

export interface PublishOptions {
  partitions: number
  chunkEvents: number
  ackTimeoutMs: number
}

const enc = new TextEncoder()

export interface OutgoingChunk {
  subject: string
  chunk: EventChunk
  payload: Uint8Array
}

/**
 * Publishes a request's events as chunks (one JetStream message per lane, partition and up to
 * `chunkEvents` events, under the server's max payload) and resolves only once JetStream acked
 * every chunk. Any failure rejects with Unavailable: the client must not get a 200.
 */
export class EventPublisher {
  private readonly js: JetStreamClient

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: PublishOptions,
  ) {
    this.js = jetstream(nc)
  }

  /** Bytes one message may hold, leaving room for headers. */
  get maxMessageBytes(): number {
    return (this.nc.info?.max_payload ?? 1024 * 1024) - 4096
  }

  /** Events grouped into chunks; an event that alone exceeds the payload limit is returned apart. */
  chunk(teamId: number, events: { lane: Lane; event: CapturedEvent }[]) {
    const groups = new Map<
      string,
      { lane: Lane; partition: number; items: { e: CapturedEvent; json: string; size: number }[] }
    >()
    const tooLarge: CapturedEvent[] = []
    const max = this.maxMessageBytes
    for (const { lane, event } of events) {
      const json = JSON.stringify(event)
      const size = Buffer.byteLength(json) + 1
      if (size > max) {
        tooLarge.push(event)
        continue
      }
      const partition = partitionOf(teamId, this.opts.partitions)
      const key = `${lane}.${partition}`
      let g = groups.get(key)
      if (!g) {
        g = { lane, partition, items: [] }
        groups.set(key, g)
      }
      g.items.push({ e: event, json, size })
    }
    const chunks: OutgoingChunk[] = []
    for (const g of groups.values()) {
      let current: CapturedEvent[] = []
      let parts: string[] = []
      let bytes = 0
      const flush = () => {
        if (current.length === 0) return
        // Each event was serialized once above; the message is assembled from those strings.
        const payload = `{"v":${LOG_FORMAT_VERSION},"team_id":${teamId},"lane":"${g.lane}","events":[${parts.join(',')}]}`
        chunks.push({
          subject: eventsSubject(g.lane, g.partition),
          chunk: { v: LOG_FORMAT_VERSION, team_id: teamId, lane: g.lane, events: current },
          payload: enc.encode(payload),
        })
        current = []
        parts = []
        bytes = 0
      }
      for (const { e, json, size } of g.items) {
        if (current.length >= this.opts.chunkEvents || bytes + size > max - 256) flush()
        current.push(e)
        parts.push(json)
        bytes += size
      }
      flush()
    }
    return { chunks, tooLarge }
  }

  async publish(chunks: OutgoingChunk[]): Promise<{ duplicates: number }> {
    if (this.nc.isClosed()) throw new Unavailable('The event log is unavailable.')
    const results = await Promise.allSettled(
      chunks.map(({ subject, chunk, payload }) =>
        this.js.publish(subject, payload, {
          msgID: chunkMessageId(chunk),
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

import type { KV, KvWatchEntry } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { decodeDoc, isLive, readDoc } from '../jetstream/kv-document.ts'
import { type QueryStatus, QueryStatusSchema } from './schema.ts'

const enc = new TextEncoder()

/** KV values are limited by the server's max payload; larger results are left out of the status. */
const MAX_STATUS_BYTES = 900 * 1024

export const STATUS_TTL_SECONDS = BUCKETS.queryStatus.ttlSeconds

/**
 * Async query status in a JetStream KV bucket (with the bucket's TTL as expiry), so every api
 * process can answer GET /query/{id}/ and stream its changes.
 */
export class QueryStatusStore {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection) {
    return new QueryStatusStore(await bucket(nc, BUCKETS.queryStatus))
  }

  private key(teamId: number, id: string) {
    return `q.${teamId}.${id}`
  }

  async get(teamId: number, id: string): Promise<QueryStatus | undefined> {
    return (await readDoc(this.kv, this.key(teamId, id), QueryStatusSchema))?.doc
  }

  /** Stores `status`; `resultBytes` (its results' JSON size, when known) skips serializing results too large to keep. */
  async put(status: QueryStatus, resultBytes?: number): Promise<void> {
    let body = (resultBytes ?? 0) > MAX_STATUS_BYTES ? '' : JSON.stringify(status)
    if (body.length === 0 || body.length > MAX_STATUS_BYTES) {
      body = JSON.stringify({
        ...status,
        results: null,
        error: true,
        error_message:
          'The result is too large to keep in the query status; run the query with refresh "blocking".',
      })
    }
    await this.kv.put(this.key(status.team_id, status.id), enc.encode(body))
  }

  /** Each stored version of one status, starting with the current one, until `signal` aborts. */
  async *watch(teamId: number, id: string, signal: AbortSignal): AsyncGenerator<QueryStatus> {
    const iter = await this.kv.watch({ key: this.key(teamId, id) })
    const stop = () => iter.stop()
    signal.addEventListener('abort', stop, { once: true })
    try {
      for await (const e of iter as AsyncIterable<KvWatchEntry>) {
        if (isLive(e)) yield decodeDoc(e, QueryStatusSchema)
      }
    } finally {
      signal.removeEventListener('abort', stop)
      iter.stop()
    }
  }
}

export function newStatus(teamId: number, id: string, now: Date): QueryStatus {
  return {
    id,
    team_id: teamId,
    query_async: true,
    complete: false,
    error: false,
    error_message: null,
    dashboard_id: null,
    insight_id: null,
    labels: null,
    task_id: null,
    start_time: now.toISOString(),
    pickup_time: null,
    end_time: null,
    expiration_time: new Date(now.getTime() + STATUS_TTL_SECONDS * 1000).toISOString(),
    query_progress: null,
    results: null,
  }
}

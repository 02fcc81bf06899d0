import { createHash } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { z } from 'zod'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { readDoc } from '../jetstream/kv-document.ts'

const enc = new TextEncoder()
const MAX_ENTRY_BYTES = 900 * 1024

/** Key order does not change a query's meaning, so it does not change its cache key. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical)
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    )
  }
  return v
}

export function cacheKey(teamId: number, query: unknown, modifiers: unknown): string {
  const h = createHash('sha256')
    .update(JSON.stringify(canonical({ query, modifiers })))
    .digest('hex')
  return `cache_${teamId}_${h.slice(0, 40)}`
}

const CachedResultDoc = z.object({ response: z.record(z.string(), z.unknown()), last_refresh: z.string() })
export type CachedResult = z.infer<typeof CachedResultDoc>

/** Results cache in a JetStream KV bucket (24 h expiry); entries too large for a KV value are not kept. */
export class ResultCache {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection) {
    return new ResultCache(await bucket(nc, BUCKETS.queryCache))
  }

  async get(key: string): Promise<CachedResult | undefined> {
    return (await readDoc(this.kv, key.replace(/_/g, '.'), CachedResultDoc))?.doc
  }

  async put(key: string, entry: CachedResult): Promise<boolean> {
    const body = JSON.stringify(entry)
    if (body.length > MAX_ENTRY_BYTES) return false
    await this.kv.put(key.replace(/_/g, '.'), enc.encode(body))
    return true
  }
}

/** How old a cached result may be for each refresh mode to use it (docs/query.md). */
export const FRESHNESS_SECONDS = {
  /** "very fresh": blocking and async return the cache instead of calculating */
  veryFresh: 60,
  /** "somewhat fresh": lazy_async returns the cache instead of calculating */
  somewhatFresh: 15 * 60,
}

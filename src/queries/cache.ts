import { createHash } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { z } from 'zod'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { readDoc } from '../jetstream/kv-document.ts'

const enc = new TextEncoder()
/** The largest results-cache entry kept (a KV value's limit). */
export const MAX_ENTRY_BYTES = 900 * 1024

/** Key order does not change a query's meaning, so it does not change its cache key. */
export function canonical(v: unknown): unknown {
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

const CachedResultDoc = z.object({
  response: z.record(z.string(), z.unknown()),
  last_refresh: z.string(),
  /** the SQL that produced the response and the data's fingerprint before it ran (revalidation) */
  sql: z.string().optional(),
  fingerprint: z.string().optional(),
})
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

// ---- revalidation -------------------------------------------------------------------------------
//
// A result older than its refresh mode allows is still the answer when the SQL that produced it is
// the same (relative dates resolve to literals, so a new day gives new SQL) and no row of the
// database changed since it ran, read from system.parts: every insert (late events included) takes
// a new block number, so the sum over partitions of their highest block number grows; mutations,
// deletes and replays change the rows or the parts too. Merges keep block numbers and rows but may
// change the rest, which costs a recompute, never a stale answer. It is global to the database, so
// a database taking writes all the time rarely revalidates; a dashboard over data that stopped
// changing (closed days of a quiet project, a bench) is answered from the cache after the minute of
// `veryFresh`, in the time of one system.parts read.

/** One cheap read of the data's state: system.parts only (no table is read). */
export const FINGERPRINT_SQL =
  "SELECT concat(toString(sum(b)), '/', toString(sum(r)), '/', toString(count()), '/', toString(max(m)))" +
  ' AS f FROM (SELECT max(max_block_number) AS b, sum(rows) AS r, max(modification_time) AS m' +
  ' FROM system.parts WHERE database = currentDatabase() AND active GROUP BY table, partition_id)'

/** SQL whose answer depends on when it runs (now(), today(), random numbers) is never revalidated. */
const TIME_OR_CHANCE = /\b(now\w*|today|yesterday|rand\w*|generateUUID\w*|uptime)\s*\(/i

export function revalidatable(sql: string): boolean {
  return !TIME_OR_CHANCE.test(sql)
}

/**
 * The data's fingerprint, read through `read` (FINGERPRINT_SQL) at most once per `reuseMs` where
 * that is safe:
 * - `forCheck()` is for deciding whether a stale entry is still the answer: it always reads, so a
 *   write finished before the request is always seen;
 * - `forStore()` is for the entry a computed result is stored with, read before the query runs:
 *   any fingerprint read before then will do, because an older one can only make a later check
 *   differ (a recompute), never match data it does not describe (every insert raises a block
 *   number). It reuses the last read (or the one in flight) for `reuseMs`, so a burst of requests
 *   (a dashboard, a bench loop) costs one system.parts read instead of one each.
 * A read that fails gives undefined (no revalidation) and is not reused.
 */
export class Fingerprints {
  private last: { at: number; value: Promise<string | undefined> } | undefined

  constructor(
    private readonly read: () => Promise<string | undefined>,
    private readonly reuseMs = 5_000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  forCheck(): Promise<string | undefined> {
    return this.start()
  }

  forStore(): Promise<string | undefined> {
    if (this.last && this.now() - this.last.at <= this.reuseMs) return this.last.value
    return this.start()
  }

  private start(): Promise<string | undefined> {
    const entry = {
      at: this.now(),
      value: this.read().catch(() => undefined),
    }
    this.last = entry
    void entry.value.then((v) => {
      if (v === undefined && this.last === entry) this.last = undefined
    })
    return entry.value
  }
}

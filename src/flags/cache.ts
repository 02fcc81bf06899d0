import type { KV, KvWatchEntry } from '@nats-io/kv'
import type { Logger } from '../observability/logger.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { decodeDoc, isLive } from '../jetstream/kv-document.ts'
import { watchBucket } from '../jetstream/kv-watch.ts'
import { type BackoffPolicy, retry, sleep } from '../retry/backoff.ts'
import { FlagStore } from './definition-store.ts'
import { parseFlagEntryKey, type StoredFlag, storedFlagSchema } from './stored-definition.ts'

const RESTART_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 }

/**
 * Every project's flag definitions, held in memory and kept current by a watch on the flags
 * bucket: JetStream pushes each change as it is written, so evaluation never reads the bucket
 * and a change reaches every process within milliseconds (no polling).
 */
export class FlagCache {
  private readonly byTeam = new Map<number, Map<number, StoredFlag>>()
  private readonly sorted = new Map<number, StoredFlag[]>()
  private readonly listeners = new Set<(teamId: number) => void>()
  private watcher: { stop(): void } | null = null
  private stopped = false
  /** Revisions applied so far; tests and metrics use it to tell the cache has moved. */
  applied = 0

  private constructor(
    private readonly kv: KV,
    private readonly log: Logger,
  ) {}

  /** Starts watching and resolves once the bucket's current contents are loaded. */
  static async start(kv: KV, log: Logger): Promise<FlagCache> {
    const cache = new FlagCache(kv, log)
    await cache.watch()
    return cache
  }

  /** The project's flags (deleted and inactive ones too), ordered by id. */
  flags(teamId: number): StoredFlag[] {
    const memo = this.sorted.get(teamId)
    if (memo) return memo
    const list = [...(this.byTeam.get(teamId)?.values() ?? [])].sort((a, b) => a.id - b.id)
    this.sorted.set(teamId, list)
    return list
  }

  /** Calls `fn(teamId)` after each applied change. Returns the unsubscribe function. */
  onChange(fn: (teamId: number) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  stop(): void {
    this.stopped = true
    this.watcher?.stop()
  }

  private apply(entry: KvWatchEntry): void {
    const where = parseFlagEntryKey(entry.key)
    if (!where) return
    let team = this.byTeam.get(where.teamId)
    if (isLive(entry)) {
      try {
        const flag = decodeDoc(entry, storedFlagSchema)
        if (!team) this.byTeam.set(where.teamId, (team = new Map()))
        team.set(where.id, flag)
      } catch (err) {
        // Keep the last good definition rather than dropping the flag for everyone.
        this.log.warn({ err, key: entry.key }, 'unreadable feature flag entry skipped')
        return
      }
    } else {
      team?.delete(where.id)
    }
    this.sorted.delete(where.teamId)
    this.applied++
    for (const fn of this.listeners) fn(where.teamId)
  }

  private async watch(): Promise<void> {
    const w = await watchBucket(this.kv, (entry) => this.apply(entry), this.log, 'feature flag')
    this.watcher = w
    void w.ended.then(async () => {
      if (this.stopped) return
      // The watch ended without stop(): start again (last values bring the cache up to date),
      // waiting longer after each failed restart while NATS is away.
      await sleep(RESTART_BACKOFF.initialMs)
      void retry(
        async () => {
          if (!this.stopped) await this.watch()
        },
        {
          ...RESTART_BACKOFF,
          maxAttempts: Number.POSITIVE_INFINITY,
          onRetry: ({ err, waitMs }) => this.log.error({ err, wait_ms: waitMs }, 'flag watch restart failed'),
        },
      )
    })
    await w.loaded
  }
}

// One cache per NATS connection, shared by the components of a process (api and evaluation).
const shared = new WeakMap<NatsConnection, Promise<FlagCache>>()

export function flagCacheFor(nc: NatsConnection, log: Logger): Promise<FlagCache> {
  let cache = shared.get(nc)
  if (!cache) {
    cache = FlagStore.open(nc).then((store) => FlagCache.start(store.kv, log))
    shared.set(nc, cache)
    cache.catch(() => shared.delete(nc))
  }
  return cache
}

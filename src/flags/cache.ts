import type { KV, KvWatchEntry } from '@nats-io/kv'
import type { Logger } from '../observability/logger.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { decodeDoc, isLive } from '../jetstream/kv-document.ts'
import { type BackoffPolicy, retry, sleep } from '../retry/backoff.ts'
import { FlagStore } from './definition-store.ts'
import { parseFlagEntryKey, type StoredFlag, storedFlagSchema } from './stored-definition.ts'

const RESTART_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 }
const ALL_KEYS = '>'

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
    // An empty bucket sends no initial entries; otherwise the last initial one is the first marked
    // as an update. The whole bucket is watched because a key filter could match none of the
    // initial entries, and then nothing would ever say the initial load is over.
    const status = await this.kv.status()
    const iter = await this.kv.watch({ key: ALL_KEYS })
    this.watcher = iter
    let markReady: () => void = () => undefined
    const ready = new Promise<void>((resolve) => {
      markReady = resolve
    })
    if (status.values === 0) markReady()
    void (async () => {
      try {
        for await (const entry of iter) {
          this.apply(entry)
          if (entry.isUpdate) markReady()
        }
      } catch (err) {
        this.log.warn({ err }, 'feature flag watch failed')
      }
      markReady()
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
    })()
    await ready
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

import type { KV, KvWatchEntry } from '@nats-io/kv'
import type { z } from 'zod'
import type { Logger } from '../observability/logger.ts'
import { type BackoffPolicy, retry, sleep } from '../retry/backoff.ts'
import { decodeDoc, isLive } from './kv-document.ts'
import { watchBucket } from './kv-watch.ts'

const RESTART_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000 }

/**
 * Every project's documents of one kind (keys `<prefix>.<team>.<id>`), held in memory and kept
 * current by a watch on their bucket: a change written by any process reaches every process
 * within milliseconds, and readers never wait for NATS. A document that does not parse keeps its
 * last good version. The watch restarts by itself when NATS goes away.
 */
export class TeamDocs<S extends z.ZodTypeAny> {
  private readonly byTeam = new Map<number, Map<number, z.infer<S>>>()
  private readonly sorted = new Map<number, z.infer<S>[]>()
  private readonly listeners = new Set<(teamId: number) => void>()
  private watcher: { stop(): void } | null = null
  private stopped = false
  /** changes applied so far (tests use it to see the cache move) */
  applied = 0
  /** the bucket revision of the newest entry seen (any key) */
  private revision = 0
  private readonly seen = new Set<() => void>()

  private constructor(
    private readonly kv: KV,
    private readonly prefix: string,
    private readonly schema: S,
    private readonly log: Logger,
    private readonly closed: () => boolean,
  ) {}

  /**
   * Starts watching and resolves once the bucket's current documents are loaded. `closed` says when
   * the connection is gone for good (the watch then stops restarting).
   */
  static async start<S extends z.ZodTypeAny>(
    kv: KV,
    prefix: string,
    schema: S,
    log: Logger,
    closed: () => boolean = () => false,
  ): Promise<TeamDocs<S>> {
    const docs = new TeamDocs(kv, prefix, schema, log, closed)
    await docs.watch()
    return docs
  }

  /** The project's documents (deleted ones too, as stored), by id. */
  list(teamId: number): z.infer<S>[] {
    let list = this.sorted.get(teamId)
    if (!list) {
      const team = this.byTeam.get(teamId)
      list = team ? [...team.entries()].sort((a, b) => a[0] - b[0]).map(([, d]) => d) : []
      this.sorted.set(teamId, list)
    }
    return list
  }

  /** The projects that have any document. */
  teams(): number[] {
    return [...this.byTeam.keys()]
  }

  get(teamId: number, id: number): z.infer<S> | undefined {
    return this.byTeam.get(teamId)?.get(id)
  }

  /** Calls `fn(teamId)` after each change; returns the unsubscribe function. */
  onChange(fn: (teamId: number) => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  stop(): void {
    this.stopped = true
    this.watcher?.stop()
  }

  /**
   * Resolves once this process has applied every entry written to the bucket before the call: a
   * route that wrote a document answers after it, so the writer's next request (a query naming a
   * cohort or an action just made) finds it. Gives up quietly after `timeoutMs`.
   */
  async caughtUp(timeoutMs = 2_000): Promise<void> {
    const status = await this.kv.status()
    const last = Number(status.streamInfo.state.last_seq)
    if (this.revision >= last) return
    await new Promise<void>((resolve) => {
      const done = () => {
        if (this.revision < last) return
        clearTimeout(timer)
        this.seen.delete(done)
        resolve()
      }
      const timer = setTimeout(() => {
        this.seen.delete(done)
        resolve()
      }, timeoutMs)
      this.seen.add(done)
    })
  }

  private apply(entry: KvWatchEntry): void {
    this.revision = Math.max(this.revision, entry.revision)
    for (const fn of [...this.seen]) fn()
    const [prefix, team, id, ...rest] = entry.key.split('.')
    if (prefix !== this.prefix || rest.length || !/^\d+$/.test(team ?? '') || !/^\d+$/.test(id ?? '')) return
    const teamId = Number(team)
    let docs = this.byTeam.get(teamId)
    if (isLive(entry)) {
      try {
        const doc = decodeDoc(entry, this.schema)
        if (!docs) this.byTeam.set(teamId, (docs = new Map()))
        docs.set(Number(id), doc)
      } catch (err) {
        this.log.warn({ err, key: entry.key }, `unreadable ${this.prefix} entry skipped`)
        return
      }
    } else docs?.delete(Number(id))
    this.sorted.delete(teamId)
    this.applied++
    for (const fn of this.listeners) fn(teamId)
  }

  private async watch(): Promise<void> {
    const w = await watchBucket(this.kv, (e) => this.apply(e), this.log, this.prefix)
    this.watcher = w
    void w.ended.then(async () => {
      if (this.stopped || this.closed()) return
      await sleep(RESTART_BACKOFF.initialMs)
      void retry(
        async () => {
          if (!this.stopped && !this.closed()) await this.watch()
        },
        {
          ...RESTART_BACKOFF,
          maxAttempts: Number.POSITIVE_INFINITY,
          onRetry: ({ err, waitMs }) =>
            this.log.error({ err, wait_ms: waitMs }, `${this.prefix} watch restart failed`),
        },
      )
    })
    await w.loaded
  }
}

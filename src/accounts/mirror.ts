import type { KV, KvEntry } from '@nats-io/kv'
import type { z } from 'zod'
import type { NatsConnection } from '../jetstream/connection.ts'
import { decodeDoc, isLive } from '../jetstream/kv-document.ts'
import { watchBucket } from '../jetstream/kv-watch.ts'
import type { Logger } from '../observability/logger.ts'
import { sleep } from '../retry/backoff.ts'

// The documents every authenticated request reads (its personal key, the key's user, the project
// it names) held in memory and kept current by a watch on the accounts bucket, so that a request
// is authenticated without the two KV round trips in series (key, then user) it took before
// (docs/performance.md, "What grows with the data, and auth from memory"). Only authentication
// reads it (AccountStore.authKey/authUser/authProject); other readers read the bucket.
//
// What keeps an answer from memory as good as a read of the bucket:
// - the watch delivers every write in order within milliseconds, to every process; a document
//   the mirror has not seen (a key created a moment ago elsewhere) is read from the bucket;
// - a write made through this process's AccountStore re-reads its key before the write returns
//   (`refresh`), and the mirror takes nothing older from the watch after it: a key revoked here is
//   refused by the next request, a project changed here is seen by the next request;
// - the mirror answers only while its watch is running on a connected client: on a disconnect it
//   is emptied and every read goes to the bucket until a new watch has loaded the bucket again.

/** The key prefixes kept (everything else in the bucket is ignored). */
const KEPT = ['pak.', 'user.', 'project.']

const RESTART_MS = 500

interface Entry {
  revision: number
  /** the document's bytes; null once deleted */
  value: Uint8Array | null
  decoded?: unknown
}

/** The answer of a lookup from memory: the document, or `undefined` for a key known deleted. */
export interface Known<T> {
  doc: T | undefined
}

export class AccountMirror {
  private readonly entries = new Map<string, Entry>()
  /** keys being re-read after a write here: read from the bucket meanwhile */
  private readonly refreshing = new Map<string, number>()
  private live = false
  private stopped = false
  private watcher: { stop(): void } | undefined
  /** each watch's number: a watch replaced by a newer one applies nothing more */
  private generation = 0

  private constructor(
    private readonly kv: KV,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  /** Starts the watch and resolves once the bucket's current documents are loaded. */
  static async start(kv: KV, nc: NatsConnection, log: Pick<Logger, 'warn'>): Promise<AccountMirror> {
    const mirror = new AccountMirror(kv, log)
    mirror.followConnection(nc)
    await mirror.watch()
    return mirror
  }

  /**
   * `key`'s document from memory: `{doc}` (doc undefined: deleted), or undefined when memory cannot
   * say (not loaded, not connected, being re-read, never seen): the caller reads the bucket.
   */
  lookup<S extends z.ZodTypeAny>(key: string, schema: S): Known<z.infer<S>> | undefined {
    if (!this.live || this.refreshing.has(key)) return undefined
    const e = this.entries.get(key)
    if (!e) return undefined
    if (e.value === null) return { doc: undefined }
    e.decoded ??= decodeDoc({ operation: 'PUT', value: e.value }, schema)
    // a copy, as a read of the bucket gives: a caller changing its document changes no other's
    return { doc: structuredClone(e.decoded) as z.infer<S> }
  }

  /**
   * After a write to `key` made here: reads it back and keeps that (nothing older from the watch
   * after it); until then lookups of `key` go to the bucket.
   */
  async refresh(key: string): Promise<void> {
    if (!KEPT.some((p) => key.startsWith(p))) return
    this.refreshing.set(key, (this.refreshing.get(key) ?? 0) + 1)
    try {
      const e = await this.kv.get(key).catch(() => null)
      // unreadable now: forgotten, so that lookups read the bucket until the watch brings it
      if (e) this.apply(e)
      else this.entries.delete(key)
    } finally {
      const n = (this.refreshing.get(key) ?? 1) - 1
      if (n > 0) this.refreshing.set(key, n)
      else this.refreshing.delete(key)
    }
  }

  stop(): void {
    this.stopped = true
    this.live = false
    this.watcher?.stop()
  }

  private apply(e: KvEntry): void {
    if (!KEPT.some((p) => e.key.startsWith(p))) return
    const known = this.entries.get(e.key)
    if (known && known.revision >= e.revision) return
    this.entries.set(e.key, { revision: e.revision, value: isLive(e) ? e.value : null })
  }

  /** Empties memory and stops answering from it (reads go to the bucket). */
  private drop(): void {
    this.live = false
    this.generation++
    this.watcher?.stop()
    this.watcher = undefined
    this.entries.clear()
  }

  private followConnection(nc: NatsConnection): void {
    void (async () => {
      for await (const s of nc.status()) {
        if (this.stopped) return
        // writes made while disconnected may be missed: start again from the bucket
        if (s.type === 'disconnect') this.drop()
        if (s.type === 'reconnect') {
          this.drop()
          this.restart()
        }
      }
    })().catch(() => undefined)
  }

  private restart(): void {
    void (async () => {
      while (!this.stopped && !this.live) {
        try {
          await this.watch()
          return
        } catch (err) {
          this.log.warn({ err }, 'accounts watch could not start')
          await sleep(RESTART_MS)
        }
      }
    })()
  }

  private async watch(): Promise<void> {
    const generation = ++this.generation
    // a watch replaced by a newer one (drop) applies nothing more
    const w = await watchBucket(
      this.kv,
      (e) => {
        if (generation === this.generation) this.apply(e)
      },
      this.log,
      'accounts',
    )
    if (generation !== this.generation) {
      w.stop()
      return
    }
    this.watcher = w
    void w.ended.then(async () => {
      if (generation !== this.generation || this.stopped) return
      // the watch ended by itself: answer from the bucket until a new one has loaded
      this.drop()
      await sleep(RESTART_MS)
      this.restart()
    })
    if ((await w.loaded) && generation === this.generation) this.live = true
  }
}

import type { KV } from '@nats-io/kv'
import { BUCKETS } from '../../../schema/jetstream.ts'
import type { NatsConnection } from '@nats-io/nats-core'
import { publishStored } from '../../jetstream/publish-stored.ts'
import { KeyMemo, type KeyRef, teamPrefix } from '../identity-keys.ts'
import { StateCache, teamOfKey } from './cache.ts'
import { CommitLog, type StoredValue, visibleValue, writerOf } from './commit-protocol.ts'
import { Pointers, readJson } from './pointers.ts'
import { IdentityReads, type StateValue } from './reads.ts'
import { TeamLoader } from './team-loader.ts'

// The identity state the projector decides with, kept in the JetStream KV bucket BUCKETS.identity with
// an in-memory cache in front. See docs/projectors.md ("Identity state") and commit-protocol.ts.

const CONCURRENCY = 256
/** values published before their acknowledgements are awaited */
const PUBLISH_WINDOW = 2048
const encoder = new TextEncoder()

async function inWindows<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    await Promise.all(items.slice(i, i + CONCURRENCY).map(fn))
  }
}

/** How long a commit's values may take to be stored before the batch is retried (as a KV put's default). */
const PUT_TIMEOUT_MS = 5000

/** Tuning of the identity store. */
export interface KvIdentityStoreOptions {
  /**
   * The connection the bucket was opened on: a commit's values are published on it together
   * (publish-stored.ts), to the subjects kv.put writes to.
   */
  nc: NatsConnection
  /** committed values kept in memory (entries; oldest evicted first) */
  cacheSize?: number
  /** overrides the namespace pointers (replay builds into its own namespace) */
  namespace?: string
  /**
   * A team with at most this many keys is loaded whole on first sight and then answered from memory
   * (a key it does not hold does not exist); 0 turns this off. Default: a fifth of the cache.
   */
  teamLoadMax?: number
}

/** One value of a batch to commit: its team and its new value (null = removed). */
export interface CommitValue {
  team: number
  value: StateValue | null
}

/**
 * The committed identity state, read through a bounded cache. This process is the only writer of the
 * teams of its partitions (docs/projectors.md), so what it loaded and what it wrote since stays true:
 * a team loaded whole ("complete") is answered from memory until one of its keys is evicted.
 */
export class KvIdentityStore extends IdentityReads {
  private readonly cache: StateCache
  private readonly pointers: Pointers
  private readonly commits = new CommitLog()
  private readonly teams: TeamLoader
  // Full keys and team prefixes per namespace, made once (see KeyMemo): memory answers most reads,
  // and a key made afresh for each costs more than the lookup.
  private readonly fullKeys = new Map<string, { keys: KeyMemo<string>; teams: KeyMemo<number> }>()

  constructor(
    private readonly kv: KV,
    private readonly opts: KvIdentityStoreOptions,
  ) {
    super()
    const cacheSize = opts.cacheSize ?? 500_000
    this.cache = new StateCache(cacheSize)
    this.pointers = new Pointers(kv, opts.namespace)
    this.teams = new TeamLoader(
      kv,
      this.cache,
      this.commits,
      opts.teamLoadMax ?? Math.floor(cacheSize / 5),
      (f, s) => this.visible(f, s),
    )
  }

  private keysOf(ns: string) {
    let memo = this.fullKeys.get(ns)
    if (memo === undefined) {
      const keys = new KeyMemo<string>((rel) => `${ns}.${rel}`)
      const teams = new KeyMemo<number>((team) => teamPrefix(ns, team))
      this.fullKeys.set(ns, (memo = { keys, teams }))
    }
    return memo
  }

  /** `<ns>.<rel>` */
  private fullKey(ns: string, rel: string): string {
    return this.keysOf(ns).keys.of(rel)
  }

  /** Forgets everything held in memory (after a replay swapped namespaces). */
  reset(): void {
    this.fullKeys.clear()
    this.cache.clear()
    this.pointers.reset()
    this.commits.reset()
  }

  /** The identity namespace the team's state lives in now. */
  namespaceOf(team: number): Promise<string> {
    return this.pointers.namespaceOf(team)
  }

  /** The last stream sequence whose batch `source` committed completely in `ns` (0: none). */
  watermark(ns: string, source: string): Promise<number> {
    return this.pointers.watermark(ns, source)
  }

  /** Writes a watermark (callers only ever move it forward). */
  setWatermark(ns: string, source: string, seq: number): Promise<void> {
    return this.pointers.setWatermark(ns, source, seq)
  }

  /**
   * The committed value of a relative key of `team` when memory answers it (a cached value, or a key
   * a complete team does not have: null); undefined when only the bucket can tell.
   */
  peek(team: number, rel: string, ref?: KeyRef): StateValue | null | undefined {
    const ns = this.pointers.known(team)
    if (ns === undefined) return undefined
    let full: string
    if (ref?.ns === ns) full = ref.full
    else {
      full = this.fullKey(ns, rel)
      if (ref) {
        ref.ns = ns
        ref.full = full
      }
    }
    const value = this.cache.get(full)
    if (value !== undefined) return value
    if (this.cache.has(full) || this.cache.isComplete(this.keysOf(ns).teams.of(team))) return null
    return undefined
  }

  /**
   * Whether memory answers every key of `team`, present or absent (its state was loaded whole, see
   * TeamLoader): then prefetching its keys does nothing, and they need not be listed.
   */
  holdsWhole(team: number): boolean {
    const ns = this.pointers.known(team)
    return ns !== undefined && this.cache.isComplete(this.keysOf(ns).teams.of(team))
  }

  /** The committed value of a relative key of `team`. */
  async read(team: number, rel: string): Promise<StateValue | null> {
    const known = this.peek(team, rel)
    if (known !== undefined) return known
    const ns = await this.namespaceOf(team)
    const full = this.fullKey(ns, rel)
    if (this.cache.has(full)) return this.cache.get(full) ?? null
    if (this.cache.isComplete(teamPrefix(ns, team))) return null
    return this.loadAndRemember(full)
  }

  /** The cached committed value, if any; never reads the bucket. */
  cached(ns: string, rel: string): StateValue | null | undefined {
    return this.cache.get(this.fullKey(ns, rel))
  }

  private async load(full: string): Promise<StateValue | null> {
    return this.visible(full, await readJson<StoredValue>(this.kv, full))
  }

  private async visible(full: string, stored: StoredValue | undefined): Promise<StateValue | null> {
    if (!stored) return null
    const ns = full.slice(0, full.indexOf('.'))
    return visibleValue(stored, await this.watermark(ns, writerOf(stored)))
  }

  // A commit that finished while a load was in flight may have written the key after the load read
  // it; the commit's own value is already cached then and must not be overwritten.
  private async loadAndRemember(full: string): Promise<StateValue | null> {
    const gen = this.commits.generation
    const value = await this.load(full)
    if (!this.commits.wentStale(gen, full)) this.cache.remember(full, value)
    return value
  }

  /** Loads many keys concurrently, so that a batch costs a few round trips instead of one per event. */
  async prefetch(keys: { team: number; rel: string }[]): Promise<void> {
    const teams = new Set(keys.map((k) => k.team))
    await Promise.all([...teams].map(async (t) => this.teams.load(teamPrefix(await this.namespaceOf(t), t))))
    const incomplete = new Map<number, string | undefined>()
    for (const t of teams) {
      const ns = await this.namespaceOf(t)
      incomplete.set(t, this.cache.isComplete(teamPrefix(ns, t)) ? undefined : ns)
    }
    const missing = new Set<string>()
    for (const { team, rel } of keys) {
      const ns = incomplete.get(team)
      if (ns === undefined) continue
      const full = this.fullKey(ns, rel)
      if (!this.cache.has(full)) missing.add(full)
    }
    await inWindows([...missing], (full) => this.loadAndRemember(full))
  }

  /**
   * Writes the final values of a batch (relative key -> value), then the watermarks. `seqs` holds,
   * per namespace, the last stream sequence of the batch. See commit-protocol.ts for why this order.
   * `fence` (leases) is called right before the values and before the watermarks are written: a
   * unit that lost its lease writes neither (it throws FencedError).
   */
  async commit(
    values: Map<string, CommitValue>,
    source: string,
    seqs: Map<string, number>,
    fence?: () => Promise<void>,
  ): Promise<void> {
    const writes: { full: string; stored: StoredValue; value: StateValue | null }[] = []
    for (const [rel, { team, value }] of values) {
      const ns = await this.namespaceOf(team)
      const at = seqs.get(ns)
      if (at === undefined) throw new Error(`commit: no sequence for namespace ${ns}`)
      writes.push({ full: this.fullKey(ns, rel), value, stored: { v: value, at: [source, at], p: null } })
    }
    await inWindows(writes, async (w) => {
      if (this.cache.has(w.full)) w.stored.p = this.cache.get(w.full) ?? null
      else if (this.cache.isComplete(teamOfKey(w.full) ?? '')) w.stored.p = null
      else w.stored.p = await this.load(w.full)
    })
    await fence?.()
    // the subjects kv.put writes to (a bucket of this cluster: no domain, mirror or API prefix)
    const subject = `$KV.${BUCKETS.identity.name}.`
    for (let i = 0; i < writes.length; i += PUBLISH_WINDOW) {
      const window = writes.slice(i, i + PUBLISH_WINDOW)
      await publishStored(
        this.opts.nc,
        window.map((w) => ({ subject: subject + w.full, data: encoder.encode(JSON.stringify(w.stored)) })),
        PUT_TIMEOUT_MS,
      )
    }
    await fence?.()
    for (const [ns, seq] of seqs) {
      if (seq > (await this.watermark(ns, source))) await this.setWatermark(ns, source, seq)
    }
    this.commits.record(writes.map((w) => w.full))
    for (const w of writes) this.cache.remember(w.full, w.value)
  }

  protected readKey(team: number, rel: string): Promise<StateValue | null> {
    return this.read(team, rel)
  }
}

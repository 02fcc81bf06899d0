import type { KV } from '@nats-io/kv'
import { io } from './errors.ts'
import type {
  DistinctIdState,
  GroupState,
  GroupTypeMapping,
  IdentityChanges,
  IdentityStore,
  PersonState,
  WritableIdentityStore,
} from './identity/index.ts'
import {
  distinctIdKey,
  groupKey,
  groupTypesKey,
  LIVE_NAMESPACE,
  namespacePointerKey,
  personKey,
  personlessKey,
  watermarkKey,
} from './identity-keys.ts'

// The identity state the projector decides with, kept in the JetStream KV bucket BUCKETS.identity with
// an in-memory cache in front. See docs/projectors.md ("Identity state").
//
// Exactly-once under redelivery: a batch's state is written only after its ClickHouse rows, and every
// value carries the position that wrote it (`at`) and the value it replaced (`p`). The watermark of the
// source (the highest stream sequence whose batch was committed completely) is written last. A value
// whose `at` is above its source's watermark belongs to a batch that crashed half-way: readers see
// `p`, the state before that batch, so the redelivered batch is applied to exactly the state it was
// first applied to and stamps its events identically.

type Value = unknown
interface Stored {
  v: Value | null
  at: [string, number]
  p: Value | null
}

const CONCURRENCY = 256
const encoder = new TextEncoder()

async function inWindows<T>(items: T[], fn: (item: T) => Promise<unknown>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    await Promise.all(items.slice(i, i + CONCURRENCY).map(fn))
  }
}

export interface KvIdentityStoreOptions {
  /** committed values kept in memory (entries; oldest evicted first) */
  cacheSize?: number
  /** overrides the namespace pointers (replay builds into its own namespace) */
  namespace?: string
}

export class KvIdentityStore implements IdentityStore {
  private readonly cache = new Map<string, Value | null>()
  private readonly namespaces = new Map<number, string>()
  private readonly watermarks = new Map<string, number>()
  private readonly cacheSize: number

  constructor(
    private readonly kv: KV,
    private readonly opts: KvIdentityStoreOptions = {},
  ) {
    this.cacheSize = opts.cacheSize ?? 500_000
  }

  /** Forget everything held in memory (after a replay swapped namespaces, or a failed commit). */
  reset(): void {
    this.cache.clear()
    this.namespaces.clear()
    this.watermarks.clear()
  }

  async namespaceOf(team: number): Promise<string> {
    if (this.opts.namespace) return this.opts.namespace
    const known = this.namespaces.get(team)
    if (known) return known
    const pointer =
      (await this.readJson<{ ns: string }>(namespacePointerKey(team))) ??
      (await this.readJson<{ ns: string }>(namespacePointerKey('default')))
    const ns = pointer?.ns ?? LIVE_NAMESPACE
    this.namespaces.set(team, ns)
    return ns
  }

  async watermark(ns: string, source: string): Promise<number> {
    const key = watermarkKey(ns, source)
    const known = this.watermarks.get(key)
    if (known !== undefined) return known
    const seq = (await this.readJson<{ seq: number }>(key))?.seq ?? 0
    this.watermarks.set(key, seq)
    return seq
  }

  async setWatermark(ns: string, source: string, seq: number): Promise<void> {
    const key = watermarkKey(ns, source)
    await this.kv.put(key, encoder.encode(JSON.stringify({ seq })))
    this.watermarks.set(key, seq)
  }

  private async readJson<T>(key: string): Promise<T | undefined> {
    const e = await this.kv.get(key)
    if (!e || e.operation !== 'PUT' || e.length === 0) return undefined
    return e.json<T>()
  }

  /** The committed value of a relative key of `team`. */
  async read(team: number, rel: string): Promise<Value | null> {
    const full = `${await this.namespaceOf(team)}.${rel}`
    if (this.cache.has(full)) return this.cache.get(full) ?? null
    const value = await this.load(full)
    this.remember(full, value)
    return value
  }

  private async load(full: string): Promise<Value | null> {
    const stored = await this.readJson<Stored>(full)
    if (!stored) return null
    const ns = full.slice(0, full.indexOf('.'))
    const [source, seq] = stored.at
    return seq > (await this.watermark(ns, source)) ? stored.p : stored.v
  }

  /** The cached committed value, if any; never reads the bucket. */
  cached(ns: string, rel: string): Value | null | undefined {
    return this.cache.get(`${ns}.${rel}`)
  }

  private remember(full: string, value: Value | null): void {
    this.cache.set(full, value)
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value
      if (oldest !== undefined) this.cache.delete(oldest)
    }
  }

  /** Loads many keys concurrently, so that a batch costs a few round trips instead of one per event. */
  async prefetch(keys: { team: number; rel: string }[]): Promise<void> {
    const missing = new Map<string, string>()
    for (const { team, rel } of keys) {
      const full = `${await this.namespaceOf(team)}.${rel}`
      if (!this.cache.has(full)) missing.set(full, full)
    }
    await inWindows([...missing.keys()], async (full) => this.remember(full, await this.load(full)))
  }

  /**
   * Writes the final values of a batch (relative key -> value, null = removed), then the watermarks.
   * `seqs` holds, per namespace, the last stream sequence of the batch.
   */
  async commit(
    values: Map<string, { team: number; value: Value | null }>,
    source: string,
    seqs: Map<string, number>,
  ): Promise<void> {
    const writes: { full: string; stored: Stored; value: Value | null }[] = []
    for (const [rel, { team, value }] of values) {
      const ns = await this.namespaceOf(team)
      const at = seqs.get(ns)
      if (at === undefined) throw new Error(`commit: no sequence for namespace ${ns}`)
      const full = `${ns}.${rel}`
      writes.push({ full, value, stored: { v: value, at: [source, at], p: null } })
    }
    await inWindows(writes, async (w) => {
      w.stored.p = this.cache.has(w.full) ? (this.cache.get(w.full) ?? null) : await this.load(w.full)
    })
    await inWindows(writes, (w) => this.kv.put(w.full, encoder.encode(JSON.stringify(w.stored))))
    for (const [ns, seq] of seqs) {
      if (seq > (await this.watermark(ns, source))) await this.setWatermark(ns, source, seq)
    }
    for (const w of writes) this.remember(w.full, w.value)
  }

  // IdentityStore (committed state only; a batch reads through an IdentityOverlay)
  async getDistinctId(team: number, distinctId: string) {
    return ((await this.read(team, distinctIdKey(team, distinctId))) ?? undefined) as
      DistinctIdState | undefined
  }
  async getPerson(team: number, id: string) {
    return ((await this.read(team, personKey(team, id))) ?? undefined) as PersonState | undefined
  }
  async isPersonlessDistinctId(team: number, distinctId: string) {
    return (await this.read(team, personlessKey(team, distinctId))) === true
  }
  async getGroupTypes(team: number) {
    return ((await this.read(team, groupTypesKey(team))) ?? []) as GroupTypeMapping[]
  }
  async getGroup(team: number, index: number, key: string) {
    return ((await this.read(team, groupKey(team, index, key))) ?? undefined) as GroupState | undefined
  }
}

/**
 * One batch's uncommitted identity state over the committed store: applyEvent reads through it, its
 * changes land here, and at the end `values()` is what the batch commits. Dropping it undoes the batch.
 */
export class IdentityOverlay implements WritableIdentityStore {
  private readonly local = new Map<string, { team: number; value: Value | null }>()

  constructor(private readonly base: KvIdentityStore) {}

  private async get(team: number, rel: string): Promise<Value | null> {
    const hit = this.local.get(rel)
    const value = hit ? hit.value : await io(() => this.base.read(team, rel))
    // Callers mutate what they get; the committed cache must never see that.
    return value === null ? null : structuredClone(value)
  }

  private set(team: number, rel: string, value: Value | null): void {
    this.local.set(rel, { team, value: value === null ? null : structuredClone(value) })
  }

  values(): Map<string, { team: number; value: Value | null }> {
    return this.local
  }

  async getDistinctId(team: number, distinctId: string) {
    return ((await this.get(team, distinctIdKey(team, distinctId))) ?? undefined) as
      DistinctIdState | undefined
  }
  async getPerson(team: number, id: string) {
    return ((await this.get(team, personKey(team, id))) ?? undefined) as PersonState | undefined
  }
  async isPersonlessDistinctId(team: number, distinctId: string) {
    return (await this.get(team, personlessKey(team, distinctId))) === true
  }
  async getGroupTypes(team: number) {
    return ((await this.get(team, groupTypesKey(team))) ?? []) as GroupTypeMapping[]
  }
  async getGroup(team: number, index: number, key: string) {
    return ((await this.get(team, groupKey(team, index, key))) ?? undefined) as GroupState | undefined
  }

  async applyChanges(c: IdentityChanges): Promise<void> {
    const team = c.teamId
    for (const p of c.persons) this.set(team, personKey(team, p.id), p)
    for (const d of c.deletedPersons) this.set(team, personKey(team, d.id), null)
    for (const r of c.distinctIds) {
      this.set(
        team,
        distinctIdKey(team, r.distinctId),
        r.isDeleted ? null : { personId: r.personId, version: r.version },
      )
    }
    for (const id of c.personlessDistinctIds) this.set(team, personlessKey(team, id), true)
    if (c.groupTypes.length > 0) {
      const types = await this.getGroupTypes(team)
      for (const row of c.groupTypes) {
        if (!types.some((t) => t.groupType === row.groupType)) {
          types.push({ groupType: row.groupType, groupTypeIndex: row.groupTypeIndex })
        }
      }
      this.set(team, groupTypesKey(team), types)
    }
    for (const g of c.groups) this.set(team, groupKey(team, g.groupTypeIndex, g.groupKey), g)
  }
}

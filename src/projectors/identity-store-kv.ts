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
  teamPrefix,
  watermarkKey,
} from './identity-keys.ts'
import { scanPrefix } from './kv-scan.ts'

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
const decoder = new TextDecoder()

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
  /**
   * A team with at most this many keys is loaded whole on first sight and then answered from memory
   * (a key it does not hold does not exist); 0 turns this off. Default: a fifth of the cache.
   */
  teamLoadMax?: number
}

/** The keys one finished commit wrote, for loads that were in flight meanwhile. */
interface CommitRecord {
  gen: number
  keys: Set<string>
}

const RECENT_COMMITS = 16

/**
 * A deep copy of a JSON value (what the state holds): several times faster than structuredClone on
 * the small objects read once or more per event.
 */
export function cloneJson<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v
  if (Array.isArray(v)) return v.map(cloneJson) as T
  const out: Record<string, unknown> = {}
  for (const k of Object.keys(v)) {
    const x = cloneJson((v as Record<string, unknown>)[k])
    // An own `__proto__` key (JSON.parse makes those) must stay a key, not become the prototype.
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true })
    else out[k] = x
  }
  return out as T
}

/** `<ns>.t.<team>` of a full identity key, or undefined for other keys. */
function teamOfKey(full: string): string | undefined {
  const a = full.indexOf('.')
  if (full.slice(a + 1, a + 3) !== 't.') return undefined
  const b = full.indexOf('.', a + 3)
  return b < 0 ? undefined : full.slice(0, b)
}

/**
 * The IdentityStore reads, typed, over one raw lookup by key: the committed store and a batch's
 * overlay differ only in that lookup.
 */
abstract class IdentityReads implements IdentityStore {
  protected abstract readKey(team: number, rel: string): Promise<Value | null>

  async getDistinctId(team: number, distinctId: string) {
    return ((await this.readKey(team, distinctIdKey(team, distinctId))) ?? undefined) as
      DistinctIdState | undefined
  }
  async getPerson(team: number, id: string) {
    return ((await this.readKey(team, personKey(team, id))) ?? undefined) as PersonState | undefined
  }
  async isPersonlessDistinctId(team: number, distinctId: string) {
    return (await this.readKey(team, personlessKey(team, distinctId))) === true
  }
  async getGroupTypes(team: number) {
    return ((await this.readKey(team, groupTypesKey(team))) ?? []) as GroupTypeMapping[]
  }
  async getGroup(team: number, index: number, key: string) {
    return ((await this.readKey(team, groupKey(team, index, key))) ?? undefined) as GroupState | undefined
  }
}

/**
 * The committed identity state, read through a bounded cache. This process is the only writer of the
 * teams of its partitions (docs/projectors.md), so what it loaded and what it wrote since stays true:
 * a team loaded whole ("complete") is answered from memory until one of its keys is evicted.
 */
export class KvIdentityStore extends IdentityReads {
  private readonly cache = new Map<string, Value | null>()
  private readonly namespaces = new Map<number, string>()
  private readonly watermarks = new Map<string, number>()
  private readonly complete = new Set<string>()
  /** teams found too large to load whole */
  private readonly large = new Set<string>()
  private readonly loadingTeams = new Map<string, Promise<void>>()
  private readonly cacheSize: number
  private readonly teamLoadMax: number
  /** counts finished commits; with `recent`, tells a load that overlapped a commit what went stale */
  private gen = 0
  private readonly recent: CommitRecord[] = []

  constructor(
    private readonly kv: KV,
    private readonly opts: KvIdentityStoreOptions = {},
  ) {
    super()
    this.cacheSize = opts.cacheSize ?? 500_000
    this.teamLoadMax = opts.teamLoadMax ?? Math.floor(this.cacheSize / 5)
  }

  /** Forget everything held in memory (after a replay swapped namespaces, or a failed commit). */
  reset(): void {
    this.cache.clear()
    this.namespaces.clear()
    this.watermarks.clear()
    this.complete.clear()
    this.large.clear()
    this.gen++
    this.recent.length = 0
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
    const ns = await this.namespaceOf(team)
    const full = `${ns}.${rel}`
    if (this.cache.has(full)) return this.cache.get(full) ?? null
    if (this.complete.has(teamPrefix(ns, team))) return null
    return this.loadAndRemember(full)
  }

  private async load(full: string): Promise<Value | null> {
    return this.visible(full, await this.readJson<Stored>(full))
  }

  // A value written above its source's watermark belongs to a batch that did not finish.
  private async visible(full: string, stored: Stored | undefined): Promise<Value | null> {
    if (!stored) return null
    const ns = full.slice(0, full.indexOf('.'))
    const [source, seq] = stored.at
    return seq > (await this.watermark(ns, source)) ? stored.p : stored.v
  }

  private async loadAndRemember(full: string): Promise<Value | null> {
    const gen = this.gen
    const value = await this.load(full)
    if (!this.wentStale(gen, full)) this.remember(full, value)
    return value
  }

  // A commit that finished while a load was in flight may have written the key after the load read
  // it; the commit's own value is already cached then and must not be overwritten.
  private wentStale(gen: number, full: string | undefined): boolean {
    if (gen === this.gen) return false
    const oldest = this.recent[0]
    if (full === undefined || !oldest || oldest.gen > gen + 1) return true
    return this.recent.some((r) => r.gen > gen && r.keys.has(full))
  }

  /** The cached committed value, if any; never reads the bucket. */
  cached(ns: string, rel: string): Value | null | undefined {
    return this.cache.get(`${ns}.${rel}`)
  }

  private remember(full: string, value: Value | null): void {
    this.cache.set(full, value)
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value
      if (oldest !== undefined) {
        this.cache.delete(oldest)
        // Its team's absent keys can no longer be told from evicted ones.
        const team = teamOfKey(oldest)
        if (team) this.complete.delete(team)
      }
    }
  }

  /**
   * Loads a team's whole state in one scan the first time the team is seen (when it is small
   * enough), so later reads of its keys, present or absent, cost no round trip.
   */
  private async loadTeam(team: number): Promise<void> {
    if (this.teamLoadMax <= 0) return
    const ns = await this.namespaceOf(team)
    const prefix = teamPrefix(ns, team)
    if (this.complete.has(prefix) || this.large.has(prefix)) return
    let loading = this.loadingTeams.get(prefix)
    if (!loading) {
      loading = this.scanTeam(prefix).finally(() => this.loadingTeams.delete(prefix))
      this.loadingTeams.set(prefix, loading)
    }
    await loading
  }

  private async scanTeam(prefix: string): Promise<void> {
    const gen = this.gen
    const found = await scanPrefix(this.kv, prefix, this.teamLoadMax)
    if (!found) {
      this.large.add(prefix)
      return
    }
    const values: [string, Value | null][] = []
    for (const [full, data] of found) {
      const stored = data === null ? undefined : (JSON.parse(decoder.decode(data)) as Stored)
      values.push([full, await this.visible(full, stored)])
    }
    if (gen !== this.gen) return // a commit landed meanwhile: the scan may be stale, read per key
    // Complete first: should one of these very keys be evicted on the way, remember() takes it back.
    this.complete.add(prefix)
    for (const [full, value] of values) if (!this.cache.has(full)) this.remember(full, value)
  }

  /** Loads many keys concurrently, so that a batch costs a few round trips instead of one per event. */
  async prefetch(keys: { team: number; rel: string }[]): Promise<void> {
    const teams = new Set(keys.map((k) => k.team))
    await Promise.all([...teams].map((t) => this.loadTeam(t)))
    const missing = new Set<string>()
    const incomplete = new Map<number, string | undefined>()
    for (const t of teams) {
      const ns = await this.namespaceOf(t)
      incomplete.set(t, this.complete.has(teamPrefix(ns, t)) ? undefined : ns)
    }
    for (const { team, rel } of keys) {
      const ns = incomplete.get(team)
      if (ns === undefined) continue
      const full = `${ns}.${rel}`
      if (!this.cache.has(full)) missing.add(full)
    }
    await inWindows([...missing], (full) => this.loadAndRemember(full))
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
      if (this.cache.has(w.full)) w.stored.p = this.cache.get(w.full) ?? null
      else if (this.complete.has(teamOfKey(w.full) ?? '')) w.stored.p = null
      else w.stored.p = await this.load(w.full)
    })
    await inWindows(writes, (w) => this.kv.put(w.full, encoder.encode(JSON.stringify(w.stored))))
    for (const [ns, seq] of seqs) {
      if (seq > (await this.watermark(ns, source))) await this.setWatermark(ns, source, seq)
    }
    this.gen++
    this.recent.push({ gen: this.gen, keys: new Set(writes.map((w) => w.full)) })
    if (this.recent.length > RECENT_COMMITS) this.recent.shift()
    for (const w of writes) this.remember(w.full, w.value)
  }

  // IdentityStore reads (committed state only; a batch reads through an IdentityOverlay)
  protected readKey(team: number, rel: string): Promise<Value | null> {
    return this.read(team, rel)
  }
}

/**
 * One batch's uncommitted identity state over the committed store: applyEvent reads through it, its
 * changes land here, and at the end `values()` is what the batch commits. Dropping it undoes the batch.
 */
export class IdentityOverlay extends IdentityReads implements WritableIdentityStore {
  private readonly local = new Map<string, { team: number; value: Value | null }>()

  /**
   * `parent`: the overlay of the previous batch while its commit is still in flight (pipelining); it
   * is detached once that commit is done, when the store holds the same values.
   */
  constructor(
    private readonly base: KvIdentityStore,
    private parent?: IdentityOverlay,
  ) {
    super()
  }

  detach(): void {
    this.parent = undefined
  }

  private lookup(rel: string): { team: number; value: Value | null } | undefined {
    return this.local.get(rel) ?? this.parent?.lookup(rel)
  }

  private async get(team: number, rel: string): Promise<Value | null> {
    const hit = this.lookup(rel)
    const value = hit ? hit.value : await io(() => this.base.read(team, rel))
    // Callers mutate what they get; the committed cache must never see that.
    return cloneJson(value)
  }

  private set(team: number, rel: string, value: Value | null): void {
    this.local.set(rel, { team, value: cloneJson(value) })
  }

  values(): Map<string, { team: number; value: Value | null }> {
    return this.local
  }

  protected readKey(team: number, rel: string): Promise<Value | null> {
    return this.get(team, rel)
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

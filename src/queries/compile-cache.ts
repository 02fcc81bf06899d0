import { AsyncLocalStorage } from 'node:async_hooks'
import { LRUCache } from 'lru-cache'
import { compileHogQL, type CompiledQuery, type CompileOptions, type HogQLCatalog } from '../hogql/index.ts'
import { materializedProperties } from '../hogql/materialized.ts'

// Compiled HogQL by its text and everything else the compiler reads. Parsing (ANTLR in WebAssembly)
// is nearly all of a compile — 10–60 ms for an insight's HogQL, most of an insight request's cost
// besides ClickHouse — and the same texts come back all the time: a dashboard's insights are
// refreshed with the same HogQL until the day changes, a user re-runs a query while editing around
// it. Only successful compiles are kept (an error is cheap to reproduce and carries positions into
// the text). Each compile worker has its own cache: workers share nothing but messages.

/** Entries kept per process (or worker); texts are capped too, as some are tens of kilobytes. */
const MAX_ENTRIES = 1000
const MAX_TOTAL_CHARS = 64 * 1024 * 1024

const cache = new LRUCache<string, CompiledQuery>({
  max: MAX_ENTRIES,
  maxSize: MAX_TOTAL_CHARS,
  sizeCalculation: (v, k) => k.length + v.clickhouse.length + v.hogql.length + 1,
})

// The materialized-column map changes rarely but is replaced (a new Map) on every worker job, so
// its identity says nothing: its content is part of the key, serialized once per map.
const materializedKeys = new WeakMap<ReadonlyMap<string, string>, string>()
function materializedKey(): string {
  const m = materializedProperties()
  let k = materializedKeys.get(m)
  if (k === undefined) {
    k = JSON.stringify([...m.entries()].sort())
    materializedKeys.set(m, k)
  }
  return k
}

function keyOf(query: string, opts: CompileOptions): string {
  return JSON.stringify([
    query,
    opts.teamId,
    opts.timezone ?? 'UTC',
    opts.values ?? null,
    opts.filters ?? null,
    opts.personOverrides ?? true,
    opts.defaultLimit ?? null,
    opts.maxLimit ?? null,
    materializedKey(),
    opts.catalog?.key ?? null,
  ])
}

// The project's cohorts and actions (src/queries/catalog.ts) for every HogQL statement compiled
// within a kind's compile: insights, person lists and exports name them through `IN COHORT` and
// `matchesAction`, and none of their builders has to pass them along.
const catalogs = new AsyncLocalStorage<HogQLCatalog>()

/** The catalog compiles within withCatalog use (undefined outside one). */
export function currentCatalog(): HogQLCatalog | undefined {
  return catalogs.getStore()
}

/** Runs `fn` with `catalog` as the catalog of every compile within it that names none. */
export function withCatalog<T>(catalog: HogQLCatalog | undefined, fn: () => Promise<T>): Promise<T> {
  return catalog ? catalogs.run(catalog, fn) : fn()
}

/** compileHogQL, answered from the cache when the same text was compiled the same way before. */
export async function compileHogQLCached(query: string, given: CompileOptions): Promise<CompiledQuery> {
  const catalog = given.catalog ?? catalogs.getStore()
  const opts = catalog ? { ...given, catalog } : given
  const key = keyOf(query, opts)
  const hit = cache.get(key)
  const compiled = hit ? copy(hit) : await compileHogQL(query, opts)
  if (!hit) cache.set(key, copy(compiled))
  const reads = propertyReads.getStore()
  if (reads) for (const p of compiled.eventProperties ?? []) reads.add(p)
  return compiled
}

// Callers own what they get back (some extend or reshape it); the cached entry stays untouched.
function copy(c: CompiledQuery): CompiledQuery {
  return { ...c, columns: [...c.columns], types: [...c.types] }
}

// A kind's compile may compile several HogQL statements and print its own statement around them
// (insights): the event properties they read are gathered here, cache hits included.
const propertyReads = new AsyncLocalStorage<Set<string>>()

/**
 * Runs a kind's compile and sets `eventProperties` on its result to the top-level event properties
 * every HogQL statement compiled within it read from the key/value arrays (none: left unset).
 */
export async function withEventProperties<T extends CompiledQuery>(compile: () => Promise<T>): Promise<T> {
  const reads = new Set<string>()
  const out = await propertyReads.run(reads, compile)
  for (const p of out.eventProperties ?? []) reads.add(p)
  if (reads.size) out.eventProperties = [...reads]
  return out
}

/** Empties the cache (tests). */
export function clearCompileCache(): void {
  cache.clear()
}

import type { KV } from '@nats-io/kv'
import type { z } from 'zod'

// JSON documents in a JetStream KV bucket with optimistic concurrency: every write names the
// revision it read, and a writer that lost the race reads again and reapplies its change.

const enc = new TextEncoder()
const dec = new TextDecoder()

const WRONG_LAST_SEQUENCE = new Set([10071, 10164])
const MAX_ATTEMPTS = 100

/** Whether a KV write failed because the key changed since the revision it named. */
export function isRevisionConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'number' && WRONG_LAST_SEQUENCE.has(code)
}

/** A document with the KV revision it was read at. */
export interface Versioned<T> {
  doc: T
  revision: number
}

/** Reads and validates a document; undefined when absent or deleted. */
export async function readDoc<S extends z.ZodTypeAny>(
  kv: KV,
  key: string,
  schema: S,
): Promise<Versioned<z.infer<S>> | undefined> {
  const e = await kv.get(key)
  if (e?.operation !== 'PUT' || e.value.length === 0) return undefined
  return { doc: schema.parse(JSON.parse(dec.decode(e.value))), revision: e.revision }
}

/** Writes `doc` only if `key` does not exist yet; false when it does. */
export async function createDoc(kv: KV, key: string, doc: unknown): Promise<boolean> {
  try {
    await kv.create(key, enc.encode(JSON.stringify(doc)))
    return true
  } catch (err) {
    if (isRevisionConflict(err)) return false
    throw err
  }
}

/**
 * Read-modify-write with retry. `change` sees the current document and returns the next one,
 * or undefined to leave it as it is; it may run several times, so it must not have side effects.
 * Returns the document as written (or as found), undefined when the key does not exist.
 */
export async function updateDoc<S extends z.ZodTypeAny>(
  kv: KV,
  key: string,
  schema: S,
  change: (current: z.infer<S>) => z.infer<S> | undefined,
): Promise<z.infer<S> | undefined> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const current = await readDoc(kv, key, schema)
    if (!current) return undefined
    const next = change(current.doc)
    if (next === undefined) return current.doc
    try {
      await kv.update(key, enc.encode(JSON.stringify(next)), current.revision)
      return next
    } catch (err) {
      if (!isRevisionConflict(err)) throw err
      // Another writer got there first; a short random pause keeps many racers from colliding again.
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(50, 2 * (attempt + 1))))
    }
  }
  throw new Error(`too many concurrent writes to ${key}`)
}

/** A revision-checked counter for integer ids. */
export async function nextSequence(kv: KV, key: string): Promise<number> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const e = await kv.get(key)
    const current = e?.operation === 'PUT' ? Number(dec.decode(e.value)) : 0
    try {
      if (e?.operation === 'PUT') await kv.update(key, enc.encode(String(current + 1)), e.revision)
      else if (!(await createDoc(kv, key, current + 1))) continue
      return current + 1
    } catch (err) {
      if (!isRevisionConflict(err)) throw err
    }
  }
  throw new Error(`could not allocate a value of ${key}`)
}

/** Every key under `filter` (e.g. `p.12.*`); empty when none. */
export async function listKeys(kv: KV, filter: string): Promise<string[]> {
  const out: string[] = []
  for await (const k of await kv.keys(filter)) out.push(k)
  return out
}

/** The documents under `filter`, read in parallel; keys deleted meanwhile are skipped. */
export async function listDocs<S extends z.ZodTypeAny>(
  kv: KV,
  filter: string,
  schema: S,
): Promise<z.infer<S>[]> {
  const keys = await listKeys(kv, filter)
  const docs = await Promise.all(keys.map((k) => readDoc(kv, k, schema)))
  return docs.filter((d) => d !== undefined).map((d) => d.doc)
}

import type { KV, KvEntry } from '@nats-io/kv'
import type { z } from 'zod'
import { backoffDelay, type BackoffPolicy, sleep } from '../retry/backoff.ts'

// JSON documents in a JetStream KV bucket with optimistic concurrency: every write names the
// revision it read, and a writer that lost the race reads again and reapplies its change. Only a
// revision conflict is retried; any other error (NATS down, a document that does not parse) is
// the caller's to see.

const enc = new TextEncoder()
const dec = new TextDecoder()

const WRONG_LAST_SEQUENCE = new Set([10071, 10164])
const MAX_ATTEMPTS = 100
// A short random pause keeps many racers on one key from colliding again in lockstep.
const CONFLICT_PAUSE: BackoffPolicy = { initialMs: 2, maxMs: 50, jitter: true }

/** True when `err` is JetStream's "wrong last sequence": someone else wrote the key first. */
export function isRevisionConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'number' && WRONG_LAST_SEQUENCE.has(code)
}

/** Minimal shape of a KV entry, as `get` and `watch` hand them out. */
export interface KvValue {
  operation: string
  value: Uint8Array
}

/** True when the entry holds a value: a PUT with content, not a delete or purge marker. */
export function isLive<E extends KvValue>(e: E | null | undefined): e is E {
  return e !== null && e !== undefined && e.operation === 'PUT' && e.value.length > 0
}

/** The entry's value parsed as JSON and checked by `schema`; throws when it does not fit. */
export function decodeDoc<S extends z.ZodTypeAny>(e: KvValue, schema: S): z.infer<S> {
  return schema.parse(JSON.parse(dec.decode(e.value)))
}

/** A document with the revision it was read at. */
export interface Versioned<T> {
  doc: T
  revision: number
}

/** The live document at `key`, or undefined when it does not exist (or was deleted). */
export async function readDoc<S extends z.ZodTypeAny>(
  kv: KV,
  key: string,
  schema: S,
): Promise<Versioned<z.infer<S>> | undefined> {
  const e = await kv.get(key)
  if (!isLive(e)) return undefined
  return { doc: decodeDoc(e, schema), revision: e.revision }
}

/** Writes `doc` whatever is there (for documents with one writer or none to race). */
export async function putDoc(kv: KV, key: string, doc: unknown): Promise<number> {
  return kv.put(key, enc.encode(JSON.stringify(doc)))
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

/** Writes `doc` only if `key` is still at `revision`; false when someone wrote it since. */
export async function replaceDoc(kv: KV, key: string, doc: unknown, revision: number): Promise<boolean> {
  try {
    await kv.update(key, enc.encode(JSON.stringify(doc)), revision)
    return true
  } catch (err) {
    if (isRevisionConflict(err)) return false
    throw err
  }
}

/** Deletes `key` only if it is still at `revision`; false when someone wrote it since. */
export async function deleteDoc(kv: KV, key: string, revision: number): Promise<boolean> {
  try {
    await kv.delete(key, { previousSeq: revision })
    return true
  } catch (err) {
    if (isRevisionConflict(err)) return false
    throw err
  }
}

/**
 * Runs `attempt` until it reports success (a value other than undefined), pausing briefly between
 * tries. For read-modify-write loops whose write lost a race: the attempt reads again each time.
 */
export async function untilWritten<T>(
  what: string,
  attempt: (n: number) => Promise<T | undefined>,
): Promise<T> {
  for (let n = 1; n <= MAX_ATTEMPTS; n++) {
    const done = await attempt(n)
    if (done !== undefined) return done
    await sleep(backoffDelay(CONFLICT_PAUSE, n))
  }
  throw new Error(`too many concurrent writes to ${what}`)
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
  const outcome = await untilWritten(key, async () => {
    const current = await readDoc(kv, key, schema)
    if (!current) return { doc: undefined }
    const next = change(current.doc)
    if (next === undefined) return { doc: current.doc }
    return (await replaceDoc(kv, key, next, current.revision)) ? { doc: next } : undefined
  })
  return outcome.doc
}

/** A revision-checked counter for integer ids: concurrent callers never get the same value. */
export async function nextSequence(kv: KV, key: string): Promise<number> {
  return untilWritten(key, async () => {
    const e: KvEntry | null = await kv.get(key)
    const next = (isLive(e) ? Number(dec.decode(e.value)) : 0) + 1
    const written = isLive(e) ? await replaceDoc(kv, key, next, e.revision) : await createDoc(kv, key, next)
    return written ? next : undefined
  })
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

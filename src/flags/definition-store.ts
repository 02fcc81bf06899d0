import type { KV, KvEntry } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import type { FlagCreate, FlagPatch } from './definition.ts'
import {
  flagEntryKey,
  idSequenceKey,
  keyIndexKey,
  type StoredFlag,
  storedFlagSchema,
} from './stored-definition.ts'

const enc = new TextEncoder()
const dec = new TextDecoder()

// Revision conflicts are retried this often before giving up; each retry re-reads.
const MAX_ATTEMPTS = 50
// A key reservation whose flag never got written (a creator that died in between) is taken over
// after this long; a younger one may belong to a create still in flight.
const STALE_RESERVATION_MS = 30_000

interface Reservation {
  id: number
  at: number
}

const live = (e: KvEntry | null): e is KvEntry => e !== null && e.operation === 'PUT' && e.value.length > 0
const json = (e: KvEntry) => JSON.parse(dec.decode(e.value)) as unknown

export class DuplicateKey extends ValidationError {
  constructor() {
    super('There is already a feature flag with this key.', 'key', 'unique')
  }
}

/**
 * Feature flag definitions in the flags bucket: one entry per flag (`flag.<team>.<id>`), written
 * with revision checks so concurrent edits never overwrite each other, plus a per-project index
 * `key.<team>.<key>` that makes keys unique among the project's non-deleted flags, and a
 * per-project id sequence. Soft-deleted flags release their key, as in PostHog.
 */
export class FlagStore {
  constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<FlagStore> {
    return new FlagStore(await bucket(nc, BUCKETS.flags))
  }

  private async read(teamId: number, id: number): Promise<{ flag: StoredFlag; revision: number } | null> {
    const e = await this.kv.get(flagEntryKey(teamId, id))
    if (!live(e)) return null
    return { flag: storedFlagSchema.parse(json(e)), revision: e.revision }
  }

  async get(teamId: number, id: number): Promise<StoredFlag> {
    const found = await this.read(teamId, id)
    if (!found) throw new NotFound()
    return found.flag
  }

  /** Every flag of the project, deleted ones included, by id. */
  async list(teamId: number): Promise<StoredFlag[]> {
    const out: StoredFlag[] = []
    for await (const k of await this.kv.keys(`flag.${teamId}.*`)) {
      const e = await this.kv.get(k)
      if (live(e)) out.push(storedFlagSchema.parse(json(e)))
    }
    return out.sort((a, b) => a.id - b.id)
  }

  private async nextId(teamId: number): Promise<number> {
    const key = idSequenceKey(teamId)
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const e = await this.kv.get(key)
      const next = (live(e) ? Number(dec.decode(e.value)) : 0) + 1
      try {
        if (live(e)) await this.kv.update(key, enc.encode(String(next)), e.revision)
        else await this.kv.create(key, enc.encode(String(next)))
        return next
      } catch {
        // another writer took this id: read again
      }
    }
    throw new Error(`could not allocate a feature flag id for project ${teamId}`)
  }

  /** Claims `key` for flag `id`; throws DuplicateKey when a live flag of the project holds it. */
  private async reserveKey(teamId: number, key: string, id: number): Promise<void> {
    const indexKey = keyIndexKey(teamId, key)
    const doc = (): Uint8Array => enc.encode(JSON.stringify({ id, at: Date.now() } satisfies Reservation))
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const e = await this.kv.get(indexKey)
      try {
        if (!live(e)) {
          await this.kv.create(indexKey, doc())
          return
        }
        const held = json(e) as Reservation
        if (held.id === id) return
        const holder = await this.read(teamId, held.id)
        const stillHeld = holder
          ? !holder.flag.deleted && holder.flag.key === key
          : Date.now() - held.at < STALE_RESERVATION_MS
        if (stillHeld) throw new DuplicateKey()
        await this.kv.update(indexKey, doc(), e.revision)
        return
      } catch (err) {
        if (err instanceof DuplicateKey) throw err
        // lost a race on the index entry: look again
      }
    }
    throw new Error(`could not reserve feature flag key ${key}`)
  }

  /** Drops `key`'s reservation if flag `id` holds it. */
  private async releaseKey(teamId: number, key: string, id: number): Promise<void> {
    const indexKey = keyIndexKey(teamId, key)
    const e = await this.kv.get(indexKey)
    if (!live(e) || (json(e) as Reservation).id !== id) return
    await this.kv.delete(indexKey, { previousSeq: e.revision }).catch(() => undefined)
  }

  async create(teamId: number, input: FlagCreate, createdBy: number | null): Promise<StoredFlag> {
    const id = await this.nextId(teamId)
    const now = new Date().toISOString()
    const flag = storedFlagSchema.parse({
      ...input,
      id,
      team_id: teamId,
      version: 1,
      created_at: now,
      updated_at: now,
      created_by: createdBy,
    })
    if (!flag.deleted) await this.reserveKey(teamId, flag.key, id)
    try {
      await this.kv.create(flagEntryKey(teamId, id), enc.encode(JSON.stringify(flag)))
    } catch (err) {
      if (!flag.deleted) await this.releaseKey(teamId, flag.key, id)
      throw err
    }
    return flag
  }

  /** Applies a PATCH: replaces the given fields, bumps `version`, keeps keys unique. */
  async update(teamId: number, id: number, patch: FlagPatch): Promise<StoredFlag> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current = await this.read(teamId, id)
      if (!current) throw new NotFound()
      const before = current.flag
      const defined = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined))
      const after = storedFlagSchema.parse({
        ...before,
        ...defined,
        version: before.version + 1,
        updated_at: new Date().toISOString(),
      })
      const claims = !after.deleted && (before.deleted || before.key !== after.key)
      const releases = !before.deleted && (after.deleted || before.key !== after.key)
      if (claims) await this.reserveKey(teamId, after.key, id)
      try {
        await this.kv.update(flagEntryKey(teamId, id), enc.encode(JSON.stringify(after)), current.revision)
      } catch {
        // someone else changed the flag in between: undo the claim and start over from a fresh read
        if (claims) await this.releaseKey(teamId, after.key, id)
        continue
      }
      if (releases) await this.releaseKey(teamId, before.key, id)
      return after
    }
    throw new Error(`could not update feature flag ${id}: too many concurrent changes`)
  }
}

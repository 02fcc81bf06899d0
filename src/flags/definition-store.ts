import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import {
  createDoc,
  deleteDoc,
  listDocs,
  nextSequence,
  readDoc,
  replaceDoc,
  untilWritten,
  type Versioned,
} from '../jetstream/kv-document.ts'
import type { FlagCreate, FlagPatch } from './definition.ts'
import {
  flagEntryKey,
  idSequenceKey,
  keyIndexKey,
  type StoredFlag,
  storedFlagSchema,
} from './stored-definition.ts'

// A key reservation whose flag never got written (a creator that died in between) is taken over
// after this long; a younger one may belong to a create still in flight.
const STALE_RESERVATION_MS = 30_000

const Reservation = z.object({ id: z.number().int(), at: z.number() })
type Reservation = z.infer<typeof Reservation>

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

  private read(teamId: number, id: number): Promise<Versioned<StoredFlag> | undefined> {
    return readDoc(this.kv, flagEntryKey(teamId, id), storedFlagSchema)
  }

  async get(teamId: number, id: number): Promise<StoredFlag> {
    const found = await this.read(teamId, id)
    if (!found) throw new NotFound()
    return found.doc
  }

  /** Every flag of the project, deleted ones included, by id. */
  async list(teamId: number): Promise<StoredFlag[]> {
    return (await listDocs(this.kv, `flag.${teamId}.*`, storedFlagSchema)).sort((a, b) => a.id - b.id)
  }

  private nextId(teamId: number): Promise<number> {
    return nextSequence(this.kv, idSequenceKey(teamId))
  }

  /** Claims `key` for flag `id`; throws DuplicateKey when a live flag of the project holds it. */
  private async reserveKey(teamId: number, key: string, id: number): Promise<void> {
    const indexKey = keyIndexKey(teamId, key)
    const doc = (): Reservation => ({ id, at: Date.now() })
    await untilWritten(indexKey, async () => {
      const held = await readDoc(this.kv, indexKey, Reservation)
      if (!held) return (await createDoc(this.kv, indexKey, doc())) || undefined
      if (held.doc.id === id) return true
      const holder = await this.read(teamId, held.doc.id)
      const stillHeld = holder
        ? !holder.doc.deleted && holder.doc.key === key
        : Date.now() - held.doc.at < STALE_RESERVATION_MS
      if (stillHeld) throw new DuplicateKey()
      return (await replaceDoc(this.kv, indexKey, doc(), held.revision)) || undefined
    })
  }

  /** Drops `key`'s reservation if flag `id` holds it; a reservation changed meanwhile is left. */
  private async releaseKey(teamId: number, key: string, id: number): Promise<void> {
    const indexKey = keyIndexKey(teamId, key)
    const held = await readDoc(this.kv, indexKey, Reservation)
    if (!held || held.doc.id !== id) return
    await deleteDoc(this.kv, indexKey, held.revision)
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
    let created = false
    try {
      created = await createDoc(this.kv, flagEntryKey(teamId, id), flag)
    } finally {
      if (!created && !flag.deleted) await this.releaseKey(teamId, flag.key, id)
    }
    if (!created) throw new Error(`feature flag ${teamId}/${id} already exists`)
    return flag
  }

  /** Applies a PATCH: replaces the given fields, bumps `version`, keeps keys unique. */
  update(teamId: number, id: number, patch: FlagPatch): Promise<StoredFlag> {
    return untilWritten(`feature flag ${id}`, async () => {
      const current = await this.read(teamId, id)
      if (!current) throw new NotFound()
      const before = current.doc
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
      if (!(await replaceDoc(this.kv, flagEntryKey(teamId, id), after, current.revision))) {
        // someone else changed the flag in between: undo the claim and start over from a fresh read
        if (claims) await this.releaseKey(teamId, after.key, id)
        return undefined
      }
      if (releases) await this.releaseKey(teamId, before.key, id)
      return after
    })
  }
}

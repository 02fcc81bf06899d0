import { randomInt } from 'node:crypto'
import type { KV } from '@nats-io/kv'
import { z } from 'zod'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, listKeys, nextSequence, readDoc, updateDoc } from '../jetstream/kv-document.ts'

// Playlists and the recordings pinned to them, in the `burrow_playlists` KV bucket:
//   p.<team>.<short_id>                  the playlist document
//   r.<team>.<short_id>.<session b64url>  one pinned recording (kept apart so adding a recording
//                                         never races a PATCH of the playlist's fields)
//   seq.playlist                          the integer id counter

export const PlaylistDoc = z.object({
  id: z.number().int(),
  short_id: z.string(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  derived_name: z.string().nullable(),
  description: z.string(),
  pinned: z.boolean(),
  deleted: z.boolean(),
  filters: z.unknown(),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
  last_modified_at: z.string(),
  last_modified_by: z.number().int().nullable(),
})
export type Playlist = z.infer<typeof PlaylistDoc>

export const PlaylistItemDoc = z.object({
  session_id: z.string(),
  added_at: z.string(),
  added_by: z.number().int().nullable(),
})
export type PlaylistItem = z.infer<typeof PlaylistItemDoc>

/** Fields a client may write, on create and on PATCH. */
export interface PlaylistChanges {
  name?: string | null
  derived_name?: string | null
  description?: string
  pinned?: boolean
  deleted?: boolean
  filters?: unknown
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'
const shortId = () => Array.from({ length: 8 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')

const playlistKey = (team: number, short: string) => `p.${team}.${short}`
const itemPrefix = (team: number, short: string) => `r.${team}.${short}`
// Session ids are client-chosen strings; KV keys allow only [-/_=.a-zA-Z0-9].
const itemKey = (team: number, short: string, sessionId: string) =>
  `${itemPrefix(team, short)}.${Buffer.from(sessionId).toString('base64url') || '='}`

/** Short ids are ours (8 alphanumerics); anything else cannot name a playlist. */
export const isShortId = (s: string) => /^[A-Za-z0-9]{1,32}$/.test(s)

export class PlaylistStore {
  private constructor(private readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<PlaylistStore> {
    return new PlaylistStore(await bucket(nc, BUCKETS.playlists))
  }

  async create(team: number, userId: number, input: PlaylistChanges): Promise<Playlist> {
    const id = await nextSequence(this.kv, 'seq.playlist')
    const now = new Date().toISOString()
    for (let attempt = 0; attempt < 10; attempt++) {
      const doc: Playlist = {
        id,
        short_id: shortId(),
        team_id: team,
        name: input.name ?? null,
        derived_name: input.derived_name ?? null,
        description: input.description ?? '',
        pinned: input.pinned ?? false,
        deleted: input.deleted ?? false,
        filters: input.filters === undefined ? {} : input.filters,
        created_at: now,
        created_by: userId,
        last_modified_at: now,
        last_modified_by: userId,
      }
      if (await createDoc(this.kv, playlistKey(team, doc.short_id), doc)) return doc
    }
    throw new Error('could not allocate a playlist short id')
  }

  /** Including soft-deleted ones: PATCH may bring a playlist back. */
  async get(team: number, short: string): Promise<Playlist | undefined> {
    if (!isShortId(short)) return undefined
    return (await readDoc(this.kv, playlistKey(team, short), PlaylistDoc))?.doc
  }

  async list(team: number): Promise<Playlist[]> {
    return listDocs(this.kv, `p.${team}.*`, PlaylistDoc)
  }

  /** Applies `changes` to the latest revision, retrying on conflicts, so no concurrent change is lost. */
  async update(
    team: number,
    short: string,
    userId: number,
    changes: PlaylistChanges,
  ): Promise<Playlist | undefined> {
    if (!isShortId(short)) return undefined
    return updateDoc(this.kv, playlistKey(team, short), PlaylistDoc, (current) => {
      const next: Playlist = { ...current }
      for (const [k, v] of Object.entries(changes)) {
        if (v !== undefined) (next as Record<string, unknown>)[k] = v
      }
      next.last_modified_at = new Date().toISOString()
      next.last_modified_by = userId
      return next
    })
  }

  /** Idempotent: adding a recording twice keeps its first `added_at`. */
  async addRecording(team: number, short: string, sessionId: string, userId: number): Promise<void> {
    const doc: PlaylistItem = { session_id: sessionId, added_at: new Date().toISOString(), added_by: userId }
    await createDoc(this.kv, itemKey(team, short, sessionId), doc)
  }

  /** False when the recording was not in the playlist. */
  async removeRecording(team: number, short: string, sessionId: string): Promise<boolean> {
    const key = itemKey(team, short, sessionId)
    const current = await readDoc(this.kv, key, PlaylistItemDoc)
    if (!current) return false
    await this.kv.delete(key)
    return true
  }

  /** The playlist's recordings, most recently added first. */
  async recordings(team: number, short: string): Promise<PlaylistItem[]> {
    const items = await listDocs(this.kv, `${itemPrefix(team, short)}.*`, PlaylistItemDoc)
    return items.sort((a, b) => (a.added_at < b.added_at ? 1 : a.added_at > b.added_at ? -1 : 0))
  }

  /** Short ids of the team's playlists that hold `sessionId`. */
  async playlistsHolding(team: number, sessionId: string): Promise<Set<string>> {
    const suffix = itemKey(team, '*', sessionId).split('.').pop()
    return new Set((await listKeys(this.kv, `r.${team}.*.${suffix}`)).map((k) => k.split('.')[2] ?? ''))
  }

  /** Every pinned recording (of one team, or of all), read from the key names alone. */
  async pinned(team?: number): Promise<{ team_id: number; short_id: string; session_id: string }[]> {
    const keys = await listKeys(this.kv, team === undefined ? 'r.>' : `r.${team}.*.*`)
    return keys.map((k) => {
      const [, t, short, id] = k.split('.')
      return {
        team_id: Number(t),
        short_id: short ?? '',
        session_id: id === '=' ? '' : Buffer.from(id ?? '', 'base64url').toString(),
      }
    })
  }
}

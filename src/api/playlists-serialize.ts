import { z } from 'zod'
import type { User } from '../config/documents.ts'
import type { ConfigStore } from '../config/store.ts'
import type { Playlist } from './playlists-store.ts'

// Response shapes of the playlist endpoints, exactly the fields of the spec's tables.

/** PostHog's basic user object; `hedgehog_config` is the spec's `<mascot>_config`. */
export const UserBasic = z.object({
  id: z.number().int(),
  uuid: z.string(),
  distinct_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  is_email_verified: z.boolean().nullable(),
  hedgehog_config: z.record(z.string(), z.unknown()).nullable(),
  role_at_organization: z.string().nullable(),
})
export type UserBasic = z.infer<typeof UserBasic>

// Burrow does not verify e-mails, keep hedgehog settings or ask for a role: the values PostHog
// sends for a user who never set them.
export const userBasic = (u: User): UserBasic => ({
  id: u.id,
  uuid: u.uuid,
  distinct_id: u.distinct_id,
  first_name: u.first_name,
  last_name: u.last_name,
  email: u.email,
  is_email_verified: false,
  hedgehog_config: null,
  role_at_organization: null,
})

export const RecordingsCounts = z.record(z.string(), z.record(z.string(), z.number().int()))

export const PlaylistBody = z.object({
  id: z.number().int(),
  short_id: z.string(),
  name: z.string().nullable(),
  derived_name: z.string().nullable(),
  description: z.string(),
  pinned: z.boolean(),
  created_at: z.string(),
  created_by: UserBasic.nullable(),
  deleted: z.boolean(),
  filters: z.unknown(),
  last_modified_at: z.string(),
  last_modified_by: UserBasic.nullable(),
  recordings_counts: RecordingsCounts,
})
export type PlaylistBody = z.infer<typeof PlaylistBody>

/** Resolves user ids once per request. */
export function userResolver(store: ConfigStore): (id: number | null) => Promise<UserBasic | null> {
  const cache = new Map<number, Promise<UserBasic | null>>()
  return (id) => {
    if (id === null) return Promise.resolve(null)
    let p = cache.get(id)
    if (!p) {
      p = store.getUser(id).then((u) => (u ? userBasic(u) : null))
      cache.set(id, p)
    }
    return p
  }
}

/**
 * `collection` counts the recordings pinned to the playlist. Saved-filter counts (PostHog's
 * `saved_filters`) need a background job evaluating the filters, which Burrow does not run, so
 * that entry is left out rather than filled with made-up numbers. Views are not tracked: 0 watched.
 */
export const recordingsCounts = (pinned: number) => ({ collection: { count: pinned, watched_count: 0 } })

export async function playlistBody(
  p: Playlist,
  pinnedCount: number,
  user: (id: number | null) => Promise<UserBasic | null>,
): Promise<PlaylistBody> {
  return {
    id: p.id,
    short_id: p.short_id,
    name: p.name,
    derived_name: p.derived_name,
    description: p.description,
    pinned: p.pinned,
    created_at: p.created_at,
    created_by: await user(p.created_by),
    deleted: p.deleted,
    filters: p.filters ?? null,
    last_modified_at: p.last_modified_at,
    last_modified_by: await user(p.last_modified_by),
    recordings_counts: recordingsCounts(pinnedCount),
  }
}

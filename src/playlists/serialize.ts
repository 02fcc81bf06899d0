import { z } from 'zod'
import type { Playlist } from './store.ts'
import { UserBasic } from '../accounts/user-body.ts'

// Response shapes of the playlist endpoints, exactly the fields of the spec's tables.

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

/**
 * `collection` counts the recordings pinned to the playlist and how many of them the requesting user
 * has viewed. Saved-filter counts (PostHog's `saved_filters`) need a background job evaluating the
 * filters, which Burrow does not run, so that entry is left out rather than filled with made-up numbers.
 */
export const recordingsCounts = (pinned: number, watched = 0) => ({
  collection: { count: pinned, watched_count: watched },
})

export async function playlistBody(
  p: Playlist,
  pinnedCount: number,
  user: (id: number | null) => Promise<UserBasic | null>,
  watchedCount = 0,
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
    recordings_counts: recordingsCounts(pinnedCount, watchedCount),
  }
}

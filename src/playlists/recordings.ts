import type { Runtime } from '../runtime/types.ts'
import { recordingsReader } from '../recordings/index.ts'
import {
  RecordingBody,
  type RecordingBody as RecordingBodyType,
  unknownRecordingBody,
} from '../recordings/serialize.ts'

// What a playlist shows of its recordings comes from the recordings projection (src/recordings/,
// docs/recordings.md): the recording as the session_recordings API returns it.

export const RecordingSummary = RecordingBody
export type RecordingSummary = RecordingBodyType

/** The recordings of the given session ids as `userId` sees them; ids without one get empty values. */
export async function summarizeSessions(
  rt: Runtime,
  teamId: number,
  userId: number,
  sessionIds: string[],
): Promise<Map<string, RecordingSummary>> {
  return (await recordingsReader(rt)).byIds(teamId, userId, sessionIds)
}

/** How many of the sessions the user has viewed (`recordings_counts.collection.watched_count`). */
export async function watchedCount(rt: Runtime, teamId: number, userId: number, sessionIds: string[]) {
  return (await recordingsReader(rt)).watchedCount(teamId, userId, sessionIds)
}

/** A recording pinned before any of its snapshots arrived: known by id only. */
export const unknownRecording = unknownRecordingBody

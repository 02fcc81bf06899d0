import { type KV, Kvm } from '@nats-io/kv'
import { manager, type NatsConnection } from '../jetstream/connection.ts'
import { partitionOf } from '../jetstream/messages.ts'

// Session recordings have a log of their own: the RECORDINGS stream (snapshot chunks and recording
// deletions), apart from EVENTS so that replay traffic, often megabytes per request, never queues in
// front of analytics events. Its projector keeps its watermark, viewed marks and pause switch in the
// `burrow_recordings` KV bucket. Both are created (or their limits updated) when a process starts.

export const RECORDINGS_STREAM = 'RECORDINGS'
export const RECORDINGS_BUCKET = { name: 'burrow_recordings', history: 1, ttlSeconds: 0 }

/** Subject of a team's recording messages: one partition per team keeps its log order. */
export const recordingsSubject = (teamId: number, partitions: number) =>
  `recordings.${partitionOf(teamId, partitions)}`

const SECOND_NS = 1_000_000_000

/** Creates the stream and bucket when missing; applies a changed max age. Idempotent. */
export async function ensureRecordingsLog(nc: NatsConnection, opts: { maxAgeDays: number }): Promise<void> {
  const jsm = await manager(nc)
  const want = {
    subjects: ['recordings.>'],
    max_age: Math.round(opts.maxAgeDays * 24 * 3600) * SECOND_NS,
    max_bytes: -1,
    duplicate_window: 120 * SECOND_NS,
  }
  const existing = await jsm.streams.info(RECORDINGS_STREAM).catch(() => undefined)
  if (!existing) {
    await jsm.streams.add({ name: RECORDINGS_STREAM, ...want }).catch(async (err: unknown) => {
      // another process created it first
      if (!(await jsm.streams.info(RECORDINGS_STREAM).catch(() => undefined))) throw err
    })
  } else if (existing.config.max_age !== want.max_age) {
    await jsm.streams.update(RECORDINGS_STREAM, { ...existing.config, max_age: want.max_age })
  }
  const kvm = new Kvm(nc)
  if (!(await jsm.streams.info(`KV_${RECORDINGS_BUCKET.name}`).catch(() => undefined))) {
    await kvm.create(RECORDINGS_BUCKET.name, { history: RECORDINGS_BUCKET.history }).catch(() => undefined)
  }
}

/** The recordings bucket (ensureRecordingsLog must have run). */
export async function recordingsBucket(nc: NatsConnection): Promise<KV> {
  return new Kvm(nc).open(RECORDINGS_BUCKET.name)
}

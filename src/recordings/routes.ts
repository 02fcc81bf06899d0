import { admissionLimits, QueryAdmission } from '../queries/admission.ts'
import { jetstream } from '@nats-io/jetstream'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { z } from 'zod'
import { NotFound, Unavailable, ValidationError } from '../http/errors.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import type { PlaylistStore } from '../playlists/store.ts'
import { decodeParams, parseRecordingsFilter } from './filters.ts'
import { encodeMessage } from './message.ts'
import { deletedRow } from './projection.ts'
import type { RecordingsReader } from './reader.ts'
import { RecordingBody } from './serialize.ts'
import {
  isDeleted,
  listSummaries,
  sessionBlocks,
  snapshotLines,
  summariesById,
  testAccountSessionsSQL,
} from './store.ts'
import { recordingsSubject } from './stream.ts'
import { LIVE_RECORDING_TABLES } from './tables.ts'
import type { ViewedStore } from './viewed.ts'

// Session recordings API, in PostHog's shapes (posthog/session_recordings/session_recording_api.py):
// list with filters, retrieve, snapshots (v2: the `sources` list, then blob data per source range),
// viewed marks, delete. Scopes session_recording:read / session_recording:write.

const READ = 'session_recording:read'
const WRITE = 'session_recording:write'
const TAGS = ['session_recordings']

const ProjectParams = z.object({ project_id: z.string() })
const RecordingParams = ProjectParams.extend({ id: z.string().min(1).max(200) })
const AnyQuery = z.record(z.string(), z.unknown())

const ListResponse = z.object({
  results: z.array(RecordingBody),
  has_next: z.boolean(),
  version: z.number().int(),
})

const SnapshotsQuery = z.object({
  source: z.string().nullable().optional(),
  start_blob_key: z.string().optional(),
  end_blob_key: z.string().optional(),
  blob_key: z.string().optional(),
  decompress: z.string().optional(),
})

const UpdateBody = z
  .object({
    viewed: z.boolean().optional(),
    analyzed: z.boolean().optional(),
    player_metadata: z.unknown().optional(),
  })
  .refine((b) => b.viewed || b.analyzed, {
    message: "At least one of 'viewed' or 'analyzed' must be provided.",
  })

/** PostHog's cap on blocks per snapshots request made with a personal API key. */
export const MAX_BLOBS_PER_REQUEST = 20
/** how long DELETE waits for the projector to record the deletion */

export interface RecordingRoutesDeps {
  reader: RecordingsReader
  viewed: ViewedStore
  playlists: PlaylistStore
  partitions: number
}

export function registerRecordingRoutes(app: FastifyInstance, ctx: ApiContext, d: RecordingRoutesDeps): void {
  // Reads a user starts run under the query limits (queryCh: max_memory_usage, max_execution_time)
  // and hold a slot of the process's query admission while they run, as HogQL queries do.
  const ch = ctx.rt.queryCh
  const js = jetstream(ctx.rt.nc)
  const admission = QueryAdmission.of(ctx.rt, admissionLimits(ctx.rt.config))
  const admitted = async <T>(project: number, key: string, read: () => Promise<T>): Promise<T> => {
    const release = admission.admit(project, key)
    try {
      return await read()
    } finally {
      release()
    }
  }

  const summaryOr404 = async (team: number, id: string) => {
    const s = (await summariesById(ch, team, [id])).get(id)
    if (!s) throw new NotFound('Recording not found.')
    return s
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recordings/',
    scope: READ,
    tags: TAGS,
    summary: 'List recordings, newest first (PostHog RecordingsQuery parameters, JSON-encoded)',
    query: AnyQuery,
    response: { 200: ListResponse },
    handler: (req, _reply, { principal, project }) =>
      admitted(project.id, principal.key.id, async () => {
        const f = parseRecordingsFilter(decodeParams(req.query as Record<string, unknown>), {
          timezone: project.timezone,
          nowMs: Date.now(),
        })
        let sessionIds = f.sessionIds
        if (f.playlist !== null) {
          const p = await d.playlists.get(project.id, f.playlist)
          if (!p || p.deleted) throw new NotFound('Playlist not found.')
          const held = (await d.playlists.recordings(project.id, p.short_id)).map((i) => i.session_id)
          sessionIds = sessionIds ? sessionIds.filter((s) => held.includes(s)) : held
        }
        let distinctIds = f.distinctIds
        if (f.personUuid !== null) {
          const ofPerson = await d.reader.distinctIdsOf(project.id, f.personUuid)
          distinctIds = distinctIds ? distinctIds.filter((x) => ofPerson.includes(x)) : ofPerson
        }
        const testAccountSessions = await testAccountSessionsSQL(project, f)
        const page = await listSummaries(ch, project.id, f, { sessionIds, distinctIds, testAccountSessions })
        return {
          results: await d.reader.bodies(project.id, principal.user.id, page.results),
          has_next: page.hasNext,
          version: 4,
        }
      }),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recordings/:id/',
    scope: READ,
    tags: TAGS,
    summary: 'Retrieve a recording with its person',
    params: RecordingParams,
    response: { 200: RecordingBody },
    handler: (req, _reply, { principal, project }) =>
      admitted(project.id, principal.key.id, async () => {
        const s = await summaryOr404(project.id, req.params.id)
        const [body] = await d.reader.bodies(project.id, principal.user.id, [s])
        return body
      }),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recordings/:id/snapshots/',
    scope: READ,
    tags: TAGS,
    summary:
      "Without `source`: the recording's sources. With `source=blob_v2&start_blob_key=a&end_blob_key=b`: " +
      'the rrweb events of blocks a..b as JSON lines `[window_id, event]`',
    params: RecordingParams,
    query: SnapshotsQuery,
    handler: (req, reply: FastifyReply, { principal, project }) =>
      admitted(project.id, principal.key.id, async () => {
        const id = req.params.id as string
        const q = req.query
        const source = q.source ?? null
        if (source !== null && source !== 'blob_v2' && source !== 'blob_v2_lts') {
          throw new ValidationError('Invalid source must be one of [blob_v2, blob_v2_lts, None]', 'source')
        }
        if (await isDeleted(ch, project.id, id)) throw new NotFound('Recording not found.')
        const blocks = await sessionBlocks(ch, project.id, id)
        if (blocks.length === 0) throw new NotFound('Recording not found.')
        if (source === null) {
          return {
            sources: blocks.map((b, i) => ({
              source: 'blob_v2',
              start_timestamp: new Date(b.start_ms).toISOString(),
              end_timestamp: new Date(b.end_ms).toISOString(),
              blob_key: String(i),
            })),
          }
        }
        if (source === 'blob_v2_lts') throw new NotFound('Recording not found.')
        if (!q.start_blob_key || !q.end_blob_key) {
          throw new ValidationError('Must provide both start blob key and end blob key', 'start_blob_key')
        }
        const from = Number(q.start_blob_key)
        const to = Number(q.end_blob_key)
        if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to < from) {
          throw new ValidationError('Blob keys must be integers', 'start_blob_key')
        }
        if (to - from > MAX_BLOBS_PER_REQUEST) {
          throw new ValidationError(
            `Cannot request more than ${MAX_BLOBS_PER_REQUEST} blob keys at once`,
            'end_blob_key',
          )
        }
        if (to >= blocks.length) throw new NotFound('Block index out of range')
        const lines = await snapshotLines(ch, project.id, id, blocks[from]!.fromMs, blocks[to]!.toMs)
        const end = lines.length && lines[lines.length - 1] === 0x0a ? lines.length - 1 : lines.length
        return reply
          .header('content-type', 'application/jsonl')
          .header('content-disposition', 'inline')
          .header('cache-control', 'no-store')
          .send(lines.subarray(0, end))
      }),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recordings/:id/viewed/',
    scope: READ,
    tags: TAGS,
    summary: 'Whether you viewed the recording, and how many others did',
    params: RecordingParams,
    response: { 200: z.object({ viewed: z.boolean(), other_viewers: z.number().int() }) },
    handler: async (req, _reply, { principal, project }) => {
      const who = (await d.viewed.viewers(project.id, [req.params.id])).get(req.params.id) ?? []
      return {
        viewed: who.includes(principal.user.id),
        other_viewers: who.filter((u) => u !== principal.user.id).length,
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/session_recordings/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Mark the recording viewed (`{"viewed": true}`) or analyzed',
    params: RecordingParams,
    body: UpdateBody,
    response: { 200: z.object({ success: z.boolean() }) },
    handler: async (req, _reply, { principal, project }) => {
      await summaryOr404(project.id, req.params.id)
      if (req.body.viewed) {
        await d.viewed.markViewed(project.id, req.params.id, principal.user.id)
      }
      return { success: true }
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/session_recordings/:id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Delete the recording: hidden at once, its data removed, later snapshots of it ignored',
    params: RecordingParams,
    handler: async (req, reply: FastifyReply, { principal, project }) => {
      const id = req.params.id as string
      await summaryOr404(project.id, id)
      const header = {
        v: 1 as const,
        kind: 'delete' as const,
        team_id: project.id,
        session_id: id,
        deleted_at: new Date().toISOString(),
        deleted_by: principal.user.id,
      }
      let seq: number
      try {
        const ack = await js.publish(recordingsSubject(project.id, d.partitions), encodeMessage(header), {
          msgID: `recdel-${project.id}-${Buffer.from(id).toString('base64url')}`,
        })
        seq = ack.seq
      } catch (err) {
        throw new Unavailable(
          `The recordings log did not acknowledge the deletion: ${(err as Error).message}`,
        )
      }
      // Hidden at once: the deletion row the projector writes (same sequence, so the same row) is
      // written here too, since readers exclude deleted sessions by it; the projector removes the
      // data. Waiting for the projector instead left the recording visible whenever it was busy.
      await ch.insert({
        table: LIVE_RECORDING_TABLES.deleted,
        values: [deletedRow(header, seq)],
        format: 'JSONEachRow',
      })
      return reply.code(204).send()
    },
  })
}

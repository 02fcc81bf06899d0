import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFound } from '../http/errors.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { PlaylistBody, playlistBody } from './serialize.ts'
import { userResolver } from '../accounts/user-body.ts'
import { type Playlist, PlaylistStore } from './store.ts'
import { RecordingSummary, summarizeSessions, unknownRecording, watchedCount } from './recordings.ts'

// Session recording playlists (spec: "Session recording playlists"). Soft delete only: a
// playlist with `deleted: true` vanishes from list and retrieve, and PATCH can bring it back.

const READ = 'session_recording_playlist:read'
const WRITE = 'session_recording_playlist:write'
const TAGS = ['session_recording_playlists']

const Writable = z.object({
  name: z.string().max(400).nullable().optional(),
  derived_name: z.string().max(400).nullable().optional(),
  description: z.string().max(10_000).optional(),
  pinned: z.boolean().optional(),
  deleted: z.boolean().optional(),
  filters: z.unknown().optional(),
})

const ORDER_FIELDS = ['id', 'short_id', 'name', 'derived_name', 'pinned', 'created_at', 'last_modified_at']
const Order = z.string().refine((o) => ORDER_FIELDS.includes(o.replace(/^-/, '')), {
  message: `must be one of ${ORDER_FIELDS.join(', ')}, optionally prefixed with '-'`,
})

const ListQuery = PageQuery.extend({
  created_by: z.coerce.number().int().optional().describe('id of the user who created the playlist'),
  short_id: z.string().optional(),
  pinned: z.string().optional().describe('present: pinned playlists only; `false` or `0`: unpinned only'),
  search: z.string().optional().describe('case-insensitive substring of name or derived_name'),
  order: Order.optional().describe(
    `sort field (${ORDER_FIELDS.join(', ')}), '-' for descending; default -last_modified_at`,
  ),
  session_recording_id: z.string().optional().describe('only playlists holding this recording'),
})
type ListQuery = z.infer<typeof ListQuery>

const PlaylistParams = z.object({ short_id: z.string() })
const RecordingParams = PlaylistParams.extend({ session_recording_id: z.string().min(1).max(200) })

const Envelope = <T extends z.ZodTypeAny>(item: T) =>
  z.object({
    count: z.number().int(),
    next: z.string().nullable(),
    previous: z.string().nullable(),
    results: z.array(item),
  })

const PlaylistRecording = RecordingSummary.extend({ added_at: z.string() })
const RecordingsEnvelope = Envelope(PlaylistRecording).extend({ has_next: z.boolean() })
const Success = z.object({ success: z.boolean() })

function compare(a: unknown, b: unknown): number {
  if (a === b) return 0
  if (a === null || a === undefined) return 1
  if (b === null || b === undefined) return -1
  if (typeof a === 'string' && typeof b === 'string') return a.localeCompare(b)
  return Number(a) < Number(b) ? -1 : 1
}

function sortPlaylists(list: Playlist[], order = '-last_modified_at'): Playlist[] {
  const desc = order.startsWith('-')
  const field = order.replace(/^-/, '') as keyof Playlist
  return list.sort((a, b) => {
    const c = compare(a[field], b[field])
    // Nulls stay last in both directions; ties fall back to the newest playlist first.
    const nullish = a[field] === null || b[field] === null
    return (desc && !nullish ? -c : c) || b.id - a.id
  })
}

function matches(p: Playlist, q: ListQuery, holding: Set<string> | undefined): boolean {
  if (p.deleted) return false
  if (q.created_by !== undefined && p.created_by !== q.created_by) return false
  if (q.short_id !== undefined && p.short_id !== q.short_id) return false
  if (q.pinned !== undefined && p.pinned !== !['false', '0'].includes(q.pinned.toLowerCase())) return false
  if (q.search) {
    const s = q.search.toLowerCase()
    if (!`${p.name ?? ''}\u0000${p.derived_name ?? ''}`.toLowerCase().includes(s)) return false
  }
  if (holding && !holding.has(p.short_id)) return false
  return true
}

export async function registerPlaylistRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const store = await PlaylistStore.open(ctx.rt.nc)
  const users = () => userResolver(ctx.rt.accounts)

  /** Retrieve semantics: soft-deleted playlists do not exist. */
  async function live(team: number, short: string): Promise<Playlist> {
    const p = await store.get(team, short)
    if (!p || p.deleted) throw new NotFound('Playlist not found.')
    return p
  }

  async function body(p: Playlist, userId: number, user = users()) {
    const ids = (await store.recordings(p.team_id, p.short_id)).map((i) => i.session_id)
    return playlistBody(p, ids.length, user, await watchedCount(ctx.rt, p.team_id, userId, ids))
  }

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recording_playlists/',
    scope: READ,
    tags: TAGS,
    summary: 'List playlists (newest change first)',
    query: ListQuery,
    response: { 200: Envelope(PlaylistBody) },
    handler: async (req, _reply, { principal, project }) => {
      const q = req.query
      const holding = q.session_recording_id
        ? await store.playlistsHolding(project.id, q.session_recording_id)
        : undefined
      const [all, pinned] = await Promise.all([store.list(project.id), store.pinned(project.id)])
      const page = paginate(
        req,
        q,
        sortPlaylists(
          all.filter((p) => matches(p, q, holding)),
          q.order,
        ),
      )
      const user = users()
      return {
        ...page,
        results: await Promise.all(
          page.results.map(async (p) => {
            const ids = pinned.filter((i) => i.short_id === p.short_id).map((i) => i.session_id)
            return playlistBody(
              p,
              ids.length,
              user,
              await watchedCount(ctx.rt, project.id, principal.user.id, ids),
            )
          }),
        ),
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/session_recording_playlists/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Create a playlist',
    body: Writable,
    response: { 201: PlaylistBody },
    handler: async (req, reply, { principal, project }) => {
      const p = await store.create(project.id, principal.user.id, req.body)
      return reply.code(201).send(await body(p, principal.user.id))
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recording_playlists/:short_id/',
    scope: READ,
    tags: TAGS,
    summary: 'Retrieve a playlist by short id',
    params: PlaylistParams,
    response: { 200: PlaylistBody },
    handler: async (req, _reply, { principal, project }) => {
      return body(await live(project.id, req.params.short_id), principal.user.id)
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/session_recording_playlists/:short_id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Update a playlist; `deleted: true` soft-deletes it, `deleted: false` restores it',
    params: PlaylistParams,
    body: Writable,
    response: { 200: PlaylistBody },
    handler: async (req, _reply, { principal, project }) => {
      const p = await store.update(project.id, req.params.short_id, principal.user.id, req.body)
      if (!p) throw new NotFound('Playlist not found.')
      return body(p, principal.user.id)
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/session_recording_playlists/:short_id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Refused (405, no body): delete with PATCH `deleted: true`',
    params: PlaylistParams,
    handler: async (req, reply) => {
      return reply.code(405).header('allow', 'GET, PATCH').send()
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/session_recording_playlists/:short_id/recordings/',
    scope: READ,
    tags: TAGS,
    summary:
      "The playlist's recordings, most recently added first, with as the session_recordings API shows them",
    params: PlaylistParams,
    query: PageQuery,
    response: { 200: RecordingsEnvelope },
    handler: async (req, _reply, { principal, project }) => {
      const p = await live(project.id, req.params.short_id)
      const page = paginate(req, req.query, await store.recordings(project.id, p.short_id))
      const known = await summarizeSessions(
        ctx.rt,
        project.id,
        principal.user.id,
        page.results.map((i) => i.session_id),
      )
      return {
        ...page,
        results: page.results.map((i) => ({
          ...(known.get(i.session_id) ?? unknownRecording(i.session_id)),
          added_at: i.added_at,
        })),
        has_next: page.next !== null,
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'POST',
    path: '/session_recording_playlists/:short_id/recordings/:session_recording_id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Add a recording (any $session_id) to the playlist; idempotent',
    params: RecordingParams,
    response: { 200: Success },
    handler: async (req, _reply, { principal, project }) => {
      const p = await live(project.id, req.params.short_id)
      await store.addRecording(project.id, p.short_id, req.params.session_recording_id, principal.user.id)
      return { success: true }
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/session_recording_playlists/:short_id/recordings/:session_recording_id/',
    scope: WRITE,
    tags: TAGS,
    summary: 'Remove a recording from the playlist',
    params: RecordingParams,
    response: { 200: Success },
    handler: async (req, _reply, { project }) => {
      const p = await live(project.id, req.params.short_id)
      if (!(await store.removeRecording(project.id, p.short_id, req.params.session_recording_id))) {
        throw new NotFound('Recording is not in this playlist.')
      }
      return { success: true }
    },
  })
}

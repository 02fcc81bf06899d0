import type { FastifyInstance, FastifyReply } from 'fastify'
import type { Project } from '../../accounts/documents.ts'
import { z } from 'zod'
import { type ApiContext, projectRoute } from '../../http/routes.ts'
import type { LiveHub, TailSink } from './hub.ts'

// The console's live endpoints. They answer what the public API has no endpoint for yet (events
// per second, the projectors' progress on this project, its dead letters, a live tail) and check
// the key like every project route: `query:read` on the project, the same scope that may read its
// events through HogQL.

const SCOPE = 'query:read'
const STATS_EVERY_MS = 1000
const KEEP_ALIVE_MS = 15_000

const TailQuery = z.object({
  event: z.string().max(200).optional(),
  distinct_id: z.string().max(200).optional(),
  personal_api_key: z.string().optional(),
})

async function streamLive(
  hub: LiveHub,
  open: Set<() => void>,
  project: Project,
  q: z.infer<typeof TailQuery>,
  reply: FastifyReply,
) {
  const first = await hub.stats(project.id)
  reply.hijack()
  const res = reply.raw
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  let closed = false
  let skippedWhileBlocked = 0
  let untail: (() => void) | undefined
  const write = (event: string, data: unknown) => {
    if (!closed) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  }
  const statsTimer = setInterval(() => {
    if (res.writableNeedDrain) return
    hub.stats(project.id).then(
      (s) => write('stats', s),
      () => undefined,
    )
  }, STATS_EVERY_MS)
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS)
  const close = () => {
    if (closed) return
    closed = true
    clearInterval(statsTimer)
    clearInterval(keepAlive)
    untail?.()
    open.delete(close)
    res.end()
  }
  open.add(close)
  // The response closes when the client goes away (or the stream is ended here).
  res.on('close', close)
  write('stats', first)
  const sink: TailSink = {
    team: project.id,
    send(batch) {
      // A client that does not read fast enough gets counts instead of events, never a growing buffer.
      if (res.writableNeedDrain) {
        skippedWhileBlocked += batch.events.length + batch.skipped
        return
      }
      write('events', { events: batch.events, skipped: batch.skipped + skippedWhileBlocked })
      skippedWhileBlocked = 0
    },
  }
  const remove = await hub.tail(sink, { event: q.event || undefined, distinctId: q.distinct_id || undefined })
  if (closed) remove()
  else untail = remove
}

/** Registers `GET …/live/stats/` and the server-sent event stream `GET …/live/events/`. */
export function registerLiveRoutes(app: FastifyInstance, ctx: ApiContext, hub: LiveHub): void {
  // Streams still open, so shutdown can end them before the server waits for connections.
  const open = new Set<() => void>()
  projectRoute(app, ctx, {
    method: 'GET',
    path: '/live/stats/',
    scope: SCOPE,
    handler: async (_req, _reply, { project }) => hub.stats(project.id),
  })
  projectRoute(app, ctx, {
    method: 'GET',
    path: '/live/events/',
    scope: SCOPE,
    query: TailQuery,
    handler: (req, reply, { project }) => streamLive(hub, open, project, req.query, reply),
  })
  // Open streams would keep the server from closing: end them first.
  app.addHook('preClose', async () => {
    for (const close of [...open]) close()
  })
}

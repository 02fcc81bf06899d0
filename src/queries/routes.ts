import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { jsonStream } from '../http/json-stream.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { answerBytesOf } from './answer-size.ts'
import type { QueryRunner } from './runner.ts'
import { QueryIdParams, QueryRequestSchema } from './schema.ts'

/** A query request is JSON of at most this size (HogQL text itself is capped at 100,000 characters). */
const QUERY_BODY_LIMIT = 1024 * 1024

/** Answers whose rows were read from more JSON than this are streamed. */
const STREAM_ANSWERS_FROM_BYTES = 1024 * 1024

function wantsEventStream(req: FastifyRequest): boolean {
  return (req.headers.accept ?? '').includes('text/event-stream')
}

/** Streams each status change as a server-sent event until the query ends or the client leaves. */
async function streamStatus(
  runner: QueryRunner,
  teamId: number,
  id: string,
  req: FastifyRequest,
  reply: FastifyReply,
) {
  await runner.status(teamId, id) // 404 before the stream starts
  reply.hijack()
  const res = reply.raw
  // The raw response skips fastify's reply: carry over the CORS headers the policy set on it.
  const cors = Object.entries(reply.getHeaders()).filter(([k]) => /^access-control-|^vary$/i.test(k))
  res.writeHead(200, {
    ...Object.fromEntries(cors),
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  })
  const abort = new AbortController()
  req.raw.on('close', () => abort.abort())
  const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), 15_000)
  try {
    for await (const status of runner.statuses.watch(teamId, id, abort.signal)) {
      res.write(`event: status\ndata: ${JSON.stringify({ query_status: status })}\n\n`)
      if (status.complete || status.error) break
    }
  } catch (err) {
    req.log.warn({ err, query_id: id }, 'status stream failed')
  } finally {
    clearInterval(keepAlive)
    abort.abort()
    res.end()
  }
}

export function registerQueryRoutes(app: FastifyInstance, ctx: ApiContext, runner: QueryRunner): void {
  projectRoute(app, ctx, {
    method: 'POST',
    path: '/query/',
    scope: 'query:read',
    body: QueryRequestSchema,
    bodyLimit: QUERY_BODY_LIMIT,
    handler: async (req, reply, { project, principal }) => {
      // A client that gives up on a blocking query stops it in ClickHouse too.
      const left = new AbortController()
      const onClose = () => {
        if (!reply.raw.writableEnded) left.abort()
      }
      reply.raw.once('close', onClose)
      try {
        const out = await runner.run(project, req.body, req.log, principal.key.id, left.signal)
        // a large answer is written as it is serialized, never as one string (src/http/json-stream.ts)
        if ((answerBytesOf(out) ?? 0) > STREAM_ANSWERS_FROM_BYTES && Array.isArray(out.results)) {
          return reply.type('application/json; charset=utf-8').send(jsonStream(out, 'results'))
        }
        return out
      } finally {
        reply.raw.off('close', onClose)
      }
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/query/:id/',
    scope: 'query:read',
    params: QueryIdParams,
    handler: async (req, reply, { project }) => {
      const { id } = req.params
      if (wantsEventStream(req)) return streamStatus(runner, project.id, id, req, reply)
      return { query_status: await runner.status(project.id, id) }
    },
  })

  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/query/:id/',
    scope: 'query:read',
    params: QueryIdParams,
    handler: async (req, reply, { project }) => {
      if (await runner.cancel(project.id, req.params.id)) return reply.code(204).send()
      // ClickHouse has not dropped it yet: it is being killed, and the status says cancelled.
      return reply
        .code(202)
        .send({ detail: 'Cancellation requested; ClickHouse is still stopping the query.' })
    },
  })

  // The spec gives these no scope; they confirm the key may run queries in this project.
  projectRoute(app, ctx, {
    method: 'POST',
    path: '/query/check_auth_for_async/',
    scope: 'query:read',
    handler: async (_req, reply) => reply.code(200).send(),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/query/draft_sql/',
    scope: 'query:read',
    handler: async (_req, reply) => reply.code(200).send(),
  })
}

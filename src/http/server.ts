import { randomFillSync } from 'node:crypto'
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import { setPublicUrl } from './paging.ts'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  LogController,
  type RawServerDefault,
} from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { v7 as uuidv7 } from 'uuid'
import type { Logger } from '../observability/logger.ts'
import { httpRequests } from '../observability/metrics.ts'
import { type CorsPolicy, registerCors } from './cors.ts'
import { installErrorHandler } from './error-handler.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.ts'
import { discardUnreadBody } from './unread-body.ts'

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>

export interface HttpServerOptions {
  log: Logger
  bodyLimit: number
  trustProxy: string[]
  cors: CorsPolicy
  timeouts: { requestMs: number; headersMs: number; idleMs: number }
  /** where clients reach this server (PUBLIC_URL): absolute links are built from it (paging.ts) */
  publicUrl?: string
}

// How often node checks connections against the request and headers timeouts (its default, 30 s,
// would let a slow client linger that much longer).
const TIMEOUT_CHECK_MS = 1000

// Random bytes for request ids, drawn 256 ids at a time: uuid's own source (webcrypto getRandomValues
// per id) cost ~70 µs of CPU per request under load, a tenth of a single-event capture request.
const idPool = Buffer.alloc(16 * 256)
let idAt = idPool.length

/** A time-ordered (v7) request id. */
export function requestId(): string {
  if (idAt >= idPool.length) {
    randomFillSync(idPool)
    idAt = 0
  }
  const random = idPool.subarray(idAt, idAt + 16)
  idAt += 16
  return uuidv7({ random })
}

const CLIENT_ERRORS: Record<string, [status: number, code: string, detail: string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request_timeout', 'The request did not arrive in time.'],
  HPE_HEADER_OVERFLOW: [431, 'headers_too_large', 'The request headers are larger than 16 KB.'],
}

/**
 * Answers a request node's HTTP parser refused, on the raw socket (there is no request to reply
 * to), then closes the connection as node does. A reset connection gets nothing.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, code, detail] = CLIENT_ERRORS[err.code ?? ''] ?? [
    400,
    'bad_request',
    'The request is not valid HTTP.',
  ]
  const body = JSON.stringify({ type: 'invalid_request', code, detail, attr: null })
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy(err)
}

/** How often a closing server lets go of the connections that went idle since it began closing. */
const IDLE_SWEEP_MS = 100

/**
 * Stops accepting connections, lets the requests in flight finish, and resolves once the server has
 * closed. Node closes the keep-alive connections that are idle when the close begins; one whose
 * request was still being answered goes idle only afterwards and would be kept open until its
 * keep-alive timeout (72 s), holding the shutdown that long. So idle connections are closed again
 * every IDLE_SWEEP_MS until the server is closed.
 */
export async function closeHttpServer(app: App): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS)
  try {
    await app.close()
  } finally {
    clearInterval(sweep)
  }
}

/** The fastify app every role adds its routes to, with Burrow's parsers, errors, CORS and request log. */
export function createHttpServer(opts: HttpServerOptions): App {
  const app = Fastify({
    loggerInstance: opts.log as FastifyBaseLogger,
    bodyLimit: opts.bodyLimit,
    genReqId: requestId,
    // One log line per request, written in onResponse below with the fields we want.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Only listed proxies may set X-Forwarded-For; otherwise the socket address is the client.
    trustProxy: opts.trustProxy.length ? opts.trustProxy : false,
    return503OnClosing: true,
    // A client that sends a byte every few seconds never trips an idle timer: the whole request
    // must arrive in time, its headers sooner.
    requestTimeout: opts.timeouts.requestMs,
    connectionTimeout: opts.timeouts.idleMs,
    http: {
      headersTimeout: opts.timeouts.headersMs,
      requestTimeout: opts.timeouts.requestMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, opts.timeouts.headersMs),
    },
    // Requests node's parser refuses (headers past 16 KB, a malformed request line or chunk, a body
    // not in time) in PostHog's shape too, not fastify's own.
    clientErrorHandler: answerClientError,
    // Errors raised before routing (an undecodable URL, an over-long path segment) in PostHog's shape too.
    frameworkErrors: (err, _req, reply) => {
      const status = (err as FastifyError).statusCode ?? 400
      const raw = reply as unknown as { code(n: number): { send(b: unknown): void } }
      raw.code(status).send({
        type: 'invalid_request',
        code: status === 414 ? 'uri_too_long' : 'invalid_url',
        detail: err.message,
        attr: null,
      })
    },
  }).withTypeProvider<ZodTypeProvider>()
  // JSON bodies nested deeper than capture accepts would overflow the stack when stored again.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    // Many clients send `Content-Type: application/json` on a DELETE (or any request) with no
    // body: that is no body, not invalid JSON (fastify's parser answers 400 to it).
    if (String(body).trim() === '') return done(null, undefined)
    parseJson(req, String(body), (err, value) => {
      if (!err && nestsDeeperThan(value, MAX_JSON_DEPTH)) {
        const tooDeep = new Error(`Body nests deeper than ${MAX_JSON_DEPTH} levels.`) as FastifyError
        tooDeep.statusCode = 400
        tooDeep.code = 'FST_ERR_CTP_INVALID_JSON_BODY'
        return done(tooDeep, undefined)
      }
      done(err, value)
    })
  })
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  registerCors(app as unknown as FastifyInstance, opts.cors)
  installErrorHandler(app as unknown as FastifyInstance)
  // A 413 on a body not yet read waits for the rest of it, so the client can read the answer.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (reply.statusCode !== 413 || req.raw.complete) return done(null, payload)
    void discardUnreadBody(req.raw).then(() => done(null, payload))
  })
  app.addHook('onResponse', (req, reply, done) => {
    httpRequests.inc({
      method: req.method,
      route: req.routeOptions.url ?? 'unmatched',
      status: reply.statusCode,
    })
    req.log.info(
      { method: req.method, url: req.url.split('?')[0], status: reply.statusCode, ms: reply.elapsedTime },
      'request',
    )
    done()
  })
  setPublicUrl(app, opts.publicUrl)
  return app
}

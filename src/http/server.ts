import type { IncomingMessage, ServerResponse } from 'node:http'
import cors from '@fastify/cors'
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  LogController,
  type RawServerDefault,
} from 'fastify'
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import { v7 as uuidv7 } from 'uuid'
import type { Logger } from '../logger.ts'
import { httpRequests } from '../metrics.ts'
import { installErrorHandler } from './errors.ts'

export type App = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>

export function createHttpServer(opts: { log: Logger; bodyLimit: number; trustProxy: string[] }): App {
  const app = Fastify({
    loggerInstance: opts.log as FastifyBaseLogger,
    bodyLimit: opts.bodyLimit,
    genReqId: () => uuidv7(),
    // One log line per request, written in onResponse below with the fields we want.
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    // Only listed proxies may set X-Forwarded-For; otherwise the socket address is the client.
    trustProxy: opts.trustProxy.length ? opts.trustProxy : false,
    return503OnClosing: true,
  }).withTypeProvider<ZodTypeProvider>()
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.register(cors, { origin: true, credentials: true, maxAge: 86400 })
  installErrorHandler(app as unknown as FastifyInstance)
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
  return app
}

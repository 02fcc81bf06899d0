// The capture routes on Burrow's Fastify app (createHttpServer, as `burrow start` builds it) over a
// nats-server of the bench's own, for one project: what bench/capture-cpu.ts and
// bench/capture-diff.ts drive with `inject`.
import { registerCaptureRoutes } from '../src/capture/routes.ts'
import { EventPublisher } from '../src/capture/publisher.ts'
import { OverflowDetector } from '../src/capture/overflow.ts'
import { loadConfig } from '../src/config/env.ts'
import { type App, createHttpServer } from '../src/http/server.ts'
import { connectNats, migrateJetStream, type NatsConnection } from '../src/jetstream/connection.ts'
import { createLogger } from '../src/observability/logger.ts'
import { benchNatsServer } from './lib.ts'

export interface CaptureApp {
  app: App
  nc: NatsConnection
  publisher: EventPublisher
  close(): Promise<void>
}

/** The capture app for the project `{ id, token }`; its events go to a fresh EVENTS stream. */
export async function captureApp(name: string, project: { id: number; token: string }): Promise<CaptureApp> {
  const log = createLogger('silent')
  const nats = await benchNatsServer(name)
  const nc = await connectNats(nats.url)
  await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
  const config = loadConfig({ LOG_LEVEL: 'silent', OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
  const app = createHttpServer({
    log,
    bodyLimit: config.CAPTURE_MAX_BODY_BYTES,
    trustProxy: [],
    cors: { publicOrigins: config.CORS_PUBLIC_ORIGINS, apiOrigins: config.CORS_API_ORIGINS },
    timeouts: { requestMs: 60_000, headersMs: 60_000, idleMs: 60_000 },
  })
  const publisher = new EventPublisher(nc, {
    partitions: config.LOG_PARTITIONS,
    chunkEvents: config.CAPTURE_CHUNK_EVENTS,
    ackTimeoutMs: config.CAPTURE_ACK_TIMEOUT_MS,
  })
  const found = { id: project.id, api_token: project.token } as never
  await app.register(async (scope) =>
    registerCaptureRoutes(scope, {
      config,
      publisher,
      overflow: new OverflowDetector(config.OVERFLOW_EVENTS_PER_SECOND),
      projectByToken: async (t) => (t === project.token ? found : undefined),
    }),
  )
  await app.ready()
  return {
    app,
    nc,
    publisher,
    async close() {
      await app.close()
      await nc.close()
      await nats.stop()
    },
  }
}

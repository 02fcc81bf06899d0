import { COMPONENTS } from './components.ts'
import type { Component, Runtime } from './types.ts'
import { type Credentials, ensureDefaults } from '../accounts/bootstrap.ts'
import type { Config } from '../config/env.ts'
import { AccountStore } from '../accounts/store.ts'
import { Readiness, registerHealth, registerMetrics, registerReady } from '../http/health.ts'
import { type App, createHttpServer } from '../http/server.ts'
import { projectorLag } from '../jetstream/consumer-lag.ts'
import { connectNats, migrateJetStream } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { setConsumerLagSource } from '../observability/metrics.ts'
import { defaultWebhooks } from '../plugins/pipeline.ts'
import { type Stack, startStack } from '../stack/index.ts'
import { clickhouseClient } from '../clickhouse/client.ts'
import { migrateClickHouse } from '../clickhouse/migrate.ts'
import { readServerInfo } from '../queries/execute.ts'
import { logLimits } from '../clickhouse/retention.ts'

export interface RunningBurrow {
  runtime: Runtime
  app: App
  url: string
  stack: Stack
  credentials: Credentials
  createdCredentials: boolean
  stop(): Promise<void>
}

/** Connects to (or starts) the stack, applies the schema, and brings up the roles of `config.ROLE`. */
export async function startBurrow(
  config: Config,
  log: Logger,
  components: Component[] = COMPONENTS,
): Promise<RunningBurrow> {
  const stack = await startStack(config, log)
  const cleanups: (() => Promise<unknown>)[] = [() => stack.stop()]
  const readiness = new Readiness()
  const stopAll = async () => {
    // Out of rotation first; a load balancer polling /_ready gets SHUTDOWN_DRAIN_MS to notice.
    if (readiness.state === 'ready' && config.SHUTDOWN_DRAIN_MS > 0) {
      readiness.state = 'draining'
      await new Promise((r) => setTimeout(r, config.SHUTDOWN_DRAIN_MS))
    }
    readiness.state = 'draining'
    for (const c of cleanups.reverse()) await c().catch((err) => log.warn({ err }, 'shutdown step failed'))
  }
  try {
    const nc = await connectNats(stack.natsUrl, `burrow-${config.ROLE}`)
    cleanups.push(() => nc.drain())
    await migrateJetStream(nc, logLimits(config))
    const { client: ch } = await migrateClickHouse(stack.clickhouseUrl, config.CLICKHOUSE_DATABASE, log)
    cleanups.push(() => ch.close())
    // Read once: the HogQL compiler prints for this version, queries send the guard settings it knows.
    log.info({ clickhouse_version: (await readServerInfo(ch)).version }, 'clickhouse server')
    const accounts = await AccountStore.open(nc)
    const { credentials, created } = await ensureDefaults(accounts, config.DATA_DIR)
    const queryCh = clickhouseClient(stack.clickhouseUrl, config.CLICKHOUSE_DATABASE, {
      max_memory_usage: String(config.QUERY_MAX_MEMORY_BYTES),
      max_execution_time: config.QUERY_MAX_EXECUTION_SECONDS,
    })
    cleanups.push(() => queryCh.close())
    const runtime: Runtime = { config, log, nc, ch, queryCh, accounts }
    defaultWebhooks.allowPrivate = config.WEBHOOK_ALLOW_PRIVATE_NETWORKS

    const app = createHttpServer({
      log,
      bodyLimit: config.CAPTURE_MAX_BODY_BYTES,
      trustProxy: config.TRUSTED_PROXIES,
      cors: { publicOrigins: config.CORS_PUBLIC_ORIGINS, apiOrigins: config.CORS_API_ORIGINS },
      timeouts: {
        requestMs: config.HTTP_REQUEST_TIMEOUT_MS,
        headersMs: config.HTTP_HEADERS_TIMEOUT_MS,
        idleMs: config.HTTP_IDLE_TIMEOUT_MS,
      },
    })
    registerHealth(app, {
      nats: async () => {
        if (nc.isClosed()) throw new Error('connection closed')
        await nc.flush()
      },
      clickhouse: async () => {
        const r = await ch.ping()
        if (!r.success) throw r.error
      },
    })
    registerMetrics(app)
    registerReady(app, readiness)
    if (config.ROLE === 'all' || config.ROLE === 'projector') {
      setConsumerLagSource(() => projectorLag(nc))
      cleanups.push(async () => setConsumerLagSource(undefined))
    }
    const running: { stop(): Promise<void> }[] = []
    for (const c of components) {
      if (config.ROLE !== 'all' && !c.roles.includes(config.ROLE)) continue
      const handle = await c.start(runtime, app)
      if (handle) running.push(handle)
    }
    // Stop order on shutdown: HTTP first (stop accepting, finish in-flight), then background work,
    // then connections, then the embedded servers.
    cleanups.push(async () => {
      for (const r of running.reverse()) await r.stop()
    })
    cleanups.push(() => app.close())
    const url = await app.listen({ port: config.PORT, host: config.HOST })
    readiness.state = 'ready'
    return {
      runtime,
      app,
      url,
      stack,
      credentials,
      createdCredentials: created,
      stop: stopAll,
    }
  } catch (err) {
    await stopAll()
    throw err
  }
}

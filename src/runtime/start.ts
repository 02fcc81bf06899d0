import { COMPONENTS } from './components.ts'
import type { Component, Runtime } from './types.ts'
import { type Credentials, ensureDefaults } from '../accounts/bootstrap.ts'
import type { Config } from '../config/env.ts'
import { AccountMirror } from '../accounts/mirror.ts'
import { AccountStore } from '../accounts/store.ts'
import Fastify from 'fastify'
import { Readiness, registerHealth, registerMetrics, registerReady } from '../http/health.ts'
import { type App, closeHttpServer, createHttpServer } from '../http/server.ts'
import { projectorLag } from '../jetstream/consumer-lag.ts'
import { connectNats, migrateJetStream } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { setConsumerLagSource } from '../observability/metrics.ts'
import { defaultWebhooks } from '../plugins/pipeline.ts'
import { type Stack, startStack } from '../stack/index.ts'
import { clickhouseClient } from '../clickhouse/client.ts'
import { migrateDeployment } from '../clickhouse/deployment.ts'
import { TableAdmin } from '../clickhouse/table-admin.ts'
import { readServerInfo } from '../queries/execute.ts'
import { logLimits } from '../clickhouse/retention.ts'
import { ProjectorProcess, reportToSupervisor } from './projector-process.ts'
import { rebuildOutdatedProjection } from '../projectors/upgrade.ts'

export interface RunningBurrow {
  runtime: Runtime
  app: App
  url: string
  stack: Stack
  credentials: Credentials
  createdCredentials: boolean
  /** the names of the shutdown steps, in the order `stop` runs them */
  shutdownSteps(): string[]
  /** the projectors' child process, when role all runs them apart (PROJECTOR_PROCESS) */
  projectorPid(): number | undefined
  stop(): Promise<void>
}

/** One step of the shutdown, named so the log (and a test) shows what ran in which order. */
interface ShutdownStep {
  name: string
  run(): Promise<unknown>
}

/** Connects to (or starts) the stack, applies the schema, and brings up the roles of `config.ROLE`. */
export async function startBurrow(
  config: Config,
  log: Logger,
  components: Component[] = COMPONENTS,
): Promise<RunningBurrow> {
  const stack = await startStack(config, log)
  // Steps are added as things start and run in reverse: the last started stops first.
  const cleanups: ShutdownStep[] = [{ name: 'embedded servers', run: () => stack.stop() }]
  const readiness = new Readiness()
  const steps = (): ShutdownStep[] => [
    {
      // Out of rotation first; a load balancer polling /_ready gets SHUTDOWN_DRAIN_MS to notice.
      name: 'drain',
      run: async () => {
        if (readiness.state === 'ready' && config.SHUTDOWN_DRAIN_MS > 0) {
          readiness.state = 'draining'
          await new Promise((r) => setTimeout(r, config.SHUTDOWN_DRAIN_MS))
        }
        readiness.state = 'draining'
      },
    },
    ...[...cleanups].reverse(),
  ]
  let stopped: Promise<void> | undefined
  const stopAll = () =>
    (stopped ??= (async () => {
      for (const step of steps()) {
        log.info({ step: step.name, role: config.ROLE, pid: process.pid }, 'shutdown step')
        await step.run().catch((err) => log.warn({ err, step: step.name }, 'shutdown step failed'))
      }
    })())
  let projectors: ProjectorProcess | undefined
  try {
    const nc = await connectNats(stack.natsUrl, `burrow-${config.ROLE}`)
    cleanups.push({ name: 'nats', run: () => nc.drain() })
    await migrateJetStream(nc, logLimits(config))
    const { client: ch } = await migrateDeployment({
      url: stack.clickhouseUrl,
      database: config.CLICKHOUSE_DATABASE,
      shardUrls: config.CLICKHOUSE_SHARD_URLS,
      log,
    })
    cleanups.push({ name: 'clickhouse', run: () => ch.close() })
    // Read once: the HogQL compiler prints for this version, queries send the guard settings it knows.
    log.info({ clickhouse_version: (await readServerInfo(ch)).version }, 'clickhouse server')
    const accounts = await AccountStore.open(nc)
    // requests are authenticated from memory kept by a watch (accounts/mirror.ts)
    const mirror = await AccountMirror.start(accounts.kv, nc, log)
    cleanups.push({ name: 'accounts mirror', run: async () => mirror.stop() })
    accounts.useMirror(mirror)
    const { credentials, created } = await ensureDefaults(accounts, config.DATA_DIR)
    const queryCh = clickhouseClient(stack.clickhouseUrl, config.CLICKHOUSE_DATABASE, {
      max_memory_usage: String(config.QUERY_MAX_MEMORY_BYTES),
      max_execution_time: config.QUERY_MAX_EXECUTION_SECONDS,
    })
    cleanups.push({ name: 'clickhouse queries', run: () => queryCh.close() })
    const tables = await TableAdmin.open(ch, config.CLICKHOUSE_DATABASE, config.CLICKHOUSE_SHARD_URLS)
    cleanups.push({ name: 'clickhouse shards', run: () => tables.close() })
    // an upgrade that changed the tables' layout moves the data through the log first (upgrade.ts)
    if (config.ROLE === 'all' || config.ROLE === 'projector') {
      await rebuildOutdatedProjection({
        nc,
        ch,
        admin: tables,
        log,
        partitions: config.LOG_PARTITIONS,
      })
    }
    const runtime: Runtime = { config, log, nc, ch, queryCh, accounts, tables }
    defaultWebhooks.allowPrivate = config.WEBHOOK_ALLOW_PRIVATE_NETWORKS

    const app = createHttpServer({
      log,
      bodyLimit: config.CAPTURE_MAX_BODY_BYTES,
      trustProxy: config.TRUSTED_PROXIES,
      publicUrl: config.PUBLIC_URL,
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
    // role all: the projector process's metrics are summed into ours. Cluster-wide figures (every
    // consumer's lag, all projects' event counts) are for operators: with METRICS_PORT they are
    // served on a listener of their own (METRICS_HOST), and the main one has no /metrics.
    const metricsFrom = () => (projectors ? [projectors.metrics()] : [])
    if (config.METRICS_PORT === undefined) registerMetrics(app, metricsFrom)
    else {
      const metricsApp = Fastify({ logger: false })
      registerMetrics(metricsApp, metricsFrom)
      await metricsApp.listen({ port: config.METRICS_PORT, host: config.METRICS_HOST })
      cleanups.push({ name: 'metrics listener', run: () => metricsApp.close() })
    }
    registerReady(app, readiness)
    if (config.ROLE === 'all' || config.ROLE === 'projector') {
      setConsumerLagSource(() => projectorLag(nc))
      cleanups.push({ name: 'consumer lag metric', run: async () => setConsumerLagSource(undefined) })
    }
    // Role all uses both cores: the projectors run in a child process, started now so that its
    // start-up overlaps ours. Capture does not need it to accept events, so listening does not wait
    // for it (on a loaded machine its start-up, another tsx boot, takes tens of seconds).
    const apart =
      config.ROLE === 'all' && config.PROJECTOR_PROCESS && components.some((c) => c.name === 'projector')
    if (apart) {
      const p = new ProjectorProcess({
        natsUrl: stack.natsUrl,
        clickhouseUrl: stack.clickhouseUrl,
        log,
        // half the budget: the steps after it (connections, embedded servers) need the rest
        stopTimeoutMs: Math.max(1000, Math.floor(config.SHUTDOWN_TIMEOUT_MS / 2)),
        // what the projector role reads, for a config that did not come from the environment
        env: {
          CLICKHOUSE_DATABASE: config.CLICKHOUSE_DATABASE,
          DATA_DIR: config.DATA_DIR,
          LOG_LEVEL: config.LOG_LEVEL,
          HOST: config.HOST,
          PROJECTOR_BATCH_SIZE: String(config.PROJECTOR_BATCH_SIZE),
          PROJECTOR_MAX_WAIT_MS: String(config.PROJECTOR_MAX_WAIT_MS),
        },
      })
      projectors = p
      p.start()
      cleanups.push({ name: 'projector process', run: () => p.stop() })
    }
    const running: { stop(): Promise<void> }[] = []
    for (const c of components) {
      if (config.ROLE !== 'all' && !c.roles.includes(config.ROLE)) continue
      if (apart && c.name === 'projector') continue
      const handle = await c.start(runtime, app)
      if (handle) running.push(handle)
    }
    // Stop order on shutdown: HTTP first (stop accepting, finish in-flight), then background work,
    // then the projector process, then connections, then the embedded servers.
    cleanups.push({
      name: 'background work',
      run: async () => {
        for (const r of running.reverse()) await r.stop()
      },
    })
    cleanups.push({ name: 'http', run: () => closeHttpServer(app) })
    const url = await app.listen({ port: config.PORT, host: config.HOST })
    readiness.state = 'ready'
    reportToSupervisor(log)
    return {
      runtime,
      app,
      url,
      stack,
      credentials,
      createdCredentials: created,
      shutdownSteps: () => steps().map((s) => s.name),
      projectorPid: () => projectors?.pid,
      stop: stopAll,
    }
  } catch (err) {
    await stopAll()
    throw err
  }
}

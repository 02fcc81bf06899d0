import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client'
import type { FastifyInstance } from 'fastify'
import { registry } from '../observability/metrics.ts'

export type DependencyCheck = () => Promise<void>

async function within(ms: number, check: DependencyCheck): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
      }),
    ])
    return null
  } catch (err) {
    return err instanceof Error ? err.message : String(err)
  } finally {
    clearTimeout(timer)
  }
}

/** `/_health`: 200 when every dependency answers, 503 naming those that do not. */
export function registerHealth(app: FastifyInstance, checks: Record<string, DependencyCheck>): void {
  app.get('/_health', async (_req, reply) => {
    const names = Object.keys(checks)
    const errors = await Promise.all(names.map((n) => within(1500, checks[n]!)))
    const dependencies = Object.fromEntries(
      names.map((n, i) => [n, errors[i] ? { status: 'down', error: errors[i] } : { status: 'ok' }]),
    )
    const down = names.filter((_, i) => errors[i])
    return reply.code(down.length ? 503 : 200).send({
      status: down.length ? 'unavailable' : 'ok',
      ...(down.length ? { detail: `unavailable: ${down.join(', ')}` } : {}),
      dependencies,
    })
  })
}

export type ReadinessState = 'starting' | 'ready' | 'draining'

/** Whether this process should get traffic: set by the runtime as it starts and shuts down. */
export class Readiness {
  state: ReadinessState = 'starting'
}

/**
 * `/_ready`: 200 once every role has started, 503 before that and while shutting down, so a load
 * balancer stops sending requests before the process stops taking them. Dependencies are
 * `/_health`'s concern: a NATS outage should not take every capture instance out of rotation at once.
 */
export function registerReady(app: FastifyInstance, readiness: Readiness): void {
  app.get('/_ready', async (_req, reply) =>
    reply.code(readiness.state === 'ready' ? 200 : 503).send({ status: readiness.state }),
  )
}

/**
 * GET /metrics. `others` are the metrics of processes this one supervises (role all's projector
 * process): summed into one exposition, as prom-client aggregates a cluster's workers.
 */
export function registerMetrics(
  app: FastifyInstance,
  others: () => Promise<MetricObjectWithValues<MetricValue<string>>[]>[] = () => [],
): void {
  app.get('/metrics', async (_req, reply) => {
    const more = others()
    const text =
      more.length === 0
        ? await registry.metrics()
        : await AggregatorRegistry.aggregate([
            await registry.getMetricsAsJSON(),
            ...(await Promise.all(more)),
          ]).metrics()
    return reply.header('content-type', registry.contentType).send(text)
  })
}

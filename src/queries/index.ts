import type { FastifyInstance } from 'fastify'
import type { ApiContext } from '../http/routes.ts'
import type { Runtime } from '../runtime/types.ts'
import { setMaterializedProperties } from '../hogql/materialized.ts'
import { loadMaterialized } from '../clickhouse/materialize.ts'
import { startAutoMaterialize } from './hot-properties.ts'
import { admissionLimits } from './admission.ts'
import { registerQueryRoutes } from './routes.ts'
import { QueryRunner } from './runner.ts'
import './kind-registrations.ts'

// The runner of each process's api (one per runtime), for the parts that run queries of their own
// (cohort calculations) under the same admission and limits.
const runners = new WeakMap<Runtime, QueryRunner>()

/** The query runner registerQueries made for `rt`; undefined before that. */
export function queryRunnerOf(rt: Runtime): QueryRunner | undefined {
  return runners.get(rt)
}

/** Registers the query routes; returns the process's runner, which saved insights use too. */
export async function registerQueries(app: FastifyInstance, ctx: ApiContext): Promise<QueryRunner> {
  const c = ctx.rt.config
  const runner = await QueryRunner.create(ctx.rt, {
    limits: {
      maxExecutionSeconds: c.QUERY_MAX_EXECUTION_SECONDS,
      maxResultRows: c.QUERY_MAX_RESULT_ROWS,
      maxResultBytes: c.QUERY_MAX_RESULT_BYTES,
    },
    admission: admissionLimits(c),
    compile: { workers: c.QUERY_COMPILE_WORKERS, budgetMs: c.QUERY_COMPILE_TIMEOUT_MS },
  })
  runners.set(ctx.rt, runner)
  app.addHook('onClose', () => runner.stop())
  registerQueryRoutes(app, ctx, runner)
  // `burrow materialize` adds columns from another process; queries start using them within this period.
  const refresh = () =>
    loadMaterialized(ctx.rt.ch)
      .then(setMaterializedProperties)
      .catch((err) => ctx.rt.log.warn({ err }, 'could not load materialized columns'))
  await refresh()
  const timer = setInterval(refresh, MATERIALIZED_REFRESH_MS)
  timer.unref()
  app.addHook('onClose', async () => clearInterval(timer))
  if (c.AUTO_MATERIALIZE) {
    const stop = startAutoMaterialize(ctx.rt, {
      intervalMs: c.AUTO_MATERIALIZE_INTERVAL_SECONDS * 1000,
      minSeconds: c.AUTO_MATERIALIZE_MIN_SECONDS,
      maxColumns: c.AUTO_MATERIALIZE_MAX_COLUMNS,
    })
    app.addHook('onClose', async () => stop())
  }
  return runner
}

const MATERIALIZED_REFRESH_MS = 30_000

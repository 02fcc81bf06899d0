import type { FastifyInstance } from 'fastify'
import type { ApiContext } from '../http/routes.ts'
import { setMaterializedProperties } from '../hogql/materialized.ts'
import { loadMaterialized } from '../clickhouse/materialize.ts'
import { registerQueryRoutes } from './routes.ts'
import { QueryRunner } from './runner.ts'
import './insights/index.ts'
import './insights/funnels/index.ts'
import './insights/retention/index.ts'
import './insights/actors/index.ts'

export async function registerQueries(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const runner = await QueryRunner.create(ctx.rt, {
    maxExecutionSeconds: ctx.rt.config.QUERY_MAX_EXECUTION_SECONDS,
    maxResultRows: ctx.rt.config.QUERY_MAX_RESULT_ROWS,
  })
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
}

const MATERIALIZED_REFRESH_MS = 30_000

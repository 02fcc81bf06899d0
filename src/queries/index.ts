import type { FastifyInstance } from 'fastify'
import type { ApiContext } from '../api/context.ts'
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
}

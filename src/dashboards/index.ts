import type { FastifyInstance } from 'fastify'
import type { ApiContext } from '../http/routes.ts'
import type { QueryRunner } from '../queries/runner.ts'
import { registerDashboardRoutes } from './dashboard-routes.ts'
import { registerInsightRoutes } from './insight-routes.ts'
import { DashboardsService } from './service.ts'
import { registerSharingRoutes } from './sharing-routes.ts'

/**
 * Saved insights, dashboards and sharing (docs/dashboards.md). Their results are the query
 * endpoint's: `runner` is the api process's one, with its cache, admission and compile workers.
 */
export async function registerDashboards(
  app: FastifyInstance,
  ctx: ApiContext,
  runner: QueryRunner,
): Promise<void> {
  const svc = await DashboardsService.open(ctx, runner)
  registerInsightRoutes(app, ctx, svc)
  registerDashboardRoutes(app, ctx, svc)
  registerSharingRoutes(app, ctx, svc)
}

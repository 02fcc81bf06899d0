import type { FastifyInstance } from 'fastify'
import type { Component } from './types.ts'
import { RateLimiter } from '../http/auth.ts'
import type { ApiContext } from '../http/routes.ts'
import { registerQueries } from '../queries/index.ts'
import { registerDashboards } from '../dashboards/index.ts'
import { registerFlagRoutes } from '../flags/definition-routes.ts'
import { registerOpenApi } from '../http/openapi.ts'
import { registerPersonRoutes } from '../persons/routes.ts'
import { registerPlaylistRoutes } from '../playlists/routes.ts'
import { registerPluginConfigRoutes } from '../plugins/config-routes.ts'
import { registerProjectRoutes } from '../accounts/project-routes.ts'
import { registerSdkRoutes } from '../remote-config/api.ts'
import { registerKeyRoutes } from '../accounts/key-routes.ts'
import { registerExperimentRoutes } from '../experiments/routes.ts'
import { registerTaxonomyRoutes } from '../taxonomy/routes.ts'
import { registerCohortRoutes } from '../cohorts/routes.ts'
import { registerActionRoutes } from '../actions/routes.ts'

/** Each part of the management/query API adds its routes through one of these. */
type RouteModule = (app: FastifyInstance, ctx: ApiContext) => void | Promise<void>

const ROUTE_MODULES: RouteModule[] = [
  registerProjectRoutes,
  registerKeyRoutes,
  // the query routes, then what shares their runner: saved insights and dashboards
  async (app, ctx) => registerDashboards(app, ctx, await registerQueries(app, ctx)),
  // after the queries: cohort calculations run through the query runner
  registerCohortRoutes,
  registerActionRoutes,
  registerFlagRoutes,
  registerPlaylistRoutes,
  registerPluginConfigRoutes,
  registerPersonRoutes,
  registerSdkRoutes,
  registerExperimentRoutes,
  registerTaxonomyRoutes,
]

export const apiComponent: Component = {
  name: 'api',
  roles: ['api'],
  async start(rt, app) {
    await registerOpenApi(app)
    const ctx: ApiContext = { rt, limiter: new RateLimiter(rt.config.API_RATE_LIMIT_PER_MINUTE) }
    await app.register(async (scope) => {
      for (const m of ROUTE_MODULES) await m(scope as unknown as FastifyInstance, ctx)
    })
    return undefined
  },
}

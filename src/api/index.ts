import type { FastifyInstance } from 'fastify'
import type { Component } from '../runtime.ts'
import { RateLimiter } from './auth.ts'
import type { ApiContext } from './context.ts'
import { registerQueries } from '../queries/index.ts'
import { registerFlagRoutes } from '../flags/api.ts'
import { registerOpenApi } from './openapi.ts'
import { registerPersonRoutes } from './persons.ts'
import { registerPlaylistRoutes } from './playlists.ts'
import { registerPluginConfigRoutes } from './plugin-configs.ts'
import { registerProjectRoutes } from './projects.ts'

/** Each part of the management/query API adds its routes through one of these. */
type RouteModule = (app: FastifyInstance, ctx: ApiContext) => void | Promise<void>

const ROUTE_MODULES: RouteModule[] = [
  registerProjectRoutes,
  registerQueries,
  registerFlagRoutes,
  registerPlaylistRoutes,
  registerPluginConfigRoutes,
  registerPersonRoutes,
]

export const apiComponent: Component = {
  name: 'api',
  roles: ['api'],
  async start(rt, app) {
    await registerOpenApi(app as unknown as FastifyInstance)
    const ctx: ApiContext = { rt, limiter: new RateLimiter(rt.config.API_RATE_LIMIT_PER_MINUTE) }
    await app.register(async (scope) => {
      for (const m of ROUTE_MODULES) await m(scope as unknown as FastifyInstance, ctx)
    })
    return undefined
  },
}

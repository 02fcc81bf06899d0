import type { FastifyInstance } from 'fastify'
import { RateLimiter } from '../http/auth.ts'
import type { ApiContext } from '../http/routes.ts'
import type { Component } from '../runtime/types.ts'
import { LiveHub } from './live/hub.ts'
import { registerLiveRoutes } from './live/routes.ts'
import { registerConsolePage } from './static.ts'

/**
 * The web console at `/` (docs/console.md): the page and its modules, plus the live endpoints it
 * needs beyond the public API. Runs with the api role; everything it shows goes through the API
 * with the signed-in personal key.
 */
export const consoleComponent: Component = {
  name: 'console',
  roles: ['api'],
  async start(rt, app) {
    const fastify = app as unknown as FastifyInstance
    registerConsolePage(fastify)
    const hub = new LiveHub(rt.nc, rt.log)
    // The live routes count requests per key like the rest of the API, in a window of their own.
    const ctx: ApiContext = { rt, limiter: new RateLimiter(rt.config.API_RATE_LIMIT_PER_MINUTE) }
    registerLiveRoutes(fastify, ctx, hub)
    return { stop: () => hub.stop() }
  },
}

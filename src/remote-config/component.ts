import { EarlyAccessStore } from '../early-access/store.ts'
import { registerPublicFeatureRoute } from '../early-access/public.ts'
import { flagCacheFor } from '../flags/cache.ts'
import type { Component } from '../runtime/types.ts'
import { SurveyStore } from '../surveys/store.ts'
import { remoteConfigCacheFor } from './cache.ts'
import { registerRemoteConfigRoutes } from './public-routes.ts'
import { registerStaticRoutes } from './static-files.ts'

/**
 * The public endpoints posthog-js loads with the project token: remote config, the SDK's lazy
 * scripts, surveys and early access features. Called on every page load, so they run (and scale)
 * with capture.
 */
export const sdkComponent: Component = {
  name: 'sdk',
  roles: ['capture'],
  async start(rt, app) {
    const flags = await flagCacheFor(rt.nc, rt.log)
    const surveys = await SurveyStore.open(rt.nc)
    const features = await EarlyAccessStore.open(rt.nc)
    const cache = await remoteConfigCacheFor({
      nc: rt.nc,
      accounts: rt.accounts,
      flags,
      surveys,
      log: rt.log,
    })
    await app.register(async (scope) => {
      registerRemoteConfigRoutes(scope, cache)
      registerStaticRoutes(scope)
      registerPublicFeatureRoute(scope, {
        store: features,
        flags,
        accounts: rt.accounts,
        projectByToken: async (token) => {
          const id = await cache.projectIdOf(token)
          return id === undefined ? undefined : (await cache.forProject(id))?.project
        },
      })
    })
    return {
      async stop() {
        cache.stop()
      },
    }
  },
}

import type { FastifyInstance } from 'fastify'
import { registerEarlyAccessRoutes } from '../early-access/routes.ts'
import type { ApiContext } from '../http/routes.ts'
import { registerSurveyRoutes } from '../surveys/routes.ts'
import { registerRemoteConfigPayloadRoute } from './payload-route.ts'
import { registerSettingsRoutes } from './settings-routes.ts'

/** The management routes behind the SDK features: project settings, surveys, early access, payloads. */
export async function registerSdkRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  registerSettingsRoutes(app, ctx)
  registerRemoteConfigPayloadRoute(app, ctx)
  await registerSurveyRoutes(app, ctx)
  await registerEarlyAccessRoutes(app, ctx)
}

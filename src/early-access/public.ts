import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Project } from '../accounts/documents.ts'
import type { AccountStore } from '../accounts/store.ts'
import type { FlagCache } from '../flags/cache.ts'
import { AuthenticationError } from '../http/errors.ts'
import { STAGES, type Stage } from './document.ts'
import type { EarlyAccessStore } from './store.ts'

// GET /api/early_access_features/?token=<project token>[&stage=…]: what posthog-js's
// getEarlyAccessFeatures() reads. Without a stage only beta features are listed, as in PostHog.

export interface PublicFeatureDeps {
  store: EarlyAccessStore
  flags: FlagCache
  accounts: AccountStore
  projectByToken(token: string): Promise<Project | undefined>
}

function stagesOf(req: FastifyRequest): Stage[] {
  const raw = (req.query as Record<string, unknown>).stage
  const list = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).map(String)
  return list.length ? list.filter((s): s is Stage => (STAGES as readonly string[]).includes(s)) : ['beta']
}

export function registerPublicFeatureRoute(app: FastifyInstance, deps: PublicFeatureDeps): void {
  const handler = async (req: FastifyRequest) => {
    const q = req.query as Record<string, unknown>
    const token = typeof q.token === 'string' ? q.token : typeof q.api_key === 'string' ? q.api_key : ''
    if (!token) {
      throw new AuthenticationError(
        'Project token not provided. You can find your project token in PostHog project settings.',
        'missing_api_key',
      )
    }
    const project = await deps.projectByToken(token)
    if (!project) {
      throw new AuthenticationError(
        'Project token invalid. You can find your project token in PostHog project settings.',
        'invalid_api_key',
      )
    }
    const stages = stagesOf(req)
    const byId = new Map(deps.flags.flags(project.id).map((f) => [f.id, f]))
    const features = (await deps.store.list(project.id)).filter((f) => stages.includes(f.stage))
    const earlyAccessFeatures = await Promise.all(
      features.map(async (f) => {
        const flag = f.feature_flag_id === null ? undefined : byId.get(f.feature_flag_id)
        const user = f.assigned_user_id === null ? undefined : await deps.accounts.getUser(f.assigned_user_id)
        const name = user ? `${user.first_name} ${user.last_name}`.trim() : ''
        return {
          id: f.id,
          name: f.name,
          description: f.description,
          stage: f.stage,
          documentationUrl: f.documentation_url,
          flagKey: flag && !flag.deleted ? flag.key : null,
          payload: f.payload,
          // Only a display name: the endpoint is public. A nameless user counts as unassigned.
          assignee: name ? { type: 'user', name } : null,
        }
      }),
    )
    return { earlyAccessFeatures }
  }
  for (const path of ['/api/early_access_features', '/api/early_access_features/']) app.get(path, handler)
}

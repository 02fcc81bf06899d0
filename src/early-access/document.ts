import { z } from 'zod'

// An early access feature as kept in its bucket (`feature.<team>.<uuid>`); the fields of PostHog's
// EarlyAccessFeature model (products/early_access_features/backend/models.py).

export const STAGES = ['draft', 'concept', 'alpha', 'beta', 'general-availability', 'archived'] as const
export type Stage = (typeof STAGES)[number]
/** The stages in which opted-in people get the feature through its flag. */
export const ACTIVE_STAGES: readonly Stage[] = ['alpha', 'beta', 'general-availability']
export const isActive = (stage: Stage) => ACTIVE_STAGES.includes(stage)

export const StoredFeature = z.object({
  id: z.string().uuid(),
  team_id: z.number().int().positive(),
  name: z.string(),
  description: z.string().default(''),
  stage: z.enum(STAGES),
  documentation_url: z.string().default(''),
  payload: z.record(z.string(), z.unknown()).default(() => ({})),
  feature_flag_id: z.number().int().nullable(),
  /** the user responsible; PostHog also allows roles, which Burrow does not have */
  assigned_user_id: z.number().int().nullable().default(null),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
})
export type StoredFeature = z.infer<typeof StoredFeature>

export const featureKey = (teamId: number, id: string) => `feature.${teamId}.${id}`
export const featureFilter = (teamId: number) => `feature.${teamId}.*`
/** Which feature a flag is linked to: a flag serves at most one feature. */
export const flagLinkKey = (teamId: number, flagId: number) => `flag.${teamId}.${flagId}`

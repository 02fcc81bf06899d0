import { z } from 'zod'
import { ExperimentMetric, ExposureCriteria } from './metrics.ts'

// An experiment as kept in its bucket (`experiment.<team>.<id>`): the fields of PostHog's
// Experiment model (posthog/models/experiment.py) that Burrow uses. Its variants live on its
// feature flag, as in PostHog; `parameters.feature_flag_variants` is what was asked for.

export const Variant = z.object({
  key: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[a-zA-Z0-9_-]+$/, 'only letters, numbers, hyphens and underscores'),
  name: z.string().nullable().optional(),
  rollout_percentage: z.number().min(0).max(100),
})
export type Variant = z.infer<typeof Variant>

export const Parameters = z
  .object({
    feature_flag_variants: z.array(Variant).optional(),
    /** percent; the recommended sample size is computed for it */
    minimum_detectable_effect: z.number().positive().max(10_000).nullable().optional(),
    /** the flag's overall rollout when Burrow creates it (PostHog's rollout_percentage) */
    rollout_percentage: z.number().min(0).max(100).nullable().optional(),
    aggregation_group_type_index: z.number().int().min(0).max(4).nullable().optional(),
  })
  .passthrough()
export type Parameters = z.infer<typeof Parameters>

export const StatsConfig = z.object({ method: z.enum(['bayesian', 'frequentist']).optional() }).passthrough()
export type StatsConfig = z.infer<typeof StatsConfig>

export const StoredExperiment = z.object({
  id: z.number().int().positive(),
  team_id: z.number().int().positive(),
  name: z.string(),
  description: z.string().default(''),
  feature_flag_id: z.number().int(),
  start_date: z.string().nullable(),
  end_date: z.string().nullable(),
  parameters: Parameters.default({}),
  exposure_criteria: ExposureCriteria.nullable().default(null),
  metrics: z.array(ExperimentMetric).default([]),
  metrics_secondary: z.array(ExperimentMetric).default([]),
  stats_config: StatsConfig.default({ method: 'bayesian' }),
  archived: z.boolean().default(false),
  deleted: z.boolean().default(false),
  type: z.enum(['product', 'web']).default('product'),
  conclusion: z.string().nullable().default(null),
  conclusion_comment: z.string().nullable().default(null),
  created_at: z.string(),
  updated_at: z.string(),
  created_by: z.number().int().nullable(),
})
export type StoredExperiment = z.infer<typeof StoredExperiment>

export const experimentKey = (teamId: number, id: number) => `experiment.${teamId}.${id}`
export const experimentFilter = (teamId: number) => `experiment.${teamId}.*`
export const sequenceKey = (teamId: number) => `seq.${teamId}`

/** PostHog's status of an experiment: draft until launched, running until ended. */
export function statusOf(e: StoredExperiment): 'draft' | 'running' | 'complete' {
  if (!e.start_date) return 'draft'
  return e.end_date ? 'complete' : 'running'
}

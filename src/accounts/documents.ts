import { z } from 'zod'

// Stored documents of the config bucket. Parsed on every read: the bucket is an edge too.

export const OrganizationDoc = z.object({
  id: z.string().uuid(),
  name: z.string(),
  created_at: z.string(),
})

// The project settings that drive PostHog's SDKs (names and defaults of PostHog's Team model,
// posthog/models/team/team.py). Documents written before they existed parse with the defaults.
const jsonObject = z.record(z.string(), z.unknown())
/**
 * One of PostHog's path cleaning rules (PathCleaningFilter): every match of `regex` (RE2) becomes
 * `alias`. The project's rules (settings) and a query's own (PathsQuery localPathCleaningFilters).
 */
export const PathCleaningRule = z
  .object({
    alias: z.string().nullable().optional(),
    regex: z.string().nullable().optional(),
    order: z.number().nullable().optional(),
  })
  .passthrough()
export const ProjectSettingsDoc = z.object({
  autocapture_opt_out: z.boolean().nullable().default(null),
  autocapture_exceptions_opt_in: z.boolean().nullable().default(null),
  autocapture_web_vitals_opt_in: z.boolean().nullable().default(null),
  autocapture_web_vitals_allowed_metrics: z.array(z.string()).nullable().default(null),
  capture_console_log_opt_in: z.boolean().nullable().default(true),
  capture_performance_opt_in: z.boolean().nullable().default(true),
  capture_dead_clicks: z.boolean().nullable().default(false),
  session_recording_opt_in: z.boolean().default(false),
  /** Decimal text with two places, "0.00"–"1.00", as PostHog's API writes it */
  session_recording_sample_rate: z.string().nullable().default(null),
  session_recording_minimum_duration_milliseconds: z.number().int().nullable().default(null),
  session_recording_linked_flag: z
    .object({ id: z.number().int(), key: z.string(), variant: z.string().nullable().optional() })
    .nullable()
    .default(null),
  session_recording_network_payload_capture_config: jsonObject.nullable().default(null),
  session_recording_masking_config: jsonObject.nullable().default(null),
  session_recording_url_trigger_config: z.array(jsonObject).default(() => []),
  session_recording_url_blocklist_config: z.array(jsonObject).default(() => []),
  session_recording_event_trigger_config: z.array(z.string()).default(() => []),
  session_recording_trigger_match_type_config: z.enum(['all', 'any']).nullable().default(null),
  session_replay_config: jsonObject.nullable().default(null),
  recording_domains: z.array(z.string()).nullable().default(null),
  heatmaps_opt_in: z.boolean().nullable().default(null),
  surveys_opt_in: z.boolean().nullable().default(null),
  survey_config: jsonObject.nullable().default(null),
  logs_settings: jsonObject.nullable().default(null),
  // What PostHog gives every new team (TeamManager.create_with_data): the current recorder.
  extra_settings: jsonObject.nullable().default(() => ({ recorder_script: 'posthog-recorder' })),
  // The property filters every query's filterTestAccounts applies (src/queries/test-accounts.ts),
  // and the path cleaning rules ({regex, alias, order?}) paths' pathReplacements and web
  // analytics' doPathCleaning apply in order, as PostHog's Team.
  test_account_filters: z.array(jsonObject).default(() => []),
  path_cleaning_filters: z.array(PathCleaningRule).default(() => []),
})
export type ProjectSettings = z.infer<typeof ProjectSettingsDoc>
export type PathCleaningRule = z.infer<typeof PathCleaningRule>

/**
 * The project's path cleaning rules in the order they apply: by `order`, then as listed (PostHog's
 * Team.path_cleaning_filter_models). Paths (pathReplacements) and web analytics (doPathCleaning).
 */
export function pathCleaningRules(settings: ProjectSettings): PathCleaningRule[] {
  return (settings.path_cleaning_filters ?? [])
    .map((r, i) => ({ r, i, order: typeof r.order === 'number' ? r.order : i }))
    .sort((a, b) => a.order - b.order || a.i - b.i)
    .map(({ r }) => r)
}

export const ProjectDoc = z.object({
  id: z.number().int().positive(),
  uuid: z.string().uuid(),
  organization_id: z.string().uuid(),
  name: z.string(),
  api_token: z.string(),
  timezone: z.string().default('UTC'),
  created_at: z.string(),
  settings: ProjectSettingsDoc.prefault({}),
})
export type Project = z.infer<typeof ProjectDoc>

export const UserDoc = z.object({
  id: z.number().int().positive(),
  uuid: z.string().uuid(),
  distinct_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  organization_id: z.string().uuid(),
  created_at: z.string(),
})
export type User = z.infer<typeof UserDoc>

export const PersonalKeyDoc = z.object({
  id: z.string(),
  label: z.string(),
  user_id: z.number().int(),
  /** `*` or `<resource>:read|write` */
  scopes: z.array(z.string()).min(1),
  /** Projects the key may reach; null means every project of the user's organization. */
  projects: z.array(z.number().int()).nullable(),
  mask: z.string(),
  created_at: z.string(),
})
export type PersonalKey = z.infer<typeof PersonalKeyDoc>

export const SCOPE_PATTERN = /^(\*|[a-z_]+:(read|write))$/

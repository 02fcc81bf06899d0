import { z } from 'zod'
import { PathCleaningRule, type ProjectSettings } from '../accounts/documents.ts'

// The body of PATCH /api/projects/{id}/: PostHog's TeamSerializer rules for the SDK settings
// (posthog/api/team.py validate_*), with its error messages. Every field is optional; null resets
// a nullable setting.

const bool = z.boolean().nullable().optional()

/** Most path cleaning rules a project keeps (each is a regex every path item of a query runs). */
export const MAX_PATH_CLEANING_FILTERS = 50

function onlyKeys(allowed: readonly string[], message: string) {
  return (value: Record<string, unknown> | null, ctx: z.RefinementCtx) => {
    if (value && !Object.keys(value).every((k) => allowed.includes(k)))
      ctx.addIssue({ code: 'custom', message })
  }
}

const dict = z.record(z.string(), z.unknown(), { error: 'Must provide a dictionary or None.' })

// DRF's DecimalField(max_digits=3, decimal_places=2) with 0..1 validators; stored as its text.
const sampleRate = z
  .union([z.number(), z.string()])
  .nullable()
  .optional()
  .transform((value, ctx) => {
    if (value === null || value === undefined) return value
    const text = String(value).trim()
    if (!/^-?\d+(\.\d+)?$/.test(text) || !Number.isFinite(Number(text))) {
      ctx.addIssue({ code: 'custom', message: 'A valid number is required.' })
      return z.NEVER
    }
    if ((text.split('.')[1] ?? '').length > 2) {
      ctx.addIssue({ code: 'custom', message: 'Ensure that there are no more than 2 decimal places.' })
      return z.NEVER
    }
    const n = Number(text)
    if (n < 0) ctx.addIssue({ code: 'custom', message: 'Ensure this value is greater than or equal to 0.' })
    if (n > 1) ctx.addIssue({ code: 'custom', message: 'Ensure this value is less than or equal to 1.' })
    return n.toFixed(2)
  })

const linkedFlag = z
  .unknown()
  .optional()
  .transform((value, ctx) => {
    if (value === null || value === undefined) return value
    if (typeof value !== 'object' || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'Must provide a dictionary or None.' })
      return z.NEVER
    }
    const v = value as Record<string, unknown>
    const keys = Object.keys(v).sort().join(',')
    if (keys !== 'id,key' && keys !== 'id,key,variant') {
      ctx.addIssue({
        code: 'custom',
        message:
          "Must provide a dictionary with only 'id' and 'key' keys. _or_ only 'id', 'key', and 'variant' keys.",
      })
      return z.NEVER
    }
    // A numeric string id is normalised, as PostHog does; booleans and fractions are refused.
    const id = typeof v.id === 'string' && /^\d+$/.test(v.id) ? Number(v.id) : v.id
    if (typeof id !== 'number' || !Number.isInteger(id) || typeof v.key !== 'string') {
      ctx.addIssue({ code: 'custom', message: "Must provide an integer 'id'." })
      return z.NEVER
    }
    const variant =
      v.variant === undefined ? {} : { variant: typeof v.variant === 'string' ? v.variant : null }
    return { id, key: v.key, ...variant }
  })

const masking = dict
  .nullable()
  .optional()
  .superRefine((value, ctx) => {
    if (!value) return
    const allowed = ['maskAllInputs', 'maskTextSelector', 'blockSelector']
    onlyKeys(allowed, `Must provide a dictionary with only known keys: ${allowed.join(', ')}.`)(value, ctx)
    if ('maskAllInputs' in value && typeof value.maskAllInputs !== 'boolean') {
      ctx.addIssue({ code: 'custom', message: 'maskAllInputs must be a boolean.' })
    }
    for (const k of ['maskTextSelector', 'blockSelector']) {
      if (k in value && typeof value[k] !== 'string') {
        ctx.addIssue({ code: 'custom', message: `${k} must be a string.` })
      }
    }
  })

const urlTrigger = z.object({ url: z.string(), matching: z.literal('regex') }).passthrough()

export const SettingsPatch = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  autocapture_opt_out: bool,
  autocapture_exceptions_opt_in: bool,
  autocapture_web_vitals_opt_in: bool,
  autocapture_web_vitals_allowed_metrics: z
    .array(z.enum(['CLS', 'FCP', 'INP', 'LCP']))
    .nullable()
    .optional(),
  capture_console_log_opt_in: bool,
  capture_performance_opt_in: bool,
  capture_dead_clicks: bool,
  session_recording_opt_in: z.boolean().optional(),
  session_recording_sample_rate: sampleRate,
  session_recording_minimum_duration_milliseconds: z.number().int().min(0).max(30_000).nullable().optional(),
  session_recording_linked_flag: linkedFlag,
  session_recording_network_payload_capture_config: dict
    .nullable()
    .optional()
    .superRefine(
      onlyKeys(
        ['recordHeaders', 'recordBody'],
        "Must provide a dictionary with only 'recordHeaders' and/or 'recordBody' keys.",
      ) as (v: Record<string, unknown> | null | undefined, ctx: z.RefinementCtx) => void,
    ),
  session_recording_masking_config: masking,
  session_recording_url_trigger_config: z.array(urlTrigger).nullable().optional(),
  session_recording_url_blocklist_config: z.array(urlTrigger).nullable().optional(),
  session_recording_event_trigger_config: z.array(z.string()).nullable().optional(),
  session_recording_trigger_match_type_config: z
    .enum(['all', 'any'], {
      error: "Must provide a valid trigger match type. Only 'all' or 'any' or None are allowed.",
    })
    .nullable()
    .optional(),
  session_replay_config: dict
    .nullable()
    .optional()
    .superRefine(
      onlyKeys(
        ['record_canvas', 'ai_config'],
        'Must provide a dictionary with only known keys. One or more of record_canvas, ai_config.',
      ) as (v: Record<string, unknown> | null | undefined, ctx: z.RefinementCtx) => void,
    ),
  // PostHog drops empty entries rather than refusing them.
  recording_domains: z
    .array(z.string().nullable())
    .nullable()
    .optional()
    .transform((v) => (v ? v.filter((d): d is string => !!d) : v)),
  path_cleaning_filters: z
    .array(PathCleaningRule.extend({ alias: z.string().max(1000).nullable().optional() }))
    .max(MAX_PATH_CLEANING_FILTERS)
    .nullable()
    .optional(),
  heatmaps_opt_in: bool,
  surveys_opt_in: bool,
  survey_config: dict.nullable().optional(),
  logs_settings: dict.nullable().optional(),
  extra_settings: dict.nullable().optional(),
  // filterTestAccounts' property filters (checked when a query applies them)
  test_account_filters: z.array(dict).nullable().optional(),
})
export type SettingsPatch = z.output<typeof SettingsPatch>

/** The settings after applying `patch`: given fields replace stored ones; list fields reset to []. */
export function applySettingsPatch(current: ProjectSettings, patch: SettingsPatch): ProjectSettings {
  const { name: _name, ...fields } = patch
  const next: Record<string, unknown> = { ...current }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue
    // The list-valued settings are not nullable in PostHog's model: null means "none".
    next[key] = value === null && Array.isArray(current[key as keyof ProjectSettings]) ? [] : value
  }
  return next as ProjectSettings
}

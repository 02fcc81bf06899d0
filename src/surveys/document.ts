import { z } from 'zod'

// A survey as kept in the surveys bucket (`survey.<team>.<uuid>`); names and defaults are those of
// PostHog's Survey model (products/surveys/backend/models.py). Parsed on every read.

export const SURVEY_TYPES = ['popover', 'widget', 'external_survey', 'api'] as const
export const SURVEY_SCHEDULES = ['once', 'recurring', 'always'] as const

const json = z.record(z.string(), z.unknown())

export const StoredSurvey = z.object({
  id: z.string().uuid(),
  team_id: z.number().int().positive(),
  name: z.string(),
  description: z.string().default(''),
  type: z.enum(SURVEY_TYPES),
  schedule: z.enum(SURVEY_SCHEDULES).nullable().default('once'),
  linked_flag_id: z.number().int().nullable().default(null),
  linked_insight_id: z.number().int().nullable().default(null),
  targeting_flag_id: z.number().int().nullable().default(null),
  internal_targeting_flag_id: z.number().int().nullable().default(null),
  questions: z.array(json).nullable().default(null),
  conditions: json.nullable().default(null),
  appearance: json.nullable().default(null),
  start_date: z.string().nullable().default(null),
  end_date: z.string().nullable().default(null),
  archived: z.boolean().default(false),
  responses_limit: z.number().int().nullable().default(null),
  iteration_count: z.number().int().nullable().default(null),
  iteration_frequency_days: z.number().int().nullable().default(null),
  enable_partial_responses: z.boolean().nullable().default(false),
  enable_iframe_embedding: z.boolean().nullable().default(false),
  base_language: z.string().default('en'),
  translations: json.nullable().default(null),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
})
export type StoredSurvey = z.infer<typeof StoredSurvey>

export const surveyKey = (teamId: number, id: string) => `survey.${teamId}.${id}`
export const surveyFilter = (teamId: number) => `survey.${teamId}.*`

/** `survey.<team>.<id>` → the team, or null for other keys of the bucket. */
export function surveyTeam(key: string): number | null {
  const m = /^survey\.(\d+)\./.exec(key)
  return m ? Number(m[1]) : null
}

/** PostHog's rule for when a survey's flags are on: launched, not stopped, not archived. */
export const isRunning = (s: StoredSurvey) => !!s.start_date && !s.end_date && !s.archived

import type { UserBasic } from '../accounts/user-body.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'
import type { StoredSurvey } from './document.ts'

// Response bodies: the management API's survey (PostHog's SurveySerializer) and the public one
// posthog-js reads from /api/surveys/ and the remote config (SurveyAPISerializer).

/** Finds a flag of the survey's project by id (the watched flag cache). */
export type FlagLookup = (id: number | null) => StoredFlag | undefined

/** PostHog's MinimalFeatureFlagSerializer. */
export function minimalFlag(f: StoredFlag | undefined) {
  if (!f) return null
  return {
    id: f.id,
    team_id: f.team_id,
    name: f.name,
    key: f.key,
    filters: f.filters,
    deleted: f.deleted,
    active: f.active,
    ensure_experience_continuity: f.ensure_experience_continuity,
    version: f.version,
  }
}

const liveKey = (f: StoredFlag | undefined) => (f && !f.deleted ? f.key : null)

/** The survey of the management API. */
export function surveyBody(s: StoredSurvey, flag: FlagLookup, createdBy: UserBasic | null) {
  const linked = flag(s.linked_flag_id)
  const targeting = flag(s.targeting_flag_id)
  const internal = flag(s.internal_targeting_flag_id)
  return {
    id: s.id,
    name: s.name,
    description: s.description,
    type: s.type,
    schedule: s.schedule,
    linked_flag: minimalFlag(linked),
    linked_flag_id: s.linked_flag_id,
    linked_insight_id: s.linked_insight_id,
    targeting_flag: minimalFlag(targeting),
    internal_targeting_flag: minimalFlag(internal),
    questions: s.questions,
    conditions: s.conditions,
    appearance: s.appearance,
    created_at: s.created_at,
    created_by: createdBy,
    start_date: s.start_date,
    end_date: s.end_date,
    archived: s.archived,
    responses_limit: s.responses_limit,
    feature_flag_keys: [
      { key: 'linked_flag_key', value: liveKey(linked) },
      { key: 'targeting_flag_key', value: liveKey(targeting) },
      { key: 'internal_targeting_flag_key', value: liveKey(internal) },
      { key: 'internal_response_sampling_flag_key', value: null },
    ],
    iteration_count: s.iteration_count,
    iteration_frequency_days: s.iteration_frequency_days,
    iteration_start_dates: [],
    // Recurring iterations are not advanced by Burrow (docs/surveys.md).
    current_iteration: null,
    current_iteration_start_date: null,
    response_sampling_start_date: null,
    response_sampling_interval_type: 'week',
    response_sampling_interval: null,
    response_sampling_limit: null,
    response_sampling_daily_limits: null,
    enable_partial_responses: s.enable_partial_responses,
    enable_iframe_embedding: s.enable_iframe_embedding,
    base_language: s.base_language,
    translations: s.translations,
    user_access_level: 'editor',
  }
}

/**
 * A survey as posthog-js gets it. Flag keys are left out when there is no such flag (DRF drops a
 * field whose source is missing), so the SDK does not wait for a flag it will never receive.
 */
export function surveyApiBody(s: StoredSurvey, flag: FlagLookup): Record<string, unknown> {
  const out: Record<string, unknown> = { id: s.id, name: s.name, type: s.type }
  const keys = {
    linked_flag_key: liveKey(flag(s.linked_flag_id)),
    targeting_flag_key: liveKey(flag(s.targeting_flag_id)),
    internal_targeting_flag_key: liveKey(flag(s.internal_targeting_flag_id)),
  }
  for (const [k, v] of Object.entries(keys)) if (v !== null) out[k] = v
  Object.assign(out, {
    questions: s.questions,
    conditions: s.conditions,
    appearance: s.appearance,
    start_date: s.start_date,
    end_date: s.end_date,
    current_iteration: null,
    current_iteration_start_date: null,
    schedule: s.schedule,
    enable_partial_responses: s.enable_partial_responses ?? false,
  })
  if (s.translations && Object.keys(s.translations).length > 0) out.translations = s.translations
  return out
}

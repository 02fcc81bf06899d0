import { randomBytes } from 'node:crypto'
import { flagCreateSchema, flagPatchSchema, type FlagFilters } from '../flags/definition.ts'
import type { FlagStore } from '../flags/definition-store.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'
import { isRunning, type StoredSurvey } from './document.ts'

// The feature flags a survey owns, as PostHog manages them (survey.py
// _add_user_survey_interacted_filters / _create_or_update_targeting_flag):
// - the internal targeting flag `survey-targeting-<hex>-custom`, true for people who have neither
//   dismissed nor answered the survey (posthog-js sets those person properties), so a survey is
//   not shown again to someone who answered it on another device;
// - the targeting flag `survey-targeting-<hex>` made from `targeting_flag_filters`.
// Both are on exactly while the survey runs.

export const TARGETING_FLAG_PREFIX = 'survey-targeting-'

const newKey = (suffix = '') => `${TARGETING_FLAG_PREFIX}${randomBytes(5).toString('hex')}${suffix}`

const notSet = (key: string) => ({ key, value: 'is_not_set', operator: 'is_not_set', type: 'person' })

/** The internal targeting flag's conditions for `survey` (with the wait period when it has one). */
export function internalTargetingFilters(survey: StoredSurvey): Record<string, unknown> {
  const base = [notSet(`$survey_dismissed/${survey.id}`), notSet(`$survey_responded/${survey.id}`)]
  const wait = survey.conditions?.seenSurveyWaitPeriodInDays
  if (typeof wait === 'number' && wait > 0) {
    return {
      groups: [
        { variant: null, rollout_percentage: 100, properties: [...base, notSet('$survey_last_seen_date')] },
        {
          variant: null,
          rollout_percentage: 100,
          properties: [
            ...base,
            {
              key: '$survey_last_seen_date',
              value: `${Math.floor(wait)}d`,
              operator: 'is_date_before',
              type: 'person',
            },
          ],
        },
      ],
    }
  }
  return { groups: [{ variant: null, rollout_percentage: 100, properties: base }] }
}

/** Creates a flag owned by a survey. */
export function createSurveyFlag(
  flags: FlagStore,
  survey: Pick<StoredSurvey, 'team_id' | 'name'>,
  filters: unknown,
  active: boolean,
  createdBy: number | null,
  suffix = '',
): Promise<StoredFlag> {
  const input = flagCreateSchema.parse({
    key: newKey(suffix),
    name: `Targeting flag for survey ${survey.name}`,
    filters,
    active,
  })
  return flags.create(survey.team_id, input, createdBy)
}

/** Replaces fields of a survey's flag, writing only when something changes. */
export async function updateSurveyFlag(
  flags: FlagStore,
  teamId: number,
  id: number,
  change: { active?: boolean; filters?: unknown; deleted?: boolean },
): Promise<StoredFlag | undefined> {
  const current = await flags.get(teamId, id).catch(() => undefined)
  if (!current || current.deleted) return current
  const patch = flagPatchSchema.parse(change)
  const same =
    (patch.active === undefined || patch.active === current.active) &&
    (patch.deleted === undefined || patch.deleted === current.deleted) &&
    (patch.filters === undefined || JSON.stringify(patch.filters) === JSON.stringify(current.filters))
  return same ? current : flags.update(teamId, id, patch)
}

/** Brings the survey's own flags in line with it (conditions, on/off); returns them as written. */
export async function syncSurveyFlags(flags: FlagStore, survey: StoredSurvey): Promise<StoredFlag[]> {
  const active = isRunning(survey)
  const out: (StoredFlag | undefined)[] = []
  if (survey.internal_targeting_flag_id !== null) {
    out.push(
      await updateSurveyFlag(flags, survey.team_id, survey.internal_targeting_flag_id, {
        active,
        filters: internalTargetingFilters(survey),
      }),
    )
  }
  if (survey.targeting_flag_id !== null) {
    out.push(await updateSurveyFlag(flags, survey.team_id, survey.targeting_flag_id, { active }))
  }
  return out.filter((f): f is StoredFlag => f !== undefined)
}

/** The stored targeting filters merged with new ones, as PostHog merges them on update. */
export function mergedFilters(existing: FlagFilters, incoming: Record<string, unknown>): unknown {
  return { ...existing, ...incoming }
}

import type { FlagCondition, FlagDefinition, JsonValue, PropertyFilter } from './definition.ts'
import { inRollout, pickVariant } from './hash.ts'
import type { RegexMatch } from '../patterns/regex.ts'
import { FlagMatchError, type MatchOptions, matchProperty, stringRepresentation } from './match.ts'

export interface EvalInput {
  distinctId: string
  personProperties: Record<string, unknown>
  groups: Record<string, string>
  groupProperties: Record<string, Record<string, unknown>>
  groupTypeIndexToName: Record<number, string>
  /**
   * Whether the person is in cohort `id` (src/cohorts/flag-match.ts); throws when that cannot be
   * told. Absent: cohort conditions cannot be evaluated (the flag fails).
   */
  inCohort?: (id: number) => boolean
}

export interface FlagReason {
  code: string
  condition_index: number | null
  description: string
}

export interface FlagResult {
  key: string
  enabled: boolean
  variant: string | null
  reason: FlagReason
  payload: string | null
  error?: string
}

export interface FlagEvaluation {
  results: Record<string, FlagResult>
  errorsWhileComputingFlags: boolean
  // Why each left-out flag failed, for logs; never sent to clients.
  errors: Record<string, string>
}

export type EvaluateOptions = MatchOptions

// Reason codes and their ranking from PostHog's flags service
// (rust/feature-flags/src/flags/flag_match_reason.rs): when no condition matches, the
// highest-ranked reason among the conditions is reported.
export const REASON_SCORE = {
  super_condition_value: 6,
  condition_match: 4,
  out_of_rollout_bound: 3,
  no_condition_match: 2,
  no_group_type: 1,
} as const

export type ReasonCode = keyof typeof REASON_SCORE

// Descriptions as the Rust service words them (FlagDetails::get_reason_description).
function describe(code: ReasonCode, conditionIndex: number | null): string {
  if (code === 'condition_match') return `Matched condition set ${(conditionIndex ?? 0) + 1}`
  if (code === 'out_of_rollout_bound') return 'Out of rollout bound'
  if (code === 'no_group_type') return 'No group type'
  if (code === 'super_condition_value') return 'Super condition value'
  return 'No matching condition set'
}

// A request answers ~50 reasons drawn from a handful: each (code, condition index) is made once and
// shared, frozen since every result that has it holds the same object. Slot 0 is the null index.
const MAX_SHARED_INDEX = 64
const reasons = new Map<ReasonCode, FlagReason[]>()

function reason(code: ReasonCode, conditionIndex: number | null): FlagReason {
  const slot = conditionIndex === null ? 0 : conditionIndex + 1
  let byIndex = reasons.get(code)
  if (!byIndex) reasons.set(code, (byIndex = []))
  let r = byIndex[slot]
  if (!r) {
    r = Object.freeze({ code, condition_index: conditionIndex, description: describe(code, conditionIndex) })
    if (slot <= MAX_SHARED_INDEX) byIndex[slot] = r
  }
  return r
}

// Stored payloads may be JSON text already (what PostHog's UI saves) or structured JSON;
// clients always receive text.
export function payloadText(payload: JsonValue | undefined): string | null {
  if (payload === undefined || payload === null) return null
  return typeof payload === 'string' ? payload : JSON.stringify(payload)
}

interface Subject {
  identifier: string
  properties: Record<string, unknown>
}

// Person flags bucket by distinct id; group flags by the key of their group type, which
// must have been sent with the request.
function subjectFor(flag: FlagDefinition, input: EvalInput): Subject | null {
  const groupTypeIndex = flag.filters.aggregation_group_type_index
  if (groupTypeIndex === null || groupTypeIndex === undefined) {
    return { identifier: input.distinctId, properties: input.personProperties }
  }
  const groupType = input.groupTypeIndexToName[groupTypeIndex]
  const groupKey = groupType === undefined ? undefined : input.groups[groupType]
  if (groupType === undefined || groupKey === undefined || groupKey === '') return null
  return { identifier: String(groupKey), properties: input.groupProperties[groupType] ?? {} }
}

function cohortMatch(filter: PropertyFilter, input: EvalInput): boolean {
  if (!input.inCohort) throw new FlagMatchError('cohort conditions cannot be evaluated here')
  const member = input.inCohort(Number(filter.value))
  return filter.operator === 'not_in' ? !member : member
}

function conditionOutcome(
  flag: FlagDefinition,
  condition: FlagCondition,
  subject: Subject,
  input: EvalInput,
  options: EvaluateOptions,
): ReasonCode {
  // Every filter is checked (no short circuit), so a broken regex fails the flag for
  // everyone rather than only for people who reach it.
  let all = true
  for (const filter of condition.properties) {
    const matched =
      filter.type === 'cohort'
        ? cohortMatch(filter, input)
        : matchProperty(filter, subject.properties, options)
    if (!matched) all = false
  }
  if (!all) return 'no_condition_match'
  const rollout = condition.rollout_percentage ?? 100
  return inRollout(flag.key, subject.identifier, rollout) ? 'condition_match' : 'out_of_rollout_bound'
}

/** The person property that opts a person in or out of an early access flag. */
export const enrollmentKey = (flagKey: string) => `$feature_enrollment/${flagKey}`

// PostHog's feature enrollment (flag_matching.rs get_match): on a flag marked
// `feature_enrollment`, a person who has the property is decided by it before any condition —
// true or "true" enrols, any other value opts out; without it the conditions apply.
function enrollmentOutcome(flag: FlagDefinition, input: EvalInput): FlagResult | null {
  if (flag.filters.feature_enrollment !== true) return null
  const value = input.personProperties[enrollmentKey(flag.key)]
  if (value === undefined) return null
  const enabled = value === true || value === 'true'
  const variant = enabled
    ? pickVariant(flag.key, input.distinctId, flag.filters.multivariate?.variants ?? [])
    : null
  return {
    key: flag.key,
    enabled,
    variant,
    reason: reason('super_condition_value', 0),
    payload: enabled ? payloadText(flag.filters.payloads[variant ?? 'true']) : null,
  }
}

// Evaluates one flag; throws when the definition cannot be evaluated (e.g. a bad regex).
export function evaluateFlag(
  flag: FlagDefinition,
  input: EvalInput,
  options: EvaluateOptions = {},
): FlagResult {
  const subject = subjectFor(flag, input)
  if (!subject) {
    return {
      key: flag.key,
      enabled: false,
      variant: null,
      reason: reason('no_group_type', null),
      payload: null,
    }
  }
  const enrollment = enrollmentOutcome(flag, input)
  if (enrollment) return enrollment
  const variants = flag.filters.multivariate?.variants ?? []
  let best: ReasonCode = 'no_condition_match'
  let bestIndex: number | null = null
  const groups = flag.filters.groups
  // PostHog evaluates conditions that carry a variant override first, keeping their order
  // otherwise (stable sort in flag_matching.rs get_match); indexes stay the original ones. Two
  // passes give that order without building a sorted list per request.
  for (let pass = 0; pass < 2; pass++) {
    for (let index = 0; index < groups.length; index++) {
      const condition = groups[index]!
      if ((condition.variant != null) !== (pass === 0)) continue
      const outcome = conditionOutcome(flag, condition, subject, input, options)
      if (REASON_SCORE[best] <= REASON_SCORE[outcome]) {
        best = outcome
        bestIndex = index
      }
      if (outcome !== 'condition_match') continue
      const override = condition.variant
      const variant =
        override != null && variants.some((candidate) => candidate.key === override)
          ? override
          : pickVariant(flag.key, subject.identifier, variants)
      return {
        key: flag.key,
        enabled: true,
        variant,
        reason: reason('condition_match', index),
        payload: payloadText(flag.filters.payloads[variant ?? 'true']),
      }
    }
  }
  return { key: flag.key, enabled: false, variant: null, reason: reason(best, bestIndex), payload: null }
}

const REGEX_OPERATORS: ReadonlySet<string> = new Set(['regex', 'not_regex'])
const regexFilters = new WeakMap<FlagDefinition, { key: string; pattern: string }[]>()

/**
 * Every regex match evaluating `flags` for `input` will ask for (pattern, value), so they can be
 * answered together, off the event loop where costly, before the evaluation (matchRegexes).
 */
export function regexMatchesOf(flags: FlagDefinition[], input: EvalInput): RegexMatch[] {
  const out: RegexMatch[] = []
  for (const flag of flags) {
    let filters = regexFilters.get(flag)
    if (!filters) {
      filters = flag.filters.groups.flatMap((c) =>
        c.properties
          .filter((p) => REGEX_OPERATORS.has(p.operator) && p.value !== undefined && p.value !== null)
          .map((p) => ({ key: p.key, pattern: stringRepresentation(p.value) })),
      )
      regexFilters.set(flag, filters)
    }
    if (filters.length === 0) continue
    const subject = subjectFor(flag, input)
    if (!subject) continue
    for (const f of filters) {
      const present = Object.hasOwn(subject.properties, f.key) && subject.properties[f.key] !== undefined
      out.push({ pattern: f.pattern, text: present ? stringRepresentation(subject.properties[f.key]) : '' })
    }
  }
  return out
}

export function evaluateFlags(
  flags: FlagDefinition[],
  input: EvalInput,
  options: EvaluateOptions = {},
): FlagEvaluation {
  const results: Record<string, FlagResult> = {}
  const errors: Record<string, string> = {}
  for (const flag of flags) {
    if (!flag.active || flag.deleted) continue
    try {
      results[flag.key] = evaluateFlag(flag, input, options)
    } catch (error) {
      errors[flag.key] = error instanceof Error ? error.message : String(error)
    }
  }
  return { results, errorsWhileComputingFlags: Object.keys(errors).length > 0, errors }
}

import { ValidationError } from '../http/errors.ts'
import { flagCreateSchema, flagPatchSchema } from '../flags/definition.ts'
import type { FlagStore } from '../flags/definition-store.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'
import type { Parameters, Variant } from './document.ts'

// How an experiment drives its multivariate feature flag (PostHog's ExperimentSerializer):
// creating an experiment with a new key creates the flag (control/test 50/50 unless variants are
// given), inactive until launch; an existing flag must be multivariate with control first.

export const DEFAULT_VARIANTS: Variant[] = [
  { key: 'control', name: 'Control Group', rollout_percentage: 50 },
  { key: 'test', name: 'Test Variant', rollout_percentage: 50 },
]

/** PostHog's checks of `parameters.feature_flag_variants`. */
export function validateVariants(variants: Variant[] | undefined): void {
  if (!variants || variants.length === 0) return
  if (variants.length >= 21)
    throw new ValidationError('Feature flag variants must be less than 21', 'parameters')
  if (variants.length < 2) {
    throw new ValidationError(
      'Feature flag must have at least 2 variants (control and at least one test variant)',
      'parameters',
    )
  }
  if (!variants.some((v) => v.key === 'control')) {
    throw new ValidationError('Feature flag variants must contain a control variant', 'parameters')
  }
  if (new Set(variants.map((v) => v.key)).size !== variants.length) {
    throw new ValidationError('Feature flag variant keys must be unique', 'parameters')
  }
  const total = variants.reduce((s, v) => s + v.rollout_percentage, 0)
  if (Math.abs(total - 100) > 1e-9) {
    throw new ValidationError(`Variant rollout percentages must sum to 100, got ${total}`, 'parameters')
  }
}

/** PostHog's validate_existing_feature_flag_for_experiment. */
export function checkEligible(flag: StoredFlag): void {
  const variants = flag.filters.multivariate?.variants ?? []
  if (variants.length > 1) {
    if (variants[0]!.key !== 'control') {
      throw new ValidationError('Feature flag must have control as the first variant.', 'feature_flag_key')
    }
    return
  }
  throw new ValidationError('Feature flag is not eligible for experiments.', 'feature_flag_key')
}

const multivariate = (variants: Variant[]) => ({
  variants: variants.map((v) => ({
    key: v.key,
    name: v.name ?? null,
    rollout_percentage: v.rollout_percentage,
  })),
})

/** The experiment's new flag: everyone (or `rollout_percentage`) split over the variants. */
export function createExperimentFlag(
  flags: FlagStore,
  teamId: number,
  key: string,
  experimentName: string,
  parameters: Parameters,
  active: boolean,
  createdBy: number | null,
): Promise<StoredFlag> {
  const variants = parameters.feature_flag_variants?.length
    ? parameters.feature_flag_variants
    : DEFAULT_VARIANTS
  const parsed = flagCreateSchema.safeParse({
    key,
    name: `Feature Flag for Experiment ${experimentName}`,
    active,
    filters: {
      groups: [{ properties: [], rollout_percentage: parameters.rollout_percentage ?? 100 }],
      multivariate: multivariate(variants),
      aggregation_group_type_index: parameters.aggregation_group_type_index ?? null,
    },
  })
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const attr = issue.path[0] === 'key' ? 'feature_flag_key' : 'parameters'
    throw new ValidationError(`${issue.path.join('.')}: ${issue.message}`, attr)
  }
  return flags.create(teamId, parsed.data, createdBy)
}

/** A draft's variants (and group aggregation) written to its flag. */
export function setFlagVariants(
  flags: FlagStore,
  flag: StoredFlag,
  parameters: Parameters,
): Promise<StoredFlag> {
  const variants = parameters.feature_flag_variants?.length
    ? parameters.feature_flag_variants
    : DEFAULT_VARIANTS
  const filters = {
    ...flag.filters,
    multivariate: multivariate(variants),
    aggregation_group_type_index: parameters.aggregation_group_type_index ?? null,
  }
  // a variant override of a condition that names a variant no longer there is cleared
  filters.groups = filters.groups.map((g) =>
    g.variant && !variants.some((v) => v.key === g.variant) ? { ...g, variant: null } : g,
  )
  return flags.update(flag.team_id, flag.id, flagPatchSchema.parse({ filters }))
}

/** Whether `variants` are the flag's variants by key (PostHog refuses other variants once launched). */
export function sameVariantKeys(flag: StoredFlag, variants: Variant[]): boolean {
  const current = flag.filters.multivariate?.variants ?? []
  return (
    variants.length === current.length &&
    variants.every((v) => current.filter((c) => c.key === v.key).length === 1)
  )
}

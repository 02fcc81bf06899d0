import type { FlagFilters } from '../flags/definition.ts'
import { flagCreateSchema, flagPatchSchema } from '../flags/definition.ts'
import type { FlagStore } from '../flags/definition-store.ts'
import type { StoredFlag } from '../flags/stored-definition.ts'

// How an early access feature drives its flag (products/early_access_features/backend/api.py):
// in an active stage the flag carries `feature_enrollment: true`, so opted-in people get it;
// otherwise the marker is cleared and the flag's own conditions apply.

/** Django's slugify, which PostHog uses to make the flag key from the feature's name. */
export function slugify(value: string): string {
  const ascii = value.normalize('NFKD').replace(/[^\p{ASCII}]/gu, '')
  return ascii
    .toLowerCase()
    .replace(/[^\w\s-]/g, '')
    .replace(/[-\s]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
}

/** The filters with the enrollment marker set (true) or cleared (null); legacy super groups go. */
export function withEnrollment(filters: FlagFilters, enrolled: true | null, overrides: object = {}): unknown {
  const { ...rest } = filters as FlagFilters & { super_groups?: unknown }
  delete rest.super_groups
  return { ...rest, feature_enrollment: enrolled, ...overrides }
}

/** The flag PostHog makes for a feature created without one: nobody until they opt in. */
export function createFeatureFlag(
  flags: FlagStore,
  teamId: number,
  name: string,
  active: boolean,
  createdBy: number | null,
): Promise<StoredFlag> {
  const input = flagCreateSchema.parse({
    key: slugify(name),
    name: `Feature Flag for Early Access Feature ${name}`,
    filters: {
      groups: [{ properties: [], rollout_percentage: 0, variant: null }],
      ...(active ? { feature_enrollment: true } : {}),
    },
  })
  return flags.create(teamId, input, createdBy)
}

/** Writes new filters to the feature's flag. */
export function setFlagFilters(flags: FlagStore, flag: StoredFlag, filters: unknown): Promise<StoredFlag> {
  return flags.update(flag.team_id, flag.id, flagPatchSchema.parse({ filters }))
}

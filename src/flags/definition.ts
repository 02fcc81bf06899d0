import { z } from 'zod'
import { ValidationError } from '../http/errors.ts'
import { parseDateText } from './dates.ts'
import { checkRegex, regexProblem } from './regex.ts'

// Operators the evaluator implements. The names and meanings are PostHog's
// (rust/feature-flags/src/properties/property_matching.rs); `in` / `not_in` are cohort
// conditions' only ones ({type: 'cohort', key: 'id', value: <cohort id>}, src/cohorts/flag-match.ts).
// Semver and flag-dependency operators are not supported yet, so a definition using them is
// refused at write time rather than failing on every evaluation.
export const PROPERTY_OPERATORS = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'starts_with',
  'not_starts_with',
  'ends_with',
  'not_ends_with',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_set',
  'is_not_set',
  'is_date_before',
  'is_date_after',
  'is_date_exact',
  'in',
  'not_in',
] as const

export type PropertyOperator = (typeof PROPERTY_OPERATORS)[number]

// PostHog's serializer insists on string values for these (posthog/api/feature_flag.py).
const STRING_VALUED_OPERATORS: ReadonlySet<string> = new Set([
  'regex',
  'not_regex',
  'icontains',
  'not_icontains',
  'gt',
  'gte',
  'lt',
  'lte',
])
const DATE_OPERATORS: ReadonlySet<string> = new Set(['is_date_before', 'is_date_after', 'is_date_exact'])
const VALUELESS_OPERATORS: ReadonlySet<string> = new Set(['is_set', 'is_not_set'])
const COHORT_OPERATORS: ReadonlySet<string> = new Set(['in', 'not_in'])

// Max group type index PostHog allows (five group types per project).
const MAX_GROUP_TYPE_INDEX = 4
// Floating point sums such as 33.3 + 33.3 + 33.4 are not exactly 100.
const PERCENT_SUM_TOLERANCE = 1e-9

type Json = string | number | boolean | null | Json[] | { [key: string]: Json }

const jsonValue: z.ZodType<Json> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(jsonValue),
    z.record(z.string(), jsonValue),
  ]),
)

const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()])

const rolloutPercentage = z.number().min(0).max(100)

export const propertyFilterSchema = z
  .object({
    key: z.string().min(1),
    value: z.union([scalar, z.array(scalar)]).optional(),
    operator: z.enum(PROPERTY_OPERATORS).default('exact'),
    type: z.enum(['person', 'group', 'cohort']).default('person'),
    group_type_index: z.number().int().min(0).max(MAX_GROUP_TYPE_INDEX).nullable().optional(),
  })
  // A cohort condition without an operator (or `exact`, as older clients wrote it) means `in`.
  .transform((f) => (f.type === 'cohort' && f.operator === 'exact' ? { ...f, operator: 'in' as const } : f))
  .superRefine((filter, ctx) => {
    const { operator, value } = filter
    if (filter.type === 'cohort') {
      if (filter.key !== 'id')
        ctx.addIssue({ code: 'custom', path: ['key'], message: "a cohort condition's key is 'id'" })
      if (!COHORT_OPERATORS.has(operator)) {
        ctx.addIssue({ code: 'custom', path: ['operator'], message: 'a cohort condition takes in or not_in' })
      }
      const id = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
      if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
        ctx.addIssue({ code: 'custom', path: ['value'], message: 'a cohort condition needs a cohort id' })
      }
      return
    }
    if (COHORT_OPERATORS.has(operator)) {
      ctx.addIssue({
        code: 'custom',
        path: ['operator'],
        message: `operator ${operator} is only for cohort conditions`,
      })
      return
    }
    if (VALUELESS_OPERATORS.has(operator)) return
    if (value === undefined) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${operator} needs a value` })
      return
    }
    if (Array.isArray(value) && operator !== 'exact' && operator !== 'is_not') {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${operator} takes a single value` })
      return
    }
    if (STRING_VALUED_OPERATORS.has(operator) && typeof value !== 'string') {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `operator ${operator} needs a string value` })
    }
    // Relative dates are checked against the current clock only to tell them apart from garbage.
    if (DATE_OPERATORS.has(operator) && (typeof value !== 'string' || !parseDateText(value, new Date()))) {
      ctx.addIssue({ code: 'custom', path: ['value'], message: `invalid date value for ${operator}` })
    }
    if (filter.type === 'group' && filter.group_type_index == null) {
      ctx.addIssue({
        code: 'custom',
        path: ['group_type_index'],
        message: 'group filters need group_type_index',
      })
    }
  })

export const flagConditionSchema = z.object({
  properties: z.array(propertyFilterSchema).default([]),
  rollout_percentage: rolloutPercentage.nullable().optional(),
  variant: z.string().min(1).nullable().optional(),
})

export const flagVariantSchema = z.object({
  key: z.string().min(1),
  name: z.string().nullable().optional(),
  rollout_percentage: rolloutPercentage,
})

export const multivariateSchema = z.object({
  variants: z.array(flagVariantSchema).min(1),
})

export const flagFiltersSchema = z
  .object({
    groups: z.array(flagConditionSchema).default([]),
    multivariate: multivariateSchema.nullable().optional(),
    payloads: z.record(z.string(), jsonValue).default({}),
    aggregation_group_type_index: z.number().int().min(0).max(MAX_GROUP_TYPE_INDEX).nullable().optional(),
    // Early access: the person property `$feature_enrollment/<key>`, when set, decides the flag.
    feature_enrollment: z.boolean().nullable().optional(),
  })
  .superRefine((filters, ctx) => {
    const variants = filters.multivariate?.variants ?? []
    const variantKeys = new Set(variants.map((variant) => variant.key))
    if (variantKeys.size !== variants.length) {
      ctx.addIssue({
        code: 'custom',
        path: ['multivariate', 'variants'],
        message: 'variant keys must be unique',
      })
    }
    if (variants.length > 0) {
      const sum = variants.reduce((total, variant) => total + variant.rollout_percentage, 0)
      if (Math.abs(sum - 100) > PERCENT_SUM_TOLERANCE) {
        ctx.addIssue({
          code: 'custom',
          path: ['multivariate', 'variants'],
          message: `variant rollout percentages must sum to 100 (got ${sum})`,
        })
      }
    }
    filters.groups.forEach((condition, index) => {
      if (condition.variant != null && !variantKeys.has(condition.variant)) {
        ctx.addIssue({
          code: 'custom',
          path: ['groups', index, 'variant'],
          message: `variant override ${condition.variant} is not a variant of this flag`,
        })
      }
      condition.properties.forEach((filter, filterIndex) => {
        const problem = filterAggregationProblem(filter, filters.aggregation_group_type_index ?? null)
        if (problem) {
          ctx.addIssue({
            code: 'custom',
            path: ['groups', index, 'properties', filterIndex],
            message: problem,
          })
        }
      })
    })
  })

// A condition is matched against one property set: the person's, or the aggregating
// group's. Filters on anything else could never be satisfied, so they are refused.
function filterAggregationProblem(
  filter: z.output<typeof propertyFilterSchema>,
  aggregation: number | null,
): string | null {
  if (aggregation === null) {
    return filter.type === 'person' || filter.type === 'cohort'
      ? null
      : 'a person flag can only filter on person properties and cohorts'
  }
  if (filter.type !== 'group') return 'a group flag can only filter on properties of its group type'
  if (filter.group_type_index !== aggregation) {
    return `group filter targets group type ${filter.group_type_index}, the flag aggregates by ${aggregation}`
  }
  return null
}

// PostHog's rule for flag keys (posthog/api/feature_flag.py).
const FLAG_KEY = /^[a-zA-Z0-9_-]+$/

const flagFields = {
  key: z.string().min(1).max(400).regex(FLAG_KEY, 'only letters, numbers, hyphens and underscores'),
  name: z.string().default(''),
  active: z.boolean().default(true),
  deleted: z.boolean().default(false),
  ensure_experience_continuity: z.boolean().default(false),
  filters: flagFiltersSchema.default({ groups: [], payloads: {} }),
}

// Stored definitions are read with the schemas above, whatever an older Burrow let through (a
// bad pattern then fails only its own flag); what is written now must also compile.
const REGEX_OPERATORS: ReadonlySet<string> = new Set(['regex', 'not_regex'])
const writableFiltersSchema = flagFiltersSchema.superRefine((filters, ctx) => {
  filters.groups.forEach((condition, index) => {
    condition.properties.forEach((filter, filterIndex) => {
      if (!REGEX_OPERATORS.has(filter.operator) || typeof filter.value !== 'string') return
      const problem = regexProblem(filter.value)
      if (problem) {
        ctx.addIssue({
          code: 'custom',
          path: ['groups', index, 'properties', filterIndex, 'value'],
          message: problem,
        })
      }
    })
  })
})

/**
 * The regex conditions of `filters` compiled off the event loop under the size bounds
 * (src/patterns/regex.ts): a ValidationError naming the field (`<prefix>.groups.0.properties.1.value`)
 * for the first one refused. Every write of flag filters awaits it after the schema's cheap checks.
 */
export async function checkFilterPatterns(
  filters: unknown,
  projectId: number,
  prefix = 'filters',
): Promise<void> {
  const groups = (filters as { groups?: unknown } | null | undefined)?.groups
  if (!Array.isArray(groups)) return
  for (const [index, condition] of groups.entries()) {
    const properties = (condition as { properties?: unknown } | null)?.properties
    if (!Array.isArray(properties)) continue
    for (const [filterIndex, filter] of properties.entries()) {
      const f = filter as { operator?: unknown; value?: unknown } | null
      if (!f || !REGEX_OPERATORS.has(String(f.operator)) || typeof f.value !== 'string') continue
      const problem = await checkRegex(f.value, projectId)
      if (problem) {
        const attr = `${prefix}.groups.${index}.properties.${filterIndex}.value`
        throw new ValidationError(`${attr}: ${problem}`, attr)
      }
    }
  }
}

const writableFields = {
  ...flagFields,
  filters: writableFiltersSchema.default({ groups: [], payloads: {} }),
}

// PostHog refuses to create a flag without a condition set; later edits may empty it.
export const flagCreateSchema = z.object(writableFields).refine((flag) => flag.filters.groups.length > 0, {
  path: ['filters', 'groups'],
  message: 'a feature flag needs at least one condition set',
})

// A patch replaces whole fields; `filters`, when present, is validated as a whole.
export const flagPatchSchema = z.object({
  key: flagFields.key.optional(),
  name: z.string().optional(),
  active: z.boolean().optional(),
  deleted: z.boolean().optional(),
  ensure_experience_continuity: z.boolean().optional(),
  filters: writableFiltersSchema.optional(),
})

export const flagDefinitionSchema = z.object({
  id: z.number().int().positive(),
  ...flagFields,
  version: z.number().int().min(0).optional(),
})

export type PropertyFilter = z.output<typeof propertyFilterSchema>
export type FlagCondition = z.output<typeof flagConditionSchema>
export type FlagVariant = z.output<typeof flagVariantSchema>
export type FlagFilters = z.output<typeof flagFiltersSchema>
export type FlagCreate = z.output<typeof flagCreateSchema>
export type FlagPatch = z.output<typeof flagPatchSchema>
export type FlagDefinition = z.output<typeof flagDefinitionSchema>
export type FlagDefinitionInput = z.input<typeof flagDefinitionSchema>
export type JsonValue = Json

import { z } from 'zod'
import { PropertyFilterSchema } from '../queries/insights/common/schema.ts'

// Cohorts as PostHog stores them (posthog/models/cohort/cohort.py, posthog/api/cohort.py): a
// `filters.properties` tree of AND/OR groups whose leaves are person-property filters,
// behavioural filters (what a person did, how often, when) and other cohorts, each of which may be
// negated; or, for a static cohort, a list of persons. The legacy `groups` field is still accepted
// and turned into that tree, as PostHog's Cohort.properties does.

export const INTERVALS = ['minute', 'hour', 'day', 'week', 'month', 'year'] as const
export type TimeInterval = (typeof INTERVALS)[number]

export const BEHAVIOURS = [
  'performed_event',
  'performed_event_first_time',
  'performed_event_multiple',
  'performed_event_sequence',
  'performed_event_regularly',
  'stopped_performing_event',
  'restarted_performing_event',
] as const
export type Behaviour = (typeof BEHAVIOURS)[number]

const count = z.union([z.number(), z.string()]).nullable().optional()
const key = z.union([z.string(), z.number()])

export const PersonLeafSchema = z
  .object({
    type: z.literal('person'),
    key: z.string().min(1),
    operator: z.string().nullable().optional(),
    value: PropertyFilterSchema.shape.value,
    negation: z.boolean().nullable().optional(),
  })
  .passthrough()

export const BehaviouralLeafSchema = z
  .object({
    type: z.literal('behavioral'),
    key,
    value: z.enum(BEHAVIOURS),
    event_type: z.enum(['events', 'actions']),
    time_value: count,
    time_interval: z.enum(INTERVALS).nullable().optional(),
    negation: z.boolean().nullable().optional(),
    operator: z.string().nullable().optional(),
    operator_value: count,
    seq_time_value: count,
    seq_time_interval: z.enum(INTERVALS).nullable().optional(),
    seq_event: key.nullable().optional(),
    seq_event_type: z.enum(['events', 'actions']).nullable().optional(),
    total_periods: count,
    min_periods: count,
    event_filters: z.array(PropertyFilterSchema).nullable().optional(),
    explicit_datetime: z.string().nullable().optional(),
    explicit_datetime_to: z.string().nullable().optional(),
  })
  .passthrough()

export const CohortLeafSchema = z
  .object({
    type: z.enum(['cohort', 'static-cohort', 'precalculated-cohort']),
    key: z.literal('id').optional(),
    value: z.union([z.number().int(), z.string().regex(/^\d+$/).transform(Number)]),
    negation: z.boolean().nullable().optional(),
  })
  .passthrough()

export type PersonLeaf = z.infer<typeof PersonLeafSchema>
export type BehaviouralLeaf = z.infer<typeof BehaviouralLeafSchema>
export type CohortLeaf = z.infer<typeof CohortLeafSchema>
export type Leaf = PersonLeaf | BehaviouralLeaf | CohortLeaf

export interface Group {
  type: 'AND' | 'OR'
  values: (Group | Leaf)[]
}

export const LeafSchema = z.union([PersonLeafSchema, BehaviouralLeafSchema, CohortLeafSchema])

export const GroupSchema: z.ZodType<Group> = z.lazy(() =>
  z.object({
    type: z.enum(['AND', 'OR']),
    values: z.array(z.union([GroupSchema, LeafSchema])),
  }),
)

export const FiltersSchema = z.object({ properties: GroupSchema }).passthrough()
export type Filters = z.infer<typeof FiltersSchema>

export const isGroup = (x: Group | Leaf): x is Group => x.type === 'AND' || x.type === 'OR'

/** Every leaf of the tree. */
export function leaves(g: Group): Leaf[] {
  return g.values.flatMap((v) => (isGroup(v) ? leaves(v) : [v]))
}

/** The ids of the cohorts the tree names directly. */
export function cohortRefs(g: Group): number[] {
  return leaves(g).flatMap((l) => (l.type === 'person' || l.type === 'behavioral' ? [] : [l.value as number]))
}

/** A running calculation: which version, its ClickHouse query and who runs it. */
export const CalculationSchema = z.object({
  version: z.number().int(),
  query_id: z.string(),
  started_at: z.string(),
  owner: z.string(),
})
export type Calculation = z.infer<typeof CalculationSchema>

/** The stored cohort (`cohort.<team>.<id>` in the cohorts bucket). */
export const CohortDoc = z.object({
  id: z.number().int(),
  team_id: z.number().int(),
  name: z.string().nullable(),
  description: z.string(),
  deleted: z.boolean(),
  /** null for static cohorts */
  filters: FiltersSchema.nullable(),
  /** what the client sent as legacy groups, returned as PostHog returns it */
  groups: z.array(z.unknown()),
  is_static: z.boolean(),
  cohort_type: z.string().nullable(),
  created_by: z.number().int().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  /** the calculated version whose members are current (dynamic cohorts) */
  version: z.number().int().nullable(),
  /** the version a requested calculation will write */
  pending_version: z.number().int().nullable(),
  count: z.number().int().nullable(),
  is_calculating: z.boolean(),
  last_calculation: z.string().nullable(),
  errors_calculating: z.number().int(),
  last_error_at: z.string().nullable(),
  last_error: z.string().nullable(),
  calculation: CalculationSchema.nullable(),
  /** bumped whenever a static cohort's members change, so readers (flags) reload them */
  members_changed_at: z.string().nullable(),
})
export type Cohort = z.infer<typeof CohortDoc>

// ---- legacy groups -----------------------------------------------------------------------------

const LegacyGroup = z
  .object({
    properties: z
      .union([z.array(z.record(z.string(), z.unknown())), z.record(z.string(), z.unknown())])
      .optional(),
    action_id: z.union([z.number(), z.string()]).nullable().optional(),
    event_id: z.string().nullable().optional(),
    days: z.union([z.number(), z.string()]).nullable().optional(),
    count: z.union([z.number(), z.string()]).nullable().optional(),
    count_operator: z.string().nullable().optional(),
  })
  .passthrough()

/**
 * PostHog's conversion of legacy `groups` (posthog/models/cohort/cohort.py Cohort.properties): an
 * OR of the groups; a group of properties (a list, or the oldest `{key: value}` form) is an AND of
 * person filters (an `event` type was a mistake of old clients and means person); a group of an
 * action or event is "performed it, at least `count` times, in the last `days` days (365)".
 */
export function groupsToFilters(groups: unknown[]): unknown {
  const values = groups.map((raw) => {
    const g = LegacyGroup.parse(raw)
    if (g.properties !== undefined) {
      const list = Array.isArray(g.properties)
        ? g.properties.map((p) => ({ ...p, type: (p.type ?? 'event') === 'event' ? 'person' : p.type }))
        : 'type' in g.properties || 'values' in g.properties
          ? g.properties
          : Object.entries(g.properties).map(([k, value]) => ({ key: k, value, type: 'person' }))
      return Array.isArray(list) ? { type: 'AND', values: list } : list
    }
    const entity = g.action_id ?? g.event_id
    if (entity !== undefined && entity !== null) {
      const n = Math.max(0, Math.trunc(Number(g.count ?? 0)) || 0)
      return {
        type: 'AND',
        values: [
          {
            key: entity,
            type: 'behavioral',
            value: n ? 'performed_event_multiple' : 'performed_event',
            event_type: g.action_id !== undefined && g.action_id !== null ? 'actions' : 'events',
            time_interval: 'day',
            time_value: g.days ?? 365,
            operator: g.count_operator ?? null,
            operator_value: n,
          },
        ],
      }
    }
    return { type: 'AND', values: [] }
  })
  return { properties: { type: 'OR', values } }
}

// Request shapes shared by the insight kinds, on PostHog's schema (posthog/schema.py). Unknown
// fields are accepted and ignored (clients send many display-only ones); see docs/insights.md.
import { z } from 'zod'

export const INTERVALS = ['minute', 'hour', 'day', 'week', 'month'] as const
export const IntervalSchema = z.enum(INTERVALS)
export type Interval = z.infer<typeof IntervalSchema>

export const DateRangeSchema = z
  .object({
    date_from: z.string().nullable().optional(),
    date_to: z.string().nullable().optional(),
    explicitDate: z.boolean().nullable().optional(),
  })
  .passthrough()
export type DateRange = z.infer<typeof DateRangeSchema>

const PropertyValue = z.union([z.string(), z.number(), z.boolean(), z.null()])

export const PropertyFilterSchema = z
  .object({
    key: z.string(),
    value: z.union([PropertyValue, z.array(PropertyValue)]).optional(),
    operator: z.string().nullable().optional(),
    type: z.string().optional(),
    group_type_index: z.number().int().min(0).max(4).nullable().optional(),
  })
  .passthrough()
export type PropertyFilter = z.infer<typeof PropertyFilterSchema>

export interface PropertyGroup {
  type: 'AND' | 'OR'
  values: (PropertyGroup | PropertyFilter)[]
}

export const PropertyGroupSchema: z.ZodType<PropertyGroup> = z.lazy(() =>
  z.object({
    type: z.enum(['AND', 'OR']),
    values: z.array(z.union([PropertyGroupSchema, PropertyFilterSchema])),
  }),
)

/** A list of filters (all must hold) or PostHog's nested AND/OR group. */
export const PropertiesSchema = z
  .union([z.array(PropertyFilterSchema), PropertyGroupSchema])
  .nullable()
  .optional()
export type Properties = z.infer<typeof PropertiesSchema>

export const MATHS = [
  'total',
  'dau',
  'weekly_active',
  'monthly_active',
  'unique_group',
  'unique_session',
  'sum',
  'avg',
  'min',
  'max',
  'median',
  'p75',
  'p90',
  'p95',
  'p99',
  'hogql',
] as const
export type MathType = (typeof MATHS)[number]

export const EventsNodeSchema = z
  .object({
    kind: z.literal('EventsNode').optional(),
    event: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    custom_name: z.string().nullable().optional(),
    math: z.enum(MATHS).nullable().optional(),
    math_property: z.string().nullable().optional(),
    math_property_type: z.string().nullable().optional(),
    math_group_type_index: z.number().int().min(0).max(4).nullable().optional(),
    math_hogql: z.string().nullable().optional(),
    properties: PropertiesSchema,
  })
  .passthrough()
export type EventsNode = z.infer<typeof EventsNodeSchema>

/** PostHog's ActionsNode: the events an action matches (`id` is the action's), counted as an EventsNode's. */
export const ActionsNodeSchema = EventsNodeSchema.extend({
  kind: z.literal('ActionsNode'),
  id: z.union([z.number().int().positive(), z.string().regex(/^\d+$/).transform(Number)]),
})
export type ActionsNode = z.infer<typeof ActionsNodeSchema>

/** A series of an insight: an event (or all events), or an action. */
export const SeriesNodeSchema = z.union([ActionsNodeSchema, EventsNodeSchema])
export type SeriesNode = EventsNode | ActionsNode

export const BreakdownFilterSchema = z
  .object({
    // a list for cohort breakdowns: cohort ids and 'all'
    breakdown: z
      .union([
        z.string(),
        z.number(),
        z
          .array(z.union([z.string(), z.number()]))
          .min(1)
          .max(50),
      ])
      .nullable()
      .optional(),
    breakdown_type: z
      .enum(['event', 'person', 'group', 'hogql', 'event_metadata', 'cohort'])
      .nullable()
      .optional(),
    breakdown_limit: z.number().int().positive().nullable().optional(),
    breakdown_group_type_index: z.number().int().min(0).max(4).nullable().optional(),
    breakdown_hide_other_aggregation: z.boolean().nullable().optional(),
  })
  .passthrough()
export type BreakdownFilter = z.infer<typeof BreakdownFilterSchema>

export const CompareFilterSchema = z
  .object({ compare: z.boolean().nullable().optional(), compare_to: z.string().nullable().optional() })
  .passthrough()
export type CompareFilter = z.infer<typeof CompareFilterSchema>

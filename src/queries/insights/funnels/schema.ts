import { z } from 'zod'
import { DateRangeSchema, IntervalSchema, PropertiesSchema } from '../common/index.ts'

// The parts of PostHog's FunnelsQuery that Burrow reads (posthog/schema.py); the rest passes through.

export const EventsNode = z
  .object({
    kind: z.literal('EventsNode'),
    event: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    custom_name: z.string().nullable().optional(),
    properties: PropertiesSchema,
  })
  .passthrough()
export type EventsNode = z.infer<typeof EventsNode>

/** A step matching an action's events (`id`: the action). */
export const ActionsNode = EventsNode.extend({
  kind: z.literal('ActionsNode'),
  id: z.union([z.number().int().positive(), z.string().regex(/^\d+$/).transform(Number)]),
})
export type ActionsNode = z.infer<typeof ActionsNode>

/** A funnel step: an event (or any event) or an action. */
export const StepNode = z.union([ActionsNode, EventsNode])
export type StepNode = EventsNode | ActionsNode

const ExclusionNode = EventsNode.extend({
  kind: z.enum(['EventsNode', 'FunnelExclusionEventsNode']),
  funnelFromStep: z.number().int().min(0),
  funnelToStep: z.number().int().min(1),
})
export type ExclusionNode = z.infer<typeof ExclusionNode>

export const WINDOW_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month'] as const

export const FunnelsFilter = z
  .object({
    funnelOrderType: z.enum(['ordered', 'strict', 'unordered']).nullable().optional(),
    funnelWindowInterval: z.number().int().positive().nullable().optional(),
    funnelWindowIntervalUnit: z.enum(WINDOW_UNITS).nullable().optional(),
    // PostHog's older field: a conversion window in days.
    funnelWindowDays: z.number().int().positive().nullable().optional(),
    exclusions: z.array(ExclusionNode).nullable().optional(),
    breakdownAttributionType: z
      .enum(['first_touch', 'last_touch', 'all_events', 'step'])
      .nullable()
      .optional(),
    breakdownAttributionValue: z.number().int().min(0).nullable().optional(),
    funnelVizType: z.enum(['steps', 'time_to_convert', 'trends']).nullable().optional(),
  })
  .passthrough()
export type FunnelsFilter = z.infer<typeof FunnelsFilter>

export const BreakdownFilter = z
  .object({
    breakdown: z
      .union([z.string(), z.number(), z.array(z.union([z.string(), z.number()]))])
      .nullable()
      .optional(),
    breakdown_type: z.string().nullable().optional(),
    breakdown_limit: z.number().int().positive().nullable().optional(),
  })
  .passthrough()
export type BreakdownFilter = z.infer<typeof BreakdownFilter>

export const FunnelsQuery = z
  .object({
    kind: z.literal('FunnelsQuery'),
    series: z
      .array(z.object({ kind: z.string() }).passthrough())
      .min(2, 'A funnel needs at least two steps.'),
    dateRange: DateRangeSchema.nullable().optional(),
    // only shapes the date range, as PostHog's QueryDateRange(interval=query.interval) does
    interval: IntervalSchema.nullable().optional(),
    properties: PropertiesSchema,
    filterTestAccounts: z.boolean().nullable().optional(),
    funnelsFilter: FunnelsFilter.nullable().optional(),
    breakdownFilter: BreakdownFilter.nullable().optional(),
    aggregation_group_type_index: z.number().int().nullable().optional(),
  })
  .passthrough()
export type FunnelsQuery = z.infer<typeof FunnelsQuery>

// PostHog's experiment metric shapes (posthog/schema.py ExperimentMetric and friends), as zod
// schemas. A metric is one of:
//   funnel  steps (EventsNode[]) the exposed person goes through after the exposure
//   mean    one source per person: a count of an event, or the sum/avg/min/max of a numeric
//           property, or the number of distinct sessions
//   ratio   a numerator and a denominator source, each aggregated per person
// Unknown fields are kept (clients send display-only ones, such as uuid and name).
import { z } from 'zod'
import { EventsNodeSchema, PropertiesSchema } from '../queries/insights/common/index.ts'

export const CONVERSION_WINDOW_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month'] as const
export type ConversionWindowUnit = (typeof CONVERSION_WINDOW_UNITS)[number]

/** The math a metric source may use (PostHog's ExperimentMetricMathType, those Burrow computes). */
export const METRIC_MATHS = ['total', 'sum', 'avg', 'min', 'max', 'unique_session'] as const

const MetricSource = EventsNodeSchema.extend({
  kind: z.literal('EventsNode').optional(),
  math: z.enum(METRIC_MATHS).nullable().optional(),
}).superRefine((s, ctx) => {
  const continuous = s.math === 'sum' || s.math === 'avg' || s.math === 'min' || s.math === 'max'
  if (continuous && !s.math_property) {
    ctx.addIssue({
      code: 'custom',
      path: ['math_property'],
      message: `math '${s.math}' needs a math_property`,
    })
  }
})
export type MetricSource = z.infer<typeof MetricSource>

const common = {
  kind: z.literal('ExperimentMetric').optional(),
  uuid: z.string().nullable().optional(),
  name: z.string().nullable().optional(),
  conversion_window: z.number().int().positive().nullable().optional(),
  conversion_window_unit: z.enum(CONVERSION_WINDOW_UNITS).nullable().optional(),
  /** lower is better (PostHog's goal: 'decrease') */
  goal: z.enum(['increase', 'decrease']).nullable().optional(),
}

export const FunnelMetric = z
  .object({
    ...common,
    metric_type: z.literal('funnel'),
    series: z.array(EventsNodeSchema).min(1).max(20),
    // PostHog's funnel UDF has unordered and strict modes too; Burrow evaluates ordered funnels.
    funnel_order_type: z.literal('ordered').nullable().optional(),
  })
  .passthrough()

export const MeanMetric = z
  .object({
    ...common,
    metric_type: z.literal('mean'),
    source: MetricSource,
    lower_bound_percentile: z.number().min(0).max(1).nullable().optional(),
    upper_bound_percentile: z.number().min(0).max(1).nullable().optional(),
    ignore_zeros: z.boolean().nullable().optional(),
  })
  .passthrough()

export const RatioMetric = z
  .object({ ...common, metric_type: z.literal('ratio'), numerator: MetricSource, denominator: MetricSource })
  .passthrough()

export const ExperimentMetric = z.discriminatedUnion('metric_type', [FunnelMetric, MeanMetric, RatioMetric])
export type ExperimentMetric = z.infer<typeof ExperimentMetric>
export type FunnelMetric = z.infer<typeof FunnelMetric>
export type MeanMetric = z.infer<typeof MeanMetric>
export type RatioMetric = z.infer<typeof RatioMetric>

/** How entities exposed to more than one variant are counted (PostHog's MultipleVariantHandling). */
export const MULTIPLE_VARIANT_HANDLING = ['exclude', 'first_seen'] as const

/** PostHog's ExperimentExposureCriteria: which event exposes, and the multiple-variant rule. */
export const ExposureCriteria = z
  .object({
    filterTestAccounts: z.boolean().nullable().optional(),
    exposure_config: z
      .object({
        kind: z.literal('ExperimentEventExposureConfig').optional(),
        event: z.string().min(1),
        properties: PropertiesSchema,
      })
      .passthrough()
      .nullable()
      .optional(),
    multiple_variant_handling: z.enum(MULTIPLE_VARIANT_HANDLING).nullable().optional(),
  })
  .passthrough()
export type ExposureCriteria = z.infer<typeof ExposureCriteria>

/** PostHog's multiplier per conversion window unit (a month is 30 days). */
const UNIT_SECONDS: Record<ConversionWindowUnit, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 7 * 86_400,
  month: 30 * 86_400,
}

/** The metric's conversion window in seconds; 0 when it has none. */
export function conversionWindowSeconds(m: ExperimentMetric): number {
  if (!m.conversion_window || !m.conversion_window_unit) return 0
  return m.conversion_window * UNIT_SECONDS[m.conversion_window_unit]
}

import { z } from 'zod'
import {
  BreakdownFilterSchema,
  CompareFilterSchema,
  DateRangeSchema,
  SeriesNodeSchema,
  IntervalSchema,
  PropertiesSchema,
} from '../common/index.ts'

export const TrendsFilterSchema = z
  .object({
    display: z.string().nullable().optional(),
    formula: z.string().nullable().optional(),
    formulas: z.array(z.string()).nullable().optional(),
    formulaNodes: z
      .array(z.object({ formula: z.string(), custom_name: z.string().nullable().optional() }).passthrough())
      .nullable()
      .optional(),
  })
  .passthrough()

export const TrendsQuerySchema = z
  .object({
    kind: z.literal('TrendsQuery'),
    series: z.array(SeriesNodeSchema).min(1).max(50),
    interval: IntervalSchema.nullable().optional(),
    dateRange: DateRangeSchema.nullable().optional(),
    properties: PropertiesSchema,
    breakdownFilter: BreakdownFilterSchema.nullable().optional(),
    trendsFilter: TrendsFilterSchema.nullable().optional(),
    compareFilter: CompareFilterSchema.nullable().optional(),
  })
  .passthrough()
export type TrendsQuery = z.infer<typeof TrendsQuerySchema>

/** posthog/constants.py NON_TIME_SERIES_DISPLAY_TYPES: one aggregated value per series. */
export const TOTAL_VALUE_DISPLAYS = new Set([
  'ActionsTable',
  'ActionsPie',
  'ActionsBarValue',
  'WorldMap',
  'BoldNumber',
  'ActionsBigNumber',
])

export const CUMULATIVE_DISPLAY = 'ActionsLineGraphCumulative'

import { z } from 'zod'

export const REFRESH_MODES = [
  'blocking',
  'async',
  'lazy_async',
  'force_blocking',
  'force_async',
  'force_cache',
] as const
export type RefreshMode = (typeof REFRESH_MODES)[number]

export const HogQLQuerySchema = z.object({
  kind: z.literal('HogQLQuery'),
  query: z.string().min(1).max(100_000),
  values: z.record(z.string(), z.unknown()).optional(),
  /** Accepted for compatibility; see docs/query.md for what is applied. */
  filters: z.record(z.string(), z.unknown()).nullable().optional(),
  modifiers: z.record(z.string(), z.unknown()).optional(),
  name: z.string().optional(),
})

/** Any other kind is looked up in the query-kind registry, which validates it. */
export const AnyQuerySchema = z
  .object({ kind: z.string().regex(/^[A-Za-z]+Query$/, 'must be a query kind ending in "Query"') })
  .passthrough()

export const QueryRequestSchema = z.object({
  query: AnyQuerySchema,
  // PostHog's older clients send booleans: true meant "recalculate now".
  refresh: z
    .union([z.enum(REFRESH_MODES), z.boolean()])
    .optional()
    .transform((r): RefreshMode =>
      r === true ? 'force_blocking' : r === false || r === undefined ? 'blocking' : r,
    ),
  client_query_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'may contain letters, digits, "_" and "-" (at most 128)')
    .optional(),
  async: z.boolean().nullable().optional(),
  filters_override: z.record(z.string(), z.unknown()).nullable().optional(),
  variables_override: z.record(z.string(), z.unknown()).nullable().optional(),
  name: z.string().optional(),
})
export type QueryRequest = z.infer<typeof QueryRequestSchema>

export const QueryIdParams = z.object({
  id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'is not a query id'),
})

export const QueryProgress = z.object({
  rows_read: z.number(),
  bytes_read: z.number(),
  estimated_rows_total: z.number(),
  time_elapsed: z.number(),
  active_cpu_time: z.number(),
})

/** Stored in the query-status bucket; what GET /query/{id}/ returns as `query_status`. */
export const QueryStatusSchema = z.object({
  id: z.string(),
  team_id: z.number().int(),
  query_async: z.literal(true),
  complete: z.boolean(),
  error: z.boolean(),
  error_message: z.string().nullable(),
  dashboard_id: z.null(),
  insight_id: z.null(),
  labels: z.array(z.string()).nullable(),
  task_id: z.string().nullable(),
  start_time: z.string().nullable(),
  pickup_time: z.string().nullable(),
  end_time: z.string().nullable(),
  expiration_time: z.string().nullable(),
  query_progress: QueryProgress.nullable(),
  results: z.unknown().nullable(),
  cancelled: z.boolean().optional(),
})
export type QueryStatus = z.infer<typeof QueryStatusSchema>

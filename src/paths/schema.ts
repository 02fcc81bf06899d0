// The parts of PostHog's PathsQuery that Burrow reads (posthog/schema.py: PathsQuery, PathsFilter,
// PathCleaningFilter, FunnelPathsFilter); other fields pass through and are ignored.
import { z } from 'zod'
import { PathCleaningRule } from '../accounts/documents.ts'
import { DateRangeSchema, PropertiesSchema } from '../queries/insights/common/index.ts'
import { type WithSettings, withTestAccounts } from '../queries/test-accounts.ts'

/** PostHog's PathType: which events become path items, and how each is named. */
export const PATH_TYPES = ['$pageview', '$screen', 'custom_event', 'hogql'] as const
export type PathType = (typeof PATH_TYPES)[number]

/** A rewrite of path items: every match of `regex` (RE2) becomes `alias` (the projects' rules' shape). */
export const PathCleaningFilter = PathCleaningRule
export type PathCleaningFilter = PathCleaningRule

const count = z.number().int().min(0)

export const PathsFilter = z
  .object({
    includeEventTypes: z.array(z.enum(PATH_TYPES)).nullable().optional(),
    pathsHogQLExpression: z.string().nullable().optional(),
    startPoint: z.string().nullable().optional(),
    endPoint: z.string().nullable().optional(),
    stepLimit: z.number().int().min(1).max(1000).nullable().optional(),
    edgeLimit: z.number().int().min(1).max(10_000).nullable().optional(),
    minEdgeWeight: count.nullable().optional(),
    maxEdgeWeight: count.nullable().optional(),
    excludeEvents: z.array(z.string()).nullable().optional(),
    pathGroupings: z.array(z.string()).nullable().optional(),
    pathReplacements: z.boolean().nullable().optional(),
    localPathCleaningFilters: z.array(PathCleaningFilter).nullable().optional(),
    // the actors of one edge or drop-off (InsightActorsQuery over a PathsQuery)
    pathStartKey: z.string().nullable().optional(),
    pathEndKey: z.string().nullable().optional(),
    pathDropoffKey: z.string().nullable().optional(),
  })
  .passthrough()
export type PathsFilter = z.infer<typeof PathsFilter>

export const FUNNEL_PATH_TYPES = [
  'funnel_path_before_step',
  'funnel_path_after_step',
  'funnel_path_between_steps',
] as const

export const FunnelPathsFilter = z
  .object({
    funnelPathType: z.enum(FUNNEL_PATH_TYPES).nullable().optional(),
    funnelStep: z.number().int().nullable().optional(),
    funnelSource: z.object({ kind: z.literal('FunnelsQuery') }).passthrough(),
  })
  .passthrough()
export type FunnelPathsFilter = z.infer<typeof FunnelPathsFilter>

export const PathsQuery = z
  .object({
    kind: z.literal('PathsQuery'),
    dateRange: DateRangeSchema.nullable().optional(),
    properties: PropertiesSchema,
    filterTestAccounts: z.boolean().nullable().optional(),
    pathsFilter: PathsFilter.nullable().optional(),
    funnelPathsFilter: FunnelPathsFilter.nullable().optional(),
    aggregation_group_type_index: z.number().int().nullable().optional(),
    samplingFactor: z.number().nullable().optional(),
  })
  .passthrough()
export type PathsQuery = z.infer<typeof PathsQuery>

/**
 * The query with the project's test-account filters folded in where it asks for them: its own
 * events, and a funnel source's (which sets filterTestAccounts for itself, as PostHog's does).
 */
export function pathsWithTestAccounts(q: PathsQuery, project: WithSettings): PathsQuery {
  const own = withTestAccounts(q, project)
  const f = own.funnelPathsFilter
  if (!f) return own
  const funnelSource = withTestAccounts(f.funnelSource, project)
  return funnelSource === f.funnelSource
    ? own
    : { ...own, funnelPathsFilter: { ...f, funnelSource } as FunnelPathsFilter }
}

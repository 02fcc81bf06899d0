// A PathsQuery read into what its SQL is built from (PathsPlan), with PostHog's defaults
// (paths_query_runner.py): which events are read and how each is named as a path item, the
// cleaning rules and wildcard groupings applied to the names, the start/end points, the step and
// edge limits. Pure: no I/O, so the rules are unit-tested on their own.
import { ValidationError } from '../http/errors.ts'
import { or, propertyField, str } from '../queries/insights/common/index.ts'
import { cleanedPath, type CleaningStep, cleaningSteps } from '../queries/path-cleaning.ts'
import type { PathCleaningFilter, PathsFilter, PathsQuery, PathType } from './schema.ts'

/** PostHog's EVENT_IN_SESSION_LIMIT_DEFAULT: path items per session. */
export const DEFAULT_STEP_LIMIT = 5
/** PostHog's EDGE_LIMIT_DEFAULT. */
export const DEFAULT_EDGE_LIMIT = 50
/** A gap of 30 minutes or more between two events starts a new session (PostHog's threshold). */
export const SESSION_GAP_MS = 30 * 60 * 1000

export interface PathsPlan {
  /** HogQL: the path item of an event, after cleaning and grouping. */
  pathItem: string
  /** HogQL condition on the event's type (includeEventTypes), or undefined for every event. */
  eventTypes: string | undefined
  /** Path items (after grouping) left out of every path. */
  excludeEvents: string[]
  startPoint: string | null
  endPoint: string | null
  stepLimit: number
  edgeLimit: number
  minEdgeWeight: number | null
  maxEdgeWeight: number | null
}

/**
 * An RE2 pattern matching a path grouping anywhere in a path item: the grouping's characters are
 * literal except `*`, which matches any run of characters (PostHog: re.escape, then `\*` -> `.*`).
 */
export function groupingRegex(grouping: string): string {
  return grouping
    .split('*')
    .map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, (c) => `\\${c}`))
    .join('.*')
}

/** Trailing slashes do not matter in a target point ('/pricing/' is '/pricing'), except for '/'. */
export function normalizePoint(point: string | null | undefined): string | null {
  if (point === null || point === undefined || point === '') return null
  return point.length > 1 && point.endsWith('/') ? point.slice(0, -1) : point
}

/**
 * Whether events of this type are named by its own rule (PostHog's _should_query_event): the
 * types listed in includeEventTypes, or, without that list, every type excludeEvents leaves in.
 */
export function namedByType(f: PathsFilter, type: PathType): boolean {
  const include = f.includeEventTypes ?? []
  if (!include.length) return !(f.excludeEvents ?? []).includes(type)
  return include.includes(type)
}

/**
 * HogQL naming an event as a path item before cleaning: a page view by its URL without a trailing
 * slash, a screen by its name, anything else by its event name (or the query's HogQL expression
 * when the `hogql` type is named), '' when the value is missing.
 */
export function rawPathItem(f: PathsFilter): string {
  let expr = 'event'
  if (namedByType(f, 'hogql') && f.pathsHogQLExpression) expr = `(${f.pathsHogQLExpression})`
  if (namedByType(f, '$pageview')) {
    const url = `ifNull(toString(${propertyField('$current_url')}), '')`
    expr = `if(event = '$pageview', replaceRegexpAll(${url}, '(.)/$', '\\\\1'), ${expr})`
  }
  if (namedByType(f, '$screen')) {
    expr = `if(event = '$screen', toString(${propertyField('$screen_name')}), ${expr})`
  }
  return `ifNull(toString(${expr}), '')`
}

/** The cleaning rules in the order they apply: the project's (when asked for), then the query's. */
export function cleaningRules(f: PathsFilter, projectRules: PathCleaningFilter[] = []): CleaningStep[] {
  return cleaningSteps([...(f.pathReplacements ? projectRules : []), ...(f.localPathCleaningFilters ?? [])])
}

/**
 * HogQL replacing a cleaned item by a grouping that matches it somewhere. Which one, when several
 * match, is ClickHouse's multiMatchAnyIndex's choice (Hyperscan reports the match that ends
 * first), as in PostHog.
 */
export function groupedPathItem(item: string, groupings: string[]): string {
  if (!groupings.length) return item
  const patterns = `[${groupings.map((g) => str(groupingRegex(g))).join(', ')}]`
  const names = `[${groupings.map((g) => str(g)).join(', ')}]`
  const index = `multiMatchAnyIndex(${item}, ${patterns})`
  return `if(${index} > 0, arrayElement(${names}, ${index}), ${item})`
}

/** HogQL condition on the event's type, or undefined (every event) when no type restricts it. */
export function eventTypesCondition(f: PathsFilter): string | undefined {
  const include = f.includeEventTypes ?? []
  const arms: string[] = []
  if (include.includes('$pageview')) arms.push(`event = '$pageview'`)
  if (include.includes('$screen')) arms.push(`event = '$screen'`)
  if (include.includes('custom_event')) arms.push(`NOT startsWith(event, '$')`)
  return arms.length ? or(arms) : undefined
}

/** The plan of a PathsQuery; 400s for what cannot be asked. `projectRules`: the project's cleaning. */
export function planPaths(q: PathsQuery, projectRules: PathCleaningFilter[] = []): PathsPlan {
  const f = q.pathsFilter ?? {}
  const include = f.includeEventTypes ?? []
  if (include.includes('hogql') && !f.pathsHogQLExpression) {
    throw new ValidationError(
      "includeEventTypes 'hogql' needs pathsHogQLExpression, the HogQL that names each event.",
      'pathsFilter.pathsHogQLExpression',
    )
  }
  if (q.aggregation_group_type_index !== null && q.aggregation_group_type_index !== undefined) {
    throw new ValidationError(
      'Paths of groups are not supported; paths are per person.',
      'aggregation_group_type_index',
    )
  }
  const rules = cleaningRules(f, projectRules)
  const pathItem = groupedPathItem(cleanedPath(rawPathItem(f), rules), f.pathGroupings ?? [])
  return {
    pathItem,
    eventTypes: eventTypesCondition(f),
    // PostHog applies excludeEvents only together with includeEventTypes (its _get_event_query);
    // without them an excluded type only loses its naming rule (namedByType).
    excludeEvents: include.length ? (f.excludeEvents ?? []) : [],
    startPoint: f.startPoint || null,
    endPoint: f.endPoint || null,
    stepLimit: f.stepLimit ?? DEFAULT_STEP_LIMIT,
    edgeLimit: f.edgeLimit ?? DEFAULT_EDGE_LIMIT,
    // 0 is no bound, as in PostHog
    minEdgeWeight: f.minEdgeWeight || null,
    maxEdgeWeight: f.maxEdgeWeight || null,
  }
}

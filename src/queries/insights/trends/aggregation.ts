// Series math (posthog/hogql_queries/insights/trends/aggregation_operations.py) as HogQL.
import { ValidationError } from '../../../http/errors.ts'
import { type Interval, propertyField, type SeriesNode } from '../common/index.ts'

const QUANTILES: Record<string, number> = { median: 0.5, p75: 0.75, p90: 0.9, p95: 0.95, p99: 0.99 }

export type Math = NonNullable<SeriesNode['math']>

/**
 * Weekly/monthly active users over a chart whose interval is as long as the window are plain
 * unique users (PostHog's convert_active_user_math_based_on_interval).
 */
export function effectiveMath(node: SeriesNode, interval: Interval): Math {
  const math = node.math ?? 'total'
  if (math === 'weekly_active' && (interval === 'week' || interval === 'month')) return 'dau'
  if (math === 'monthly_active' && interval === 'month') return 'dau'
  if (
    (math === 'weekly_active' || math === 'monthly_active') &&
    (interval === 'hour' || interval === 'minute')
  ) {
    throw new ValidationError(`${math} needs a day, week or month interval`, 'interval')
  }
  return math
}

/** Days in the active-users window, for weekly_active / monthly_active. */
export function activeWindowDays(math: Math): number | undefined {
  return math === 'weekly_active' ? 7 : math === 'monthly_active' ? 30 : undefined
}

function mathProperty(node: SeriesNode): string {
  if (!node.math_property) throw new ValidationError(`math '${node.math}' needs math_property`, 'series')
  if (node.math_property_type === 'person_properties') return propertyField(node.math_property, 'person.')
  return propertyField(node.math_property)
}

/** The aggregate over a series' events (dau counts each person once, merged persons included). */
export function aggregation(node: SeriesNode, math: Math): string {
  switch (math) {
    case 'total':
      return 'count()'
    case 'dau':
      return 'count(DISTINCT person_id)'
    case 'unique_session':
      return 'count(DISTINCT `$session_id`)'
    case 'unique_group':
      return `count(DISTINCT \`$group_${groupIndex(node)}\`)`
    case 'sum':
    case 'avg':
    case 'min':
    case 'max':
      return `ifNull(${math}(toFloat(${mathProperty(node)})), 0)`
    case 'median':
    case 'p75':
    case 'p90':
    case 'p95':
    case 'p99':
      return `ifNull(quantile(${QUANTILES[math]})(toFloat(${mathProperty(node)})), 0)`
    case 'hogql':
      if (!node.math_hogql) throw new ValidationError("math 'hogql' needs math_hogql", 'series')
      return `(${node.math_hogql})`
    default:
      throw new ValidationError(`Unsupported math '${math}'`, 'series')
  }
}

export function groupIndex(node: SeriesNode): number {
  const i = node.math_group_type_index
  if (i === null || i === undefined) {
    throw new ValidationError("math 'unique_group' needs math_group_type_index", 'series')
  }
  return i
}

/** Conditions the math adds: events without the group do not count for unique groups. */
export function mathCondition(node: SeriesNode, math: Math): string | undefined {
  if (math === 'unique_group') return `\`$group_${groupIndex(node)}\` != ''`
  return undefined
}

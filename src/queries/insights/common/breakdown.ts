// Breakdowns (PostHog's BreakdownFilter): the HogQL value expression, and the ClickHouse wrapper
// that keeps the top `breakdown_limit` values and folds the rest into "other" (as
// posthog/hogql_queries/insights/trends/trends_query_builder.py ranks them: by the sum of the
// series over the range, descending, then by value).
import { ValidationError } from '../../../http/errors.ts'
import { num, propertyField, sqlStr, str } from './hogql.ts'
import type { BreakdownFilter } from './schema.ts'

export const BREAKDOWN_OTHER = '$$_posthog_breakdown_other_$$'
export const BREAKDOWN_NULL = '$$_posthog_breakdown_null_$$'
/** posthog/hogql/constants.py BREAKDOWN_VALUES_LIMIT */
export const DEFAULT_BREAKDOWN_LIMIT = 25

export interface BreakdownPlan {
  /** HogQL for the breakdown value of an event (never NULL: missing and '' read as BREAKDOWN_NULL) */
  value: string
  /** a join the value needs (group breakdowns), put right after `FROM events` */
  join: string
  limit: number
}

export function breakdownEnabled(b: BreakdownFilter | null | undefined): b is BreakdownFilter {
  return !!b && b.breakdown !== null && b.breakdown !== undefined && b.breakdown !== ''
}

/**
 * PostHog's breakdown by cohort: `breakdown` lists cohort ids and 'all' (every person); an event
 * counts for each cohort its person is in (so for several values), its value the id as text.
 */
export const ALL_USERS = 'all'

function cohortBreakdown(b: BreakdownFilter): BreakdownPlan {
  const values = Array.isArray(b.breakdown) ? b.breakdown : [b.breakdown!]
  const parts = values.map((v) => {
    if (v === ALL_USERS || v === 0 || v === '0') return str(ALL_USERS)
    const id = typeof v === 'number' ? v : /^\d+$/.test(v) ? Number(v) : NaN
    if (!Number.isSafeInteger(id))
      throw new ValidationError(`Unknown cohort '${v}' in the breakdown`, 'breakdownFilter.breakdown')
    return `if(person_id IN COHORT ${num(id)}, ${str(String(id))}, '')`
  })
  return {
    value: `arrayJoin(arrayFilter(x -> x != '', [${parts.join(', ')}]))`,
    join: '',
    limit: values.length,
  }
}

export function planBreakdown(b: BreakdownFilter): BreakdownPlan {
  if (b.breakdown_type === 'cohort') return cohortBreakdown(b)
  if (Array.isArray(b.breakdown)) {
    throw new ValidationError('Only a cohort breakdown takes a list of values', 'breakdownFilter.breakdown')
  }
  const key = String(b.breakdown)
  const type = b.breakdown_type ?? 'event'
  let raw: string
  let join = ''
  switch (type) {
    case 'event':
      raw = propertyField(key)
      break
    case 'person':
      raw = propertyField(key, 'person.')
      break
    case 'hogql':
      raw = `(${key})`
      break
    case 'event_metadata':
      if (!/^(distinct_id|event|\$session_id|person_id|\$group_[0-4])$/.test(key)) {
        throw new ValidationError(`Unknown event field '${key}'`, 'breakdownFilter.breakdown')
      }
      raw = key.startsWith('$') ? `\`${key}\`` : key
      break
    case 'group': {
      const index = b.breakdown_group_type_index
      if (index === null || index === undefined) {
        throw new ValidationError('Group breakdowns need breakdown_group_type_index', 'breakdownFilter')
      }
      join =
        ` LEFT JOIN (SELECT key AS bd_group_key, ${propertyField(key)} AS bd_group_value` +
        ` FROM groups WHERE index = ${index}) AS bd_group ON \`$group_${index}\` = bd_group.bd_group_key`
      raw = 'bd_group.bd_group_value'
      break
    }
  }
  return {
    value: `ifNull(nullIf(toString(${raw}), ''), ${str(BREAKDOWN_NULL)})`,
    join,
    limit: b.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT,
  }
}

/**
 * Wraps a compiled query with columns (insight_bucket, insight_breakdown, insight_value) so that
 * only the top `limit` breakdown values stay and the others are summed per bucket into
 * BREAKDOWN_OTHER. Output columns: `head` (leading select items, each followed by ', '), then
 * breakdown and bucket (String) and value (Float64). One pass over the inner query, in three levels:
 * each level of subquery costs about 1 ms of analysis on 26.x (on 18.16 each analysed every level
 * below it again, a third of the statement's CPU at 500K events when this took six; docs/insights.md,
 * "Few levels of subquery").
 */
export function topBreakdownsSql(inner: string, limit: number, head = ''): string {
  const other = sqlStr(BREAKDOWN_OTHER)
  const perValue =
    'SELECT insight_breakdown AS bv, groupArray(tuple(insight_bucket, toFloat64(insight_value))) AS pts,' +
    ` sum(toFloat64(insight_value)) AS tot FROM (${inner}) GROUP BY bv`
  // ranked by total descending, then value; each value's points labelled with it or "other"
  const labelled =
    'SELECT arrayJoin(arrayMap((x, i) -> tuple(if(i <= ' +
    num(limit) +
    `, tupleElement(x, 1), ${other}), tupleElement(x, 2)),` +
    ' arraySort(x -> tuple(-tupleElement(x, 3), tupleElement(x, 1)), groupArray(tuple(bv, pts, tot))) AS ranked,' +
    ` arrayEnumerate(ranked))) AS lp FROM (${perValue})`
  return (
    `SELECT ${head}toString(tupleElement(lp, 1)) AS breakdown,` +
    ' toString(tupleElement(arrayJoin(tupleElement(lp, 2)) AS pt, 1)) AS bucket,' +
    ` toFloat64(sum(tupleElement(pt, 2))) AS value FROM (${labelled}) GROUP BY breakdown, bucket`
  )
}

/**
 * The breakdown values topBreakdownsSql keeps (same ranking: sum over the range descending, then
 * value), as a one-column query: what "other" is not, for the actors of an "other" point.
 */
export function topBreakdownValuesSql(inner: string, limit: number): string {
  return (
    `SELECT insight_breakdown FROM (${inner}) GROUP BY insight_breakdown` +
    ` ORDER BY sum(toFloat64(insight_value)) DESC, insight_breakdown ASC LIMIT ${num(limit)}`
  )
}

/** PostHog's order of breakdown series: real values, then the null value, then "other". */
export function breakdownRank(value: unknown): number {
  return value === BREAKDOWN_OTHER ? 2 : value === BREAKDOWN_NULL ? 1 : 0
}

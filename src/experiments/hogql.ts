// An experiment metric as one HogQL query, one row per variant, following PostHog's experiment
// query builder (products/experiments/backend/hogql_queries/experiment_query_builder.py):
//   exposures       one row per entity exposed inside the experiment's dates: its variant (the
//                   `$multiple` marker when it saw more than one, or its first variant under
//                   `first_seen`), its first and last exposure times
//   metric events   the events that can count, from the start date to the end date (plus the
//                   conversion window, when the metric has one)
//   per entity      the metric's value over the entity's events after its first exposure (and,
//                   with a conversion window, before its last exposure + the window)
//   per variant     entities, sum and sum of squares (ratios: the denominator's too, and their
//                   cross product; funnels: how many reached each step)
// HogQL keeps it team-guarded and resolves person_id through merges; conditions on time are
// aggregate -If combinators after an equi-join, not join conditions.
import { ValidationError } from '../http/errors.ts'
import {
  and,
  num,
  propertiesCondition,
  propertyField,
  seriesCondition,
  str,
  type EventsNode,
} from '../queries/insights/common/index.ts'
import {
  conversionWindowSeconds,
  type ExperimentMetric,
  type ExposureCriteria,
  type FunnelMetric,
  type MeanMetric,
  type MetricSource,
  type RatioMetric,
} from './metrics.ts'

/** The variant of entities exposed to more than one (PostHog's MULTIPLE_VARIANT_KEY). */
export const MULTIPLE_VARIANT_KEY = '$multiple'

/** A funnel without a conversion window counts conversions for three years (PostHog's default). */
const FUNNEL_DEFAULT_WINDOW = 3 * 365 * 86_400

/** What a metric query needs of its experiment (inlined into the query by the kind's prepare). */
export interface ExperimentFrame {
  flag_key: string
  /** the flag's variant keys, control first */
  variants: string[]
  /** ISO instants; start_date is set (a draft has no results) */
  start_date: string
  end_date: string | null
  group_type_index: number | null
  exposure_criteria: ExposureCriteria | null
  /**
   * HogQL: the project's test-account filters when exposure_criteria.filterTestAccounts is set
   * (PostHog applies them to the exposures and to the metric's events alike)
   */
  testAccounts?: string
}

/**
 * A UTC instant as a HogQL DateTime literal, to the second: events.timestamp holds seconds today,
 * so an event in the second of a launch (stored as that second) still counts.
 */
function at(iso: string): string {
  const ms = Date.parse(iso)
  if (!Number.isFinite(ms)) throw new ValidationError(`Invalid date '${iso}'`, 'start_date')
  const text = new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('T', ' ').replace('.000Z', '')
  return `toDateTime(${str(text)}, 'UTC')`
}

const dateFrom = (f: ExperimentFrame) => at(f.start_date)
const dateTo = (f: ExperimentFrame) => (f.end_date ? at(f.end_date) : 'now()')
const entityKey = (f: ExperimentFrame) =>
  f.group_type_index === null ? 'person_id' : `$group_${f.group_type_index}`

function exposureEvent(f: ExperimentFrame): string {
  return f.exposure_criteria?.exposure_config?.event ?? '$feature_flag_called'
}

/** `$feature_flag_called` carries the variant in `$feature_flag_response`; other events in `$feature/<key>`. */
function variantProperty(f: ExperimentFrame): string {
  return exposureEvent(f) === '$feature_flag_called'
    ? propertyField('$feature_flag_response')
    : propertyField(`$feature/${f.flag_key}`)
}

/** The events that expose an entity inside the experiment's dates. */
export function exposurePredicate(f: ExperimentFrame): string {
  const event = exposureEvent(f)
  return and([
    `timestamp >= ${dateFrom(f)}`,
    `timestamp <= ${dateTo(f)}`,
    `event = ${str(event)}`,
    event === '$feature_flag_called' ? `${propertyField('$feature_flag')} = ${str(f.flag_key)}` : undefined,
    `${variantProperty(f)} IN (${f.variants.map(str).join(', ')})`,
    f.group_type_index === null ? undefined : `${entityKey(f)} != ''`,
    propertiesCondition(f.exposure_criteria?.exposure_config?.properties),
    f.testAccounts,
  ])
}

/** One row per exposed entity: entity_id, variant, first_exposure_time, last_exposure_time. */
export function exposuresHogQL(f: ExperimentFrame): string {
  const vp = variantProperty(f)
  const variant =
    f.exposure_criteria?.multiple_variant_handling === 'first_seen'
      ? `argMin(${vp}, timestamp)`
      : `if(uniqExact(${vp}) > 1, ${str(MULTIPLE_VARIANT_KEY)}, any(${vp}))`
  return `SELECT ${entityKey(f)} AS entity_id, ${variant} AS variant,
    min(timestamp) AS first_exposure_time, max(timestamp) AS last_exposure_time
  FROM events
  WHERE ${exposurePredicate(f)}
  GROUP BY entity_id`
}

/** Metric events from the start date to the end date plus the conversion window (test accounts left out). */
function metricRange(f: ExperimentFrame, windowSeconds: number, inclusive = false): string {
  const range = `timestamp >= ${dateFrom(f)} AND timestamp ${inclusive ? '<=' : '<'} ${dateTo(f)} + toIntervalSecond(${num(windowSeconds)})`
  return f.testAccounts ? `${range} AND (${f.testAccounts})` : range
}

/** An event counts for an entity after its first exposure, and within the window of its last one. */
function afterExposure(windowSeconds: number): string {
  const after = 'metric_events.timestamp >= exposures.first_exposure_time'
  if (windowSeconds <= 0) return after
  return `${after} AND metric_events.timestamp < exposures.last_exposure_time + toIntervalSecond(${num(windowSeconds)})`
}

/** The per-event value of a source: 1 to count, the property as a number, or the session id. */
function valueExpr(s: MetricSource): string {
  const math = s.math ?? 'total'
  if (math === 'unique_session') return `$session_id`
  if (math === 'total') return '1'
  return `coalesce(toFloat(${propertyField(s.math_property!)}), 0)`
}

/** The per-entity aggregate of a source's values in column `col` of the events where `cond` holds. */
function aggregateExpr(s: MetricSource, col: string, cond: string): string {
  const v = `metric_events.${col}`
  switch (s.math ?? 'total') {
    case 'total':
    case 'sum':
      return `sumIf(toFloat(${v}), ${cond})`
    case 'avg':
      return `if(countIf(${cond}) = 0, 0, avgIf(toFloat(${v}), ${cond}))`
    case 'min':
      return `if(countIf(${cond}) = 0, 0, minIf(toFloat(${v}), ${cond}))`
    case 'max':
      return `if(countIf(${cond}) = 0, 0, maxIf(toFloat(${v}), ${cond}))`
    case 'unique_session':
      return `toFloat(uniqExactIf(${v}, (${cond}) AND ${v} != ''))`
  }
}

const sourceCondition = (s: MetricSource) => seriesCondition(s as EventsNode)

function entityJoin(f: ExperimentFrame, events: string, join: 'LEFT' | 'INNER' = 'LEFT'): string {
  return `FROM (${exposuresHogQL(f)}) AS exposures
  ${join} JOIN (${events}) AS metric_events ON exposures.entity_id = metric_events.entity_id
  GROUP BY exposures.entity_id, exposures.variant`
}

function meanHogQL(f: ExperimentFrame, m: MeanMetric): string {
  const w = conversionWindowSeconds(m)
  const events = `SELECT ${entityKey(f)} AS entity_id, timestamp, ${valueExpr(m.source)} AS value
    FROM events WHERE ${metricRange(f, w)} AND (${sourceCondition(m.source)})`
  const perEntity = `SELECT exposures.entity_id AS entity_id, exposures.variant AS variant,
    ${aggregateExpr(m.source, 'value', afterExposure(w))} AS value
  ${entityJoin(f, events)}`
  const totals = (
    t: string,
  ) => `SELECT ${t}.variant AS variant, count() AS num_users, sum(${t}.value) AS total_sum,
    sum(power(${t}.value, 2)) AS total_sum_of_squares`
  const low = m.lower_bound_percentile
  const high = m.upper_bound_percentile
  if (low == null && high == null)
    return `${totals('entity_metrics')} FROM (${perEntity}) AS entity_metrics GROUP BY variant`
  // winsorized: each entity's value clamped to the percentiles of all entities' values
  const lower = low == null ? 'min(entity_metrics.value)' : `quantile(${num(low)})(entity_metrics.value)`
  const upperOf = m.ignore_zeros
    ? 'if(entity_metrics.value != 0, entity_metrics.value, NULL)'
    : 'entity_metrics.value'
  const upper = high == null ? 'max(entity_metrics.value)' : `quantile(${num(high)})(${upperOf})`
  return `WITH entity_metrics AS (${perEntity})
  ${totals('winsorized')}
  FROM (
    SELECT entity_metrics.variant AS variant,
      least(greatest(percentiles.lower_bound, entity_metrics.value), percentiles.upper_bound) AS value
    FROM entity_metrics
    CROSS JOIN (SELECT ${lower} AS lower_bound, ${upper} AS upper_bound FROM entity_metrics) AS percentiles
  ) AS winsorized
  GROUP BY variant`
}

function ratioHogQL(f: ExperimentFrame, m: RatioMetric): string {
  const w = conversionWindowSeconds(m)
  const num_ = sourceCondition(m.numerator)
  const den = sourceCondition(m.denominator)
  const events = `SELECT ${entityKey(f)} AS entity_id, timestamp,
      if(${num_}, 1, 0) AS is_num, ${valueExpr(m.numerator)} AS num_value,
      if(${den}, 1, 0) AS is_den, ${valueExpr(m.denominator)} AS den_value
    FROM events WHERE ${metricRange(f, w)} AND ((${num_}) OR (${den}))`
  const c = afterExposure(w)
  const perEntity = `SELECT exposures.entity_id AS entity_id, exposures.variant AS variant,
    ${aggregateExpr(m.numerator, 'num_value', `(${c}) AND metric_events.is_num = 1`)} AS numerator_value,
    ${aggregateExpr(m.denominator, 'den_value', `(${c}) AND metric_events.is_den = 1`)} AS denominator_value
  ${entityJoin(f, events)}`
  return `SELECT e.variant AS variant, count() AS num_users,
    sum(e.numerator_value) AS total_sum, sum(power(e.numerator_value, 2)) AS total_sum_of_squares,
    sum(e.denominator_value) AS denominator_sum, sum(power(e.denominator_value, 2)) AS denominator_sum_squares,
    sum(e.numerator_value * e.denominator_value) AS numerator_denominator_sum_product
  FROM (${perEntity}) AS e
  GROUP BY variant`
}

function funnelHogQL(f: ExperimentFrame, metric: FunnelMetric): string {
  const w = conversionWindowSeconds(metric)
  const steps = metric.series.map((s) => seriesCondition(s))
  const exposure = exposurePredicate(f)
  // step 0 is the exposure itself: the funnel starts there, and its window is measured from it
  const all = [exposure, ...steps]
  const columns = all.map((c, i) => `if(${c}, 1, 0) AS step_${i}`).join(',\n      ')
  // events of one second are taken in step order (as PostHog orders same-time events), so the
  // funnel's clock is seconds × steps + the lowest step the event matches (every event here is
  // at or after the start date)
  const low = `multiIf(${all.map((c, i) => `${c}, ${i}`).join(', ')}, 0)`
  const events = `SELECT ${entityKey(f)} AS entity_id, timestamp, ${columns}, ${low} AS low
    FROM events
    WHERE (${exposure}) OR (${metricRange(f, w, true)} AND (${steps.map((c) => `(${c})`).join(' OR ')}))`
  const conds = steps
    .map((_, i) => `metric_events.step_${i} = 1`)
    .concat(`metric_events.step_${steps.length} = 1`)
  const m = all.length
  // inclusive of the window's last second, whatever the steps' order within it
  const window = (w > 0 ? w : FUNNEL_DEFAULT_WINDOW) * m + (m - 1)
  // counted from the start date, so it fits the UInt32 windowFunnel takes on every release
  const start = Math.floor(Date.parse(f.start_date) / 1000)
  const clock = `toUInt32((toUnixTimestamp(metric_events.timestamp) - ${num(start)}) * ${m} + metric_events.low)`
  const perEntity = `SELECT exposures.entity_id AS entity_id, exposures.variant AS variant,
    windowFunnel(${num(window)})(${clock}, ${conds.join(', ')}) AS level
  ${entityJoin(f, events, 'INNER')}`
  const stepCounts = steps.map((_, i) => `countIf(e.level >= ${i + 2})`).join(', ')
  return `SELECT e.variant AS variant, count() AS num_users,
    countIf(e.level = ${m}) AS total_sum, countIf(e.level = ${m}) AS total_sum_of_squares,
    [${stepCounts}] AS step_counts
  FROM (${perEntity}) AS e
  GROUP BY variant`
}

/** The HogQL of one metric of an experiment: one row per variant seen. */
export function metricHogQL(f: ExperimentFrame, m: ExperimentMetric): string {
  switch (m.metric_type) {
    case 'mean':
      return meanHogQL(f, m)
    case 'ratio':
      return ratioHogQL(f, m)
    case 'funnel':
      return funnelHogQL(f, m)
  }
}

/** The columns metricHogQL selects, in order. */
export function metricColumns(m: ExperimentMetric): string[] {
  const base = ['variant', 'num_users', 'total_sum', 'total_sum_of_squares']
  if (m.metric_type === 'ratio') {
    return [...base, 'denominator_sum', 'denominator_sum_squares', 'numerator_denominator_sum_product']
  }
  return m.metric_type === 'funnel' ? [...base, 'step_counts'] : base
}

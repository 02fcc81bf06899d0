// PathsQuery -> SQL, in PostHog's steps (paths_query_runner.py), one pass over the events:
//  1. events (HogQL, compiled: team guard, person merges, property storage): person, time in ms,
//     path item (named, cleaned, grouped);
//  2. per person, the (time, item) pairs sorted, split into sessions at gaps of 30 minutes or more;
//  3. per session, runs of one item kept once (the run's last event and its time), the path cut at
//     the start point (from its first occurrence on) or the end point (up to its first occurrence),
//     sessions without the point dropped, and then limited to stepLimit items (the first ones; the
//     last ones for an end point; with both points, the first and last halves around a '...');
//  4. one row per step: `N_item` keys of it and of the step before, the time since that step, and
//     the session's drop-off key (`length_lastitem`).
// Edges count the step rows per (previous key, key). Levels 2-4 are ClickHouse SQL reading only the
// compiled events level's columns (as the funnels do), never a table; funnel paths join level 2 to
// the funnel's own persons SQL (funnelScope).
import {
  and,
  compileInner,
  num,
  propertiesCondition,
  rangeCondition,
  resolveDateRange,
  sqlStr,
} from '../queries/insights/common/index.ts'
import { ValidationError } from '../http/errors.ts'
import { FunnelsQuery } from '../queries/insights/funnels/schema.ts'
import { funnelPersonsSQL } from '../queries/insights/funnels/sql.ts'
import type { DataFacts } from '../queries/person-overrides.ts'
import { normalizePoint, type PathsPlan, planPaths, SESSION_GAP_MS } from './plan.ts'
import type { FunnelPathsFilter, PathCleaningFilter, PathsQuery } from './schema.ts'

/**
 * Funnel paths: the persons a funnel step selects, each with the part of their events that
 * counts (ms bounds, either may be absent), and the gap that splits sessions (the funnel's
 * conversion window instead of 30 minutes).
 */
export interface FunnelScope {
  /** ClickHouse SQL: aggregation_target, lo_ms, hi_ms (NULL: unbounded) */
  sql: string
  gapMs: number
}

/** HogQL, one row per event read: actor_id (the person), ts (ms since the epoch), path_item. */
export function eventsHogQL(q: PathsQuery, plan: PathsPlan, tz: string, now = Date.now()): string {
  const range = resolveDateRange(q.dateRange, 'day', tz, { now })
  // filterTestAccounts: folded into q.properties by the kind (pathsWithTestAccounts).
  // `ts` is as precise as the compiler's toUnixTimestamp64Milli(timestamp) is: while events keep
  // whole seconds in `timestamp`, same-second events sort by item and conversion times are whole
  // seconds.
  const where = and([rangeCondition(range), propertiesCondition(q.properties), plan.eventTypes])
  return `SELECT person_id AS actor_id, toUnixTimestamp64Milli(timestamp) AS ts, ${plan.pathItem} AS path_item
FROM events
WHERE ${where}`
}

const list = (xs: string[]) => `[${xs.map((x) => sqlStr(x)).join(', ')}]`

/** The level-3 columns that cut each session's compact path and its times (PostHog's filtered/limited). */
function cutColumns(plan: PathsPlan): { defs: string[]; where: string | null } {
  const n = plan.stepLimit
  const start = plan.startPoint
  const end = plan.endPoint
  if (start && end) {
    // PostHog looks the points up as given here (no trailing-slash rule), the start in the whole
    // path and the end in the part from the start on.
    const h = Math.floor(n / 2)
    const limit = (f: string, middle: string) =>
      `if(length(${f}) > ${n}, arrayConcat(arraySlice(${f}, 1, ${h}), [${middle}], arraySlice(${f}, ${-h}, ${h})), ${f})`
    return {
      defs: [
        `indexOf(compact_path, ${sqlStr(start)}) AS start_index`,
        `if(start_index > 0, arraySlice(compact_path, start_index), compact_path) AS start_path`,
        `if(start_index > 0, arraySlice(timings, start_index), timings) AS start_timings`,
        `indexOf(start_path, ${sqlStr(end)}) AS end_index`,
        `if(end_index > 0, arrayResize(start_path, end_index), start_path) AS filtered_path`,
        `if(end_index > 0, arrayResize(start_timings, end_index), start_timings) AS filtered_timings`,
        `${limit('filtered_path', `'...'`)} AS limited_path`,
        `${limit('filtered_timings', `filtered_timings[${1 + h}]`)} AS limited_timings`,
      ],
      where: 'start_index > 0 AND end_index > 0',
    }
  }
  const target = normalizePoint(end ?? start)
  if (target === null) {
    return {
      defs: [
        `arraySlice(compact_path, 1, ${n}) AS limited_path`,
        `arraySlice(timings, 1, ${n}) AS limited_timings`,
      ],
      where: null,
    }
  }
  // from the start point on, or up to the end point; then the first (last) stepLimit items
  const cut = end ? 'arrayResize' : 'arraySlice'
  const slice = end ? `${-n}` : `1, ${n}`
  return {
    defs: [
      `indexOf(compact_path, ${sqlStr(target)}) AS target_index`,
      `arraySlice(${cut}(compact_path, target_index), ${slice}) AS limited_path`,
      `arraySlice(${cut}(timings, target_index), ${slice}) AS limited_timings`,
    ],
    where: 'target_index > 0',
  }
}

/**
 * ClickHouse SQL of one row per path step over the compiled events level: person_id, path,
 * conversion_ms (since the step before; 0 for the first), step (1-based), path_key (`step_path`),
 * last_path_key (the step before's key; NULL for the first) and path_dropoff_key (the session's
 * last key).
 */
export function stepsSQL(plan: PathsPlan, eventsSql: string, funnel?: FunnelScope): string {
  const conds: string[] = []
  if (plan.excludeEvents.length) conds.push(`e.path_item NOT IN ${list(plan.excludeEvents)}`)
  let join = ''
  if (funnel) {
    join = `\n      INNER JOIN (${funnel.sql}) AS f ON e.actor_id = f.aggregation_target`
    conds.push('(f.lo_ms IS NULL OR e.ts >= f.lo_ms)', '(f.hi_ms IS NULL OR e.ts <= f.hi_ms)')
  }
  const where = conds.length ? `WHERE ${conds.join(' AND ')}` : ''
  const gap = funnel?.gapMs ?? SESSION_GAP_MS
  const cut = cutColumns(plan)
  return `SELECT person_id, step_tuple.1 AS path, step_tuple.2 AS conversion_ms, step,
  concat(toString(step), '_', path) AS path_key,
  if(step > 1, concat(toString(step - 1), '_', step_tuple.3), NULL) AS last_path_key,
  path_dropoff_key
FROM (
  SELECT person_id,
    arrayMap(e -> e.2, session) AS path_basic,
    arrayMap(e -> e.1, session) AS times,
    arrayMap((x, y) -> x != y, path_basic, arrayPopFront(arrayPushBack(path_basic, ''))) AS keep,
    arrayFilter((x, k) -> k, times, keep) AS timings,
    arrayFilter((x, k) -> k, path_basic, keep) AS compact_path,
    ${cut.defs.join(',\n    ')},
    concat(toString(length(limited_path)), '_', limited_path[-1]) AS path_dropoff_key,
    arrayZip(limited_path, arrayDifference(limited_timings), arrayPopBack(arrayPushFront(limited_path, ''))) AS steps
  FROM (
    SELECT person_id, evs
    FROM (
      SELECT e.actor_id AS person_id, arraySort(groupArray(tuple(e.ts, e.path_item))) AS evs
      FROM (${eventsSql}) AS e${join}
      ${where}
      GROUP BY e.actor_id
    )
  )
  ARRAY JOIN arraySplit((e, gap) -> gap >= ${num(gap)}, evs, arrayDifference(arrayMap(e -> e.1, evs))) AS session
  ${cut.where ? `WHERE ${cut.where}` : ''}
)
ARRAY JOIN steps AS step_tuple, arrayEnumerate(steps) AS step`
}

/** ClickHouse SQL of the edges: source, target, value, average conversion ms, in PostHog's order. */
export function edgesSQL(plan: PathsPlan, stepsSql: string): string {
  const having: string[] = []
  if (plan.minEdgeWeight !== null) having.push(`value >= ${num(plan.minEdgeWeight)}`)
  if (plan.maxEdgeWeight !== null) having.push(`value <= ${num(plan.maxEdgeWeight)}`)
  return `SELECT last_path_key AS source, path_key AS target, count() AS value, avg(conversion_ms) AS average_conversion_time
FROM (${stepsSql})
WHERE source IS NOT NULL
GROUP BY source, target
${having.length ? `HAVING ${having.join(' AND ')}` : ''}
ORDER BY value DESC, source, target
LIMIT ${num(plan.edgeLimit)}`
}

/** Whose paths, in which zone, and what is known of the project's data (DataFacts). */
export interface PathsCompileOptions {
  teamId: number
  timezone: string
  facts?: DataFacts
  now?: number
  /** The project's path cleaning rules (settings `path_cleaning_filters`), for `pathReplacements`. */
  cleaning?: PathCleaningFilter[]
}

/**
 * The persons and event bounds of funnel paths, from the funnel's own persons SQL (the chain each
 * person is counted by; step times to the second):
 *  * after step N: from step N on; after the drop-off before step N (funnelStep -N): from the last
 *    step done (N-1) on;
 *  * before step N: up to step N; before the drop-off: up to the end of the conversion window;
 *  * between steps: from step N-1 to step N (N >= 2).
 * Persons are the funnel's actors of funnelStep (reached step N, or dropped off before step N).
 */
export async function funnelScope(f: FunnelPathsFilter, opts: PathsCompileOptions): Promise<FunnelScope> {
  const type = f.funnelPathType ?? 'funnel_path_after_step'
  const step = f.funnelStep ?? (type === 'funnel_path_between_steps' ? 2 : 1)
  if (step === 0 || step === -1) {
    throw new ValidationError('funnelStep is 1-based; drop-offs start at -2.', 'funnelPathsFilter.funnelStep')
  }
  if (type === 'funnel_path_between_steps' && step < 2) {
    throw new ValidationError(
      'Paths between steps need funnelStep 2 or more (the step and the one before it).',
      'funnelPathsFilter.funnelStep',
    )
  }
  const source = FunnelsQuery.parse(f.funnelSource)
  const { plan, sql } = await funnelPersonsSQL(source, { teamId: opts.teamId, timezone: opts.timezone })
  const n = plan.steps.length
  if (Math.abs(step) > n || (step < 0 && -step < 2)) {
    throw new ValidationError(`The funnel has no step ${step}.`, 'funnelPathsFilter.funnelStep')
  }
  const windowMs = plan.windowSeconds * 1000
  // the second step k (1-based) of the person's chain happened in, as ms since the epoch
  const at = (k: number) => `(toInt64(first_ts) + arraySum(arraySlice(timings, 1, ${k - 1}))) * 1000`
  const endOfSecond = (ms: string) => `${ms} + 999`
  let lo = 'NULL'
  let hi = 'NULL'
  if (type === 'funnel_path_after_step') lo = `max(${at(step > 0 ? step : -step - 1)})`
  else if (type === 'funnel_path_before_step') {
    hi = step > 0 ? `max(${endOfSecond(at(step))})` : `max(${endOfSecond(at(1))} + ${num(windowMs)})`
  } else {
    lo = `min(${at(step - 1)})`
    hi = `max(${endOfSecond(at(step))})`
  }
  const who = step > 0 ? `step_reached >= ${step - 1}` : `step_reached = ${-step - 2}`
  return {
    sql: `SELECT aggregation_target, ${lo} AS lo_ms, ${hi} AS hi_ms FROM (${sql}) WHERE ${who} GROUP BY aggregation_target`,
    gapMs: windowMs,
  }
}

/** The plan, the steps level as ClickHouse SQL, and the HogQL of its events level (shown to users). */
export async function pathsStepsSQL(q: PathsQuery, opts: PathsCompileOptions) {
  const plan = planPaths(q, opts.cleaning ?? [])
  const hogql = eventsHogQL(q, plan, opts.timezone, opts.now)
  const events = await compileInner(hogql, opts.teamId, opts.timezone, opts.facts)
  const funnel = q.funnelPathsFilter ? await funnelScope(q.funnelPathsFilter, opts) : undefined
  return { plan, hogql: events.hogql, sql: stepsSQL(plan, events.clickhouse, funnel) }
}

/**
 * ClickHouse SQL of the person ids behind one edge (pathStartKey -> pathEndKey; either may be
 * left out) or one drop-off (pathDropoffKey: the sessions that end at that key), one row each.
 */
export async function pathsActorsSQL(q: PathsQuery, opts: PathsCompileOptions): Promise<string> {
  const { sql } = await pathsStepsSQL(q, opts)
  const f = q.pathsFilter ?? {}
  const conds: string[] = []
  if (f.pathDropoffKey) {
    conds.push(`path_dropoff_key = ${sqlStr(f.pathDropoffKey)}`, 'path_key = path_dropoff_key')
  } else {
    if (f.pathStartKey) conds.push(`last_path_key = ${sqlStr(f.pathStartKey)}`)
    if (f.pathEndKey) conds.push(`path_key = ${sqlStr(f.pathEndKey)}`)
  }
  return `SELECT DISTINCT person_id FROM (${sql})${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`
}

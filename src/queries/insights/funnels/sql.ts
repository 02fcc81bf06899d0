// FunnelsQuery -> HogQL. ClickHouse's windowFunnel gives no timings or breakdown attribution, and
// PostHog's per-person state machine (funnel-udf/src/steps.rs) is a UDF Burrow does not install.
// So each person's events become one sorted array and every candidate start is followed with array
// functions; the result equals the state machine's:
//  * ordered: from each step-1 event, the earliest later event of each next step, all within the
//    window measured from the start. The person's result is the chain reaching most steps, first
//    to get there (ties: the later start; of chains starting in the same second, the one that got
//    there first), as PostHog's `max_step` keeps the first chain to reach a new maximum.
//  * strict: the same, but each step must be the person's very next event (all events are read).
//  * unordered: at each event, the distinct steps seen within the window before it (an event counts
//    for its lowest step, as PostHog's UDF does); the first event reaching the most steps wins.
//  * exclusions (from..to): a chain that is between step `from` and step `to` when an excluded event
//    happens within its window is tainted; it can still reach one more step but no further, and a
//    person whose best chain is tainted is left out (PostHog's `-1`). Unordered funnels ignore
//    exclusions, as PostHog's UDF does.
// Events are ordered by second, then by lowest step, which is how PostHog orders same-time events.
import {
  and,
  compileInner,
  num,
  propertiesCondition,
  rangeCondition,
  type ResolvedRange,
  resolveDateRange,
} from '../common/index.ts'
import type { DataFacts } from '../../person-overrides.ts'
import { orderedChains, unorderedChains } from './chains.ts'
import { bit, type EventLayout, eventLayout, stepAttribution, ts } from './layout.ts'
import { eventCondition, type FunnelPlan, planFunnel } from './plan.ts'
import type { FunnelsQuery } from './schema.ts'

export { type FunnelPlan, planFunnel } from './plan.ts'

/** HogQL, one row per matching event: who, when, which steps (1-based) and exclusions it matches. */
export function eventsHogQL(plan: FunnelPlan, where: string): string {
  const n = plan.steps.length
  const conds = plan.steps.map((s) => eventCondition(s))
  const mask = conds.map((c, i) => `if(${c}, ${bit(i + 1)}, 0)`).join(' + ')
  const lowest = `multiIf(${conds.map((c, i) => `${c}, ${i + 1}`).join(', ')}, 0)`
  // exclusion_i blocks entering step i (0-based) from step i-1, as PostHog numbers them.
  const exclusionBits: string[] = []
  for (let i = 1; i < n; i++) {
    const xs = plan.exclusions.filter((e) => e.funnelFromStep + 1 <= i && i <= e.funnelToStep)
    if (xs.length)
      exclusionBits.push(`if(${xs.map((x) => `(${eventCondition(x)})`).join(' OR ')}, ${bit(i)}, 0)`)
  }
  // without a breakdown the tuples carry no fifth element (sorting them is cheaper)
  const prop = plan.breakdown
    ? `,\n  ${plan.breakdown.array ? `[${plan.breakdown.exprs.join(', ')}]` : plan.breakdown.exprs[0]!} AS prop`
    : ''
  const filters = [where]
  if (plan.order !== 'strict') {
    const any = [...plan.steps, ...plan.exclusions].map((s) => `(${eventCondition(s)})`)
    filters.push(`(${any.join(' OR ')})`)
  }
  return `SELECT person_id AS aggregation_target, toUnixTimestamp(timestamp) AS ts,
  ${lowest} AS low,
  ${mask} AS st,
  ${exclusionBits.length ? exclusionBits.join(' + ') : '0'} AS ex${prop}
FROM events
WHERE ${filters.join(' AND ')}`
}

/** The breakdown value(s) each person is counted under, and the events that count for it. */
function attributionLevel(plan: FunnelPlan, L: EventLayout, inner: string): string {
  const a = plan.breakdown ? plan.attribution : 'first_touch'
  let bv: string
  let evs = 'evs_all'
  if (!plan.breakdown) bv = `''`
  else if (a === 'first_touch') bv = L.prop('arrayElement(evs_all, 1)')
  else if (a === 'last_touch') bv = L.prop('arrayElement(evs_all, length(evs_all))')
  else if (a === 'all_events') {
    bv = `arrayJoin(arrayDistinct(arrayMap(e -> ${L.prop('e')}, evs_all)))`
    evs = `arrayFilter(e -> ${L.prop('e')} = bv, evs_all)`
  } else {
    const step = plan.attributionStep + 1
    bv = `arrayJoin(arrayDistinct(arrayMap(e -> ${L.prop('e')},
      arrayFilter(e -> ${L.step('e', step)}, evs_all))))`
  }
  return `SELECT aggregation_target, ${bv} AS bv, ${evs} AS evs
FROM (
  SELECT aggregation_target,
    arraySort(groupArray(${L.element})) AS evs_all
  FROM (${inner})
  GROUP BY aggregation_target
)`
}

/**
 * ClickHouse SQL of one row per (person, breakdown value) that entered the funnel: breakdown,
 * step_reached (0-based), timings, first_ts, last_ts. `eventsSql` is the compiled events level, which
 * carries the team guard and person resolution; the levels above only compute over its columns.
 * (They are written as ClickHouse SQL because the HogQL parser's cost grows steeply with this much
 * nesting: seconds per query.)
 */
export function personsSQL(plan: FunnelPlan, eventsSql: string): string {
  const W = num(plan.windowSeconds)
  const L = eventLayout(plan)
  const unordered = plan.order === 'unordered'
  let startDefs: string[] = []
  let passed: string[] = []
  let defs: string[]
  let cols: string[]
  // In the lambda over the chains, x<k> is the chain's position for step k+1, t<k> its second,
  // p<i>/s<i> the first excluded event after step i (position, second), and j the chain's index.
  let params: string[]
  const excl: string[] = []
  if (unordered) {
    ;({ defs, cols } = unorderedChains(plan, L))
    defs = ['arrayEnumerate(evs) AS idx', ...defs]
    params = cols.map((_, k) => `x${k}`)
  } else {
    const c = orderedChains(plan, L)
    ;({ startDefs, defs, posFromStarts: passed } = c)
    cols = [...c.pos, ...c.secs, ...c.exclusions.flatMap((x) => [x.pos, x.secs])]
    params = [...c.pos.map((_, k) => `x${k}`), ...c.secs.map((_, k) => `t${k}`)]
    // An exclusion hit while the chain sits between step i and step i+1 (x<i-1> and x<i>): the
    // first excluded event after step i decides, as any later one is later still.
    for (const x of c.exclusions) {
      const i = x.step
      params.push(`p${i}`, `s${i}`)
      excl.push(`x${i - 1} > 0 AND p${i} > 0 AND (x${i} = 0 OR p${i} < x${i})
        AND s${i} - t0 <= ${W}, ${i}`)
    }
  }
  const steps = plan.steps.length
  const xs = Array.from({ length: steps }, (_, k) => `x${k}`)
  const reached = xs.map((x) => `(${x} > 0)`).join(' + ')
  // where the chain was tainted (0: not); a tainted chain counts up to one step past it
  const tainted = excl.length ? `multiIf(${excl.join(', ')}, 0)` : '0'
  const eff = excl.length ? `if(${tainted} > 0, least(${reached}, ${tainted} + 1), ${reached})` : reached
  // One tuple of scalars per chain, sorted: most steps counted (negated), untainted first; then
  // ordered/strict take the chain that reached its last counted step first, then the later start.
  // Chains starting in the same second (PostHog keeps the chain already at a step against another
  // of the same start second) go by the position of their last counted event, then of their start
  // (chains are in order of their starts). Unordered takes the first candidate. The chain's index
  // comes last. (eff and tainted are repeated in the text; ClickHouse computes each once a row.)
  const lastOf = (v: string) =>
    `multiIf(${Array.from({ length: steps - 1 }, (_, k) => `${eff} = ${k + 1}, ${v}${k}`).join(', ')}${steps > 1 ? ', ' : ''}${v}${steps - 1})`
  const key = unordered
    ? `tuple(-toInt64(${eff}), ${tainted} > 0, j, 0, 0, j)`
    : `tuple(-toInt64(${eff}), ${tainted} > 0, ${lastOf('t')}, 0 - t0, ${lastOf('x')}, j)`
  const infos = `arrayMap((${params.join(', ')}, j) -> ${key}, ${cols.join(', ')}, arrayEnumerate(${cols[0]}))`
  const best = `arrayElement(arraySort(${infos}), 1)`
  // Timings come from the steps the chosen chain counts: a prefix of an ordered or strict chain, in
  // order, each read by one element access a level above `best` (at `best`'s own level each of its
  // uses computes it again; and that read of `tsa` is what kept `evs` a column 18.16 read, above).
  // An unordered funnel times each step by its earliest event still inside the window (PostHog's
  // deque fronts), found at `best`'s level: 18.16 inlined aliases into the lambdas that capture them
  // and then lost a subquery's columns that only a lambda reads (chains.ts says why this stays).
  const inner = [`${best} AS best`]
  let times: string
  if (unordered) {
    const fronts = plan.steps.map((_, k) => `front${k + 1}`)
    inner.push('cands[tupleElement(best, 6)] AS best_j', 'tsa[best_j] AS best_ts')
    plan.steps.forEach((_, k) =>
      inner.push(
        `arrayFirstIndex((e, i) -> i <= best_j AND ${L.low('e')} = ${k + 1} AND best_ts - ${L.ts('e')} <= ${W}${stepAttribution(plan, L, k, 'e')}, evs, idx) AS front${k + 1}`,
      ),
    )
    inner.push(
      `arraySort(arrayFilter((t, i) -> i > 0, [${fronts.map((f) => ts(f)).join(', ')}], [${fronts.join(', ')}])) AS times`,
    )
    times = 'times'
  } else {
    const at = xs.map((_, k) => ts(`cx${k}[tupleElement(best, 6)]`))
    times = `arraySlice([${at.join(', ')}], 1, -tupleElement(best, 1))`
  }
  // the chain level reads the starts level's columns, and passes the chains' positions up
  const fromStarts = startDefs.length
    ? `(SELECT aggregation_target, bv, evs,${startDefs.map((d) => `\n      ${d}`).join(',')}
    FROM (${attributionLevel(plan, L, eventsSql)}))`
    : `(${attributionLevel(plan, L, eventsSql)})`
  // Reading `times` in the WHERE (true whenever step_reached >= 0) kept 18.16 reading `evs` at the
  // chain level when the caller reads no timing: everything else there reads it only in lambdas
  // (kept with the levels, chains.ts).
  const keep = unordered ? '' : ' AND length(times) > 0'
  return `SELECT aggregation_target, bv AS breakdown,
  -tupleElement(best, 1) - 1 AS step_reached,
  arrayMap((a, b) -> b - a, arraySlice(times, 1, length(times) - 1), arraySlice(times, 2)) AS timings,
  arrayElement(times, 1) AS first_ts, arrayElement(times, length(times)) AS last_ts
FROM (
  SELECT aggregation_target, bv, best, ${times} AS times
  FROM (
    SELECT aggregation_target, bv, evs, ${[...passed, `arrayMap(e -> ${L.ts('e')}, evs) AS tsa`, ...defs, ...inner].join(',\n      ')}
    FROM ${fromStarts}
  )
)
WHERE step_reached >= 0 AND tupleElement(best, 2) = 0${keep}`
}

/** The funnel's date range: PostHog's QueryDateRange on the query's interval (default day). */
// date_from 'all' resolves without a lower bound (the earliest event only matters for charts).
export function funnelRange(q: FunnelsQuery, tz: string): ResolvedRange {
  return resolveDateRange(q.dateRange, q.interval ?? 'day', tz)
}

export function funnelWhere(q: FunnelsQuery, tz: string): string {
  return and([rangeCondition(funnelRange(q, tz)), propertiesCondition(q.properties)])
}

/** Whose funnel, in which zone, and what is known of the project's data (DataFacts). */
export interface FunnelCompileOptions {
  teamId: number
  timezone: string
  facts?: DataFacts
}

/** The compiled events level (team-guarded ClickHouse SQL, unlimited). */
export async function compileEvents(plan: FunnelPlan, where: string, opts: FunnelCompileOptions) {
  return compileInner(eventsHogQL(plan, where), opts.teamId, opts.timezone, opts.facts)
}

/** Persons of a funnel as ClickHouse SQL, plus the HogQL of its events level (shown to users). */
export async function funnelPersonsSQL(q: FunnelsQuery, opts: FunnelCompileOptions) {
  const plan = planFunnel(q)
  const events = await compileEvents(plan, funnelWhere(q, opts.timezone), opts)
  return { plan, sql: personsSQL(plan, events.clickhouse), hogql: events.hogql }
}

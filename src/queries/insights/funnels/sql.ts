// FunnelsQuery -> HogQL. ClickHouse 18.16 has windowFunnel, but without modes, timings or breakdown
// attribution, and no arrayFold to run PostHog's per-person state machine (funnel-udf/src/steps.rs).
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
import { ValidationError } from '../../../http/errors.ts'
import {
  and,
  compileInner,
  num,
  propertiesCondition,
  propertyField,
  rangeCondition,
  type ResolvedRange,
  resolveDateRange,
  str,
} from '../common/index.ts'
import type { DataFacts } from '../../person-overrides.ts'
import { EventsNode, type ExclusionNode, type FunnelsQuery } from './schema.ts'

// PostHog's DATERANGE_MAP: a month is 30 days.
const UNIT_SECONDS = { second: 1, minute: 60, hour: 3600, day: 86400, week: 604800, month: 2592000 }

export type OrderType = 'ordered' | 'strict' | 'unordered'
export type Attribution = 'first_touch' | 'last_touch' | 'all_events' | 'step'

export interface FunnelPlan {
  steps: EventsNode[]
  order: OrderType
  windowSeconds: number
  exclusions: ExclusionNode[]
  breakdown: { exprs: string[]; array: boolean } | null
  attribution: Attribution
  attributionStep: number
  breakdownLimit: number
}

export const DEFAULT_BREAKDOWN_LIMIT = 25

function eventCondition(node: EventsNode | ExclusionNode): string {
  return and([
    node.event !== null && node.event !== undefined ? `event = ${str(node.event)}` : undefined,
    propertiesCondition(node.properties),
  ])
}

// Funnels keep PostHog's '' for a missing value (trends use the null label instead).
function breakdownExpr(prop: string | number, type: string): string {
  const key = String(prop)
  if (type === 'event') return `ifNull(toString(${propertyField(key)}), '')`
  if (type === 'person') return `ifNull(toString(${propertyField(key, 'person.')}), '')`
  if (type === 'hogql') return `ifNull(toString(${key}), '')`
  throw new ValidationError(`Unsupported breakdown type '${type}'.`, 'breakdownFilter.breakdown_type')
}

export function planFunnel(q: FunnelsQuery): FunnelPlan {
  const steps = q.series.map((s, i) => {
    const node = EventsNode.safeParse(s)
    if (!node.success) {
      throw new ValidationError(`Step ${i} must be an EventsNode (actions are not supported).`, `series.${i}`)
    }
    return node.data
  })
  if (steps.length > MAX_STEPS) {
    throw new ValidationError(`A funnel has at most ${MAX_STEPS} steps.`, 'series')
  }
  const f = q.funnelsFilter ?? {}
  const unit = f.funnelWindowIntervalUnit ?? 'day'
  const windowSeconds = f.funnelWindowInterval
    ? f.funnelWindowInterval * UNIT_SECONDS[unit]
    : (f.funnelWindowDays ?? 14) * 86400
  const exclusions = f.exclusions ?? []
  for (const e of exclusions) {
    if (e.funnelFromStep >= e.funnelToStep) {
      throw new ValidationError(
        'Exclusion event range is invalid. End of range should be greater than start.',
      )
    }
    if (e.funnelToStep > steps.length - 1) {
      throw new ValidationError(
        'Exclusion event range is invalid. End of range is greater than number of steps.',
      )
    }
  }
  const order = f.funnelOrderType ?? 'ordered'
  const b = q.breakdownFilter
  let breakdown: FunnelPlan['breakdown'] = null
  if (b?.breakdown !== null && b?.breakdown !== undefined && b.breakdown !== '') {
    const type = b.breakdown_type ?? 'event'
    breakdown = Array.isArray(b.breakdown)
      ? { exprs: b.breakdown.map((x) => breakdownExpr(x, type)), array: true }
      : { exprs: [breakdownExpr(b.breakdown, type)], array: false }
  }
  const attribution = f.breakdownAttributionType ?? 'first_touch'
  const attributionStep = f.breakdownAttributionValue ?? 0
  if (attribution === 'step' && attributionStep >= steps.length) {
    throw new ValidationError('breakdownAttributionValue is not a step of the funnel.')
  }
  if (order === 'unordered' && attribution === 'step' && attributionStep !== 0) {
    throw new ValidationError(
      'Only the first step can be used for breakdown attribution in unordered funnels',
    )
  }
  return {
    steps,
    order,
    windowSeconds,
    exclusions: order === 'unordered' ? [] : exclusions,
    breakdown,
    attribution,
    attributionStep,
    breakdownLimit: b?.breakdown_limit ?? DEFAULT_BREAKDOWN_LIMIT,
  }
}

// Each element of `evs` is a tuple of scalars: 1 ts (seconds), 2 lowest step matched (0: none),
// 3 steps matched as a mask (bit k-1: step k), 4 exclusions matched as a mask (bit i-1: the
// exclusion blocking step i), 5 breakdown value (only with a breakdown). Tuples compare in that order, so sorting them orders
// events by second, then by lowest step. Masks instead of arrays: a tuple holding arrays costs an
// allocation per event to build, group and sort, and testing a bit is cheaper than `has`.
// Timestamps come from a flat array: lambdas copy every array they capture once per element they map
// over, so capturing the event tuples would cost memory quadratic in a person's events.
const ts = (i: string) => `tsa[${i}]`

/** The most steps a funnel may have: one bit each in a UInt64 mask, as exact JS integers. */
export const MAX_STEPS = 52
const bit = (k: number) => String(2 ** (k - 1))
/** `mask` has bit k (1-based), as SQL. */
const hasBit = (mask: string, k: number) => `bitAnd(${mask}, ${bit(k)}) != 0`

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
function attributionLevel(plan: FunnelPlan, inner: string): string {
  const a = plan.breakdown ? plan.attribution : 'first_touch'
  let bv: string
  let evs = 'evs_all'
  if (!plan.breakdown) bv = `''`
  else if (a === 'first_touch') bv = `tupleElement(arrayElement(evs_all, 1), 5)`
  else if (a === 'last_touch') bv = `tupleElement(arrayElement(evs_all, length(evs_all)), 5)`
  else if (a === 'all_events') {
    bv = `arrayJoin(arrayDistinct(arrayMap(e -> e.5, evs_all)))`
    evs = `arrayFilter(e -> e.5 = bv, evs_all)`
  } else {
    const step = plan.attributionStep + 1
    bv = `arrayJoin(arrayDistinct(arrayMap(e -> e.5,
      arrayFilter(e -> ${hasBit('e.3', step)}, evs_all))))`
  }
  return `SELECT aggregation_target, ${bv} AS bv, ${evs} AS evs
FROM (
  SELECT aggregation_target,
    arraySort(groupArray(tuple(ts, low, st, ex${plan.breakdown ? ', prop' : ''}))) AS evs_all
  FROM (${inner})
  GROUP BY aggregation_target
)`
}

/** Extra condition for the event used as step `k` (0-based) under step attribution. */
function stepAttribution(plan: FunnelPlan, k: number, e: string): string {
  return plan.breakdown && plan.attribution === 'step' && plan.attributionStep === k
    ? ` AND tupleElement(${e}, 5) = bv`
    : ''
}

/**
 * Per-step position lists: `pos<k>` the positions of the events that can be step k (1-based) and
 * `cnt<k>` how many of them occur up to each position, so "the first step-k event after position q"
 * is `pos<k>[cnt<k>[q] + 1]` and "the last one up to q" is `pos<k>[cnt<k>[q]]`: one lookup instead of a
 * scan, which keeps a person with thousands of events linear rather than quadratic.
 */
function positionDefs(name: string, flag: (e: string) => string): string[] {
  return [
    `arrayFilter((i, e) -> ${flag('e')}, idx, evs) AS pos${name}`,
    `arrayCumSum(arrayMap(e -> toUInt32(${flag('e')}), evs)) AS cnt${name}`,
  ]
}
const after = (name: string, q: string) => `pos${name}[cnt${name}[${q}] + 1]`
const upTo = (name: string, q: string) => `pos${name}[cnt${name}[${q}]]`

/**
 * Candidate chains as one array of event positions per step (`cols[k][j]`: chain j's event for step
 * k+1, 0 = not reached): flat arrays, never an array of arrays, which costs an allocation per chain.
 */
function chains(plan: FunnelPlan): { defs: string[]; cols: string[] } {
  const n = plan.steps.length
  const W = num(plan.windowSeconds)
  const defs: string[] = []
  if (plan.order === 'unordered') {
    // at each candidate j: per step, its latest event up to j, if still within the window
    defs.push(`arrayFilter((j, e) -> e.2 > 0, idx, evs) AS cands`)
    const cols: string[] = []
    for (let k = 1; k <= n; k++) {
      defs.push(...positionDefs(`u${k}`, (e) => `(${e}.2 = ${k}${stepAttribution(plan, k - 1, e)})`))
      const last = upTo(`u${k}`, 'j')
      defs.push(
        `arrayMap(j -> if(${last} > 0 AND ${ts('j')} - ${ts(last)} <= ${W}, ${last}, 0), cands) AS u${k}`,
      )
      cols.push(`u${k}`)
    }
    return { defs, cols }
  }
  // Only starts that can win: a start followed by another start before any step-2 event is beaten by
  // that later start (same chain, more window left, and the later start wins ties), so the starts
  // kept are those whose next step-1-or-2 event (strict: next event) can be step 2, and the last.
  const f1 = `arrayMap(e -> toUInt8(${hasBit('e.3', 1)}${stepAttribution(plan, 0, 'e')}), evs)`
  const f2 = `arrayMap(e -> toUInt8(${hasBit('e.3', 2)}${stepAttribution(plan, 1, 'e')}), evs)`
  defs.push(`${f1} AS f1`, `${f2} AS f2`)
  if (plan.order === 'strict') {
    defs.push('idx AS fpos', 'f1 AS fa', 'arrayPushBack(arrayPopFront(f2), 0) AS fnext')
  } else {
    defs.push(
      'arrayFilter((i, a, b) -> a OR b, idx, f1, f2) AS fpos',
      'arrayFilter((a, x, b) -> x OR b, f1, f1, f2) AS fa',
      // cut back to fpos's length: when fpos is empty (a person whose events are all of step 3 or
      // later) pushing the 0 would leave fnext one longer than fpos and fa
      'arraySlice(arrayPushBack(arrayPopFront(arrayFilter((b, a, x) -> a OR x, f2, f1, f2)), 0), 1, length(fpos)) AS fnext',
    )
  }
  const lastStart = 'arrayFilter((i, a) -> a = 1, idx, f1)[-1]'
  const starts = `arrayFilter(p -> p > 0, arrayDistinct(arrayPushBack(
    arrayFilter((i, a, b) -> a = 1 AND b = 1, fpos, fa, fnext), ${lastStart})))`
  const cols = ['s0']
  defs.push(`${starts} AS s0`)
  for (let k = 1; k < n; k++) {
    const q = k === 1 ? 'p' : 'q'
    let body: string
    if (plan.order === 'strict') {
      defs.push(
        `arrayMap(e -> toUInt8(${hasBit('e.3', k + 1)}${stepAttribution(plan, k, 'e')}), evs) AS sf${k + 1}`,
      )
      body = `if(${q} > 0 AND ${q} + 1 <= length(evs) AND sf${k + 1}[${q} + 1] = 1
        AND ${ts(`${q} + 1`)} - ${ts('p')} <= ${W}, ${q} + 1, 0)`
    } else {
      defs.push(
        ...positionDefs(`${k + 1}`, (e) => `(${hasBit(`${e}.3`, k + 1)}${stepAttribution(plan, k, e)})`),
      )
      // the earliest step-(k+1) event after the previous step; if even that one is outside the
      // window, none is inside
      const next = after(`${k + 1}`, q)
      body = `if(${q} = 0, 0, if(${next} > 0 AND ${ts(next)} - ${ts('p')} <= ${W}, ${next}, 0))`
    }
    const lambda = k === 1 ? `p -> ${body}, s0` : `(p, q) -> ${body}, s0, c${k - 1}`
    defs.push(`arrayMap(${lambda}) AS c${k}`)
    cols.push(`c${k}`)
  }
  return { defs, cols }
}

/**
 * ClickHouse SQL of one row per (person, breakdown value) that entered the funnel: breakdown,
 * step_reached (0-based), timings, first_ts, last_ts. `eventsSql` is the compiled events level, which
 * carries the team guard and person resolution; the levels above only compute over its columns.
 * (They are written as ClickHouse SQL because the HogQL parser's cost grows steeply with this much
 * nesting: seconds per query.)
 */
export function personsSQL(plan: FunnelPlan, eventsSql: string): string {
  const n = plan.steps.length
  const W = num(plan.windowSeconds)
  const { defs, cols } = chains(plan)
  // In the lambda over the chains, x<k> is the chain's position for step k+1 and j its index.
  const xs = cols.map((_, k) => `x${k}`)
  // An exclusion hit while the chain sits between step i and step i+1 (x<i-1> and x<i>): the first
  // excluded event after step i decides, as any later one is later still.
  const excl: string[] = []
  for (let i = 1; i < n; i++) {
    if (!plan.exclusions.some((e) => e.funnelFromStep + 1 <= i && i <= e.funnelToStep)) continue
    defs.push(...positionDefs(`x${i}`, (e) => hasBit(`${e}.4`, i)))
    const x = after(`x${i}`, `x${i - 1}`)
    excl.push(`x${i - 1} > 0 AND ${x} > 0 AND (x${i} = 0 OR ${x} < x${i})
        AND ${ts(x)} - ${ts('x0')} <= ${W}, ${i}`)
  }
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
  const unordered = plan.order === 'unordered'
  const lastAt = `multiIf(${xs
    .slice(0, -1)
    .map((x, k) => `${eff} = ${k + 1}, ${x}`)
    .join(', ')}, ${xs[xs.length - 1]})`
  const key = unordered
    ? `tuple(-toInt64(${eff}), ${tainted} > 0, j, 0, 0, j)`
    : `tuple(-toInt64(${eff}), ${tainted} > 0, ${ts(lastAt)}, 0 - ${ts('x0')}, ${lastAt}, j)`
  const infos = `arrayMap((${xs.join(', ')}, j) -> ${key}, ${cols.join(', ')}, arrayEnumerate(${cols[0]}))`
  const best = `arrayElement(arraySort(${infos}), 1)`
  // Timings come from the steps the chosen chain counts: a prefix of an ordered or strict chain, in
  // order, each read by one element access a level above `best` (a lambda over the chain would copy
  // `tsa`, which it captures, once per element; and at `best`'s own level each of its uses computes
  // it again). An unordered funnel times each step by its earliest event still inside the window
  // (PostHog's deque fronts), found at `best`'s level: 18.16 inlines aliases into the lambdas that
  // capture them and then loses a subquery's columns that only a lambda reads.
  const inner = [`${best} AS best`]
  let times = `arraySlice([${cols.map((c) => ts(`${c}[tupleElement(best, 6)]`)).join(', ')}], 1, -tupleElement(best, 1))`
  if (unordered) {
    const fronts = plan.steps.map((_, k) => `front${k + 1}`)
    inner.push('cands[tupleElement(best, 6)] AS best_j', 'tsa[best_j] AS best_ts')
    plan.steps.forEach((_, k) =>
      inner.push(
        `arrayFirstIndex((e, i) -> i <= best_j AND e.2 = ${k + 1} AND best_ts - e.1 <= ${W}${stepAttribution(plan, k, 'e')}, evs, idx) AS front${k + 1}`,
      ),
    )
    inner.push(
      `arraySort(arrayFilter((t, i) -> i > 0, [${fronts.map((f) => ts(f)).join(', ')}], [${fronts.join(', ')}])) AS times`,
    )
    times = 'times'
  }
  return `SELECT aggregation_target, bv AS breakdown,
  -tupleElement(best, 1) - 1 AS step_reached,
  arrayMap((a, b) -> b - a, arraySlice(times, 1, length(times) - 1), arraySlice(times, 2)) AS timings,
  arrayElement(times, 1) AS first_ts, arrayElement(times, length(times)) AS last_ts
FROM (
  SELECT aggregation_target, bv, best, ${times} AS times
  FROM (
    SELECT aggregation_target, bv, evs,
      arrayEnumerate(evs) AS idx,
      arrayMap(e -> e.1, evs) AS tsa,${[...defs, ...inner].map((d) => `\n      ${d}`).join(',')}
    FROM (${attributionLevel(plan, eventsSql)})
  )
)
WHERE step_reached >= 0 AND tupleElement(best, 2) = 0`
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

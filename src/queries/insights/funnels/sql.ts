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

// An element of `evs` is one event, read through an EventLayout. The tuple layout holds scalars:
// 1 ts (seconds), 2 lowest step matched (0: none), 3 steps matched as a mask (bit k-1: step k),
// 4 exclusions matched as a mask (bit i-1: the exclusion blocking step i), 5 breakdown value (only
// with a breakdown). Tuples compare in that order, so sorting them orders events by second, then by
// lowest step. Masks instead of arrays: a tuple holding arrays costs an allocation per event to
// build, group and sort, and testing a bit is cheaper than `has`.
// Without a breakdown and with at most PACKED_MAX_STEPS steps, an event is one UInt64 instead (the
// packed layout): the second in the high 32 bits, then the lowest step (4 bits), the steps mask and
// the exclusions mask, so that the numbers sort exactly as the tuples do. Grouping and sorting one
// number per event cost a third of what tuples cost (docs/performance.md, "Funnels: one number per
// event"), and the grouping was most of a funnel's time.
// Timestamps come from a flat array: lambdas copy every array they capture once per element they map
// over, so capturing the events would cost memory quadratic in a person's events.
const ts = (i: string) => `tsa[${i}]`

/** The most steps a funnel may have: one bit each in a UInt64 mask, as exact JS integers. */
export const MAX_STEPS = 52
const bit = (k: number) => String(2 ** (k - 1))
/** `mask` has bit k (1-based), as SQL. */
const hasBit = (mask: string, k: number) => `bitAnd(${mask}, ${bit(k)}) != 0`

/** The most steps the packed layout holds: 32 bits for 4 + n + (n - 1) bits. */
export const PACKED_MAX_STEPS = 14

/** How `evs` elements are built (over the events level's columns) and read. */
export interface EventLayout {
  packed: boolean
  /** the `groupArray` argument */
  element: string
  ts(e: string): string
  low(e: string): string
  /** e can be step k (1-based) */
  step(e: string, k: number): string
  /** e is an exclusion blocking step i */
  excluded(e: string, i: number): string
  prop(e: string): string
}

export function eventLayout(plan: FunnelPlan): EventLayout {
  const n = plan.steps.length
  if (plan.breakdown || n > PACKED_MAX_STEPS) {
    return {
      packed: false,
      element: `tuple(ts, low, st, ex${plan.breakdown ? ', prop' : ''})`,
      ts: (e) => `${e}.1`,
      low: (e) => `${e}.2`,
      step: (e, k) => hasBit(`${e}.3`, k),
      excluded: (e, i) => hasBit(`${e}.4`, i),
      prop: (e) => `tupleElement(${e}, 5)`,
    }
  }
  // bits 0..n-2 exclusions, n-1..2n-2 steps, 2n-1..2n+2 the lowest step, 32..63 the second
  const stAt = n - 1
  const lowAt = 2 * n - 1
  return {
    packed: true,
    element: `toUInt64(ts) * 4294967296 + toUInt64(low) * ${2 ** lowAt} + toUInt64(st) * ${2 ** stAt} + toUInt64(ex)`,
    ts: (e) => `toUInt32(bitShiftRight(${e}, 32))`,
    low: (e) => `bitAnd(bitShiftRight(${e}, ${lowAt}), 15)`,
    step: (e, k) => hasBit(e, stAt + k),
    excluded: (e, i) => hasBit(e, i),
    prop: () => {
      throw new Error('the packed layout has no breakdown value')
    },
  }
}

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

/** Extra condition for the event used as step `k` (0-based) under step attribution. */
function stepAttribution(plan: FunnelPlan, L: EventLayout, k: number, e: string): string {
  return plan.breakdown && plan.attribution === 'step' && plan.attributionStep === k
    ? ` AND ${L.prop(e)} = bv`
    : ''
}

/**
 * Per-step position lists: `pos<k>` the positions of the events that can be step k (1-based) and
 * `cnt<k>` how many of them occur up to each position, so "the last step-k event up to q" is
 * `pos<k>[cnt<k>[q]]`: one lookup instead of a scan.
 */
function positionDefs(name: string, flag: (e: string) => string): string[] {
  return [
    `arrayFilter((i, e) -> ${flag('e')}, idx, evs) AS pos${name}`,
    `arrayCumSum(arrayMap(e -> toUInt32(${flag('e')}), evs)) AS cnt${name}`,
  ]
}
const upTo = (name: string, q: string) => `pos${name}[cnt${name}[${q}]]`

/** `a` moved `by` places to the front, zeros behind: element i of the result is element i+by of `a`. */
function shifted(a: string, by: number): string {
  let out = a
  for (let i = 0; i < by; i++) out = `arrayPushBack(arrayPopFront(${out}), 0)`
  return out
}

/**
 * Candidate chains of an ordered or strict funnel, as flat arrays with one element per chain
 * (never an array of arrays, which costs an allocation per chain): `pos[k]` each chain's event
 * position for step k+1 and `secs[k]` its second (0 = not reached), and per exclusion blocking step
 * i+1 the position and second of the first excluded event after the chain's step-i event.
 *
 * Lambdas copy every array they capture once per element they map over, so a lambda over the
 * chains that captured a per-event array (the seconds, a running count) cost chains × events per
 * person. Every per-chain value is therefore read either by filtering a per-event array down to the
 * starts (no capture), or by an index into the short list of one step's events: only those lists
 * are captured (docs/performance.md, "Funnels: one number per event, no per-event captures").
 */
interface ChainColumns {
  /** the starts level: per-start arrays, from a person's events (its helpers named `s_…`) */
  startDefs: string[]
  /** the chain level above it: the step lists and what is read through them, and `best` */
  defs: string[]
  pos: string[]
  secs: string[]
  exclusions: { step: number; pos: string; secs: string }[]
}

// Two levels, because of two traits of 18.16. It expands every alias where it is used, so a chain of
// aliases each using the one before and the starts grows the statement with the square of the
// steps ("AST is too big" at 20 steps) unless the starts are columns of a level below. And it drops
// a subquery's column that only a lambda reads, so what a lambda captures (the step lists) is
// computed at the chain level from `evs`, which the level above reads through `tsa`.
function orderedChains(plan: FunnelPlan, L: EventLayout): ChainColumns {
  const n = plan.steps.length
  const W = num(plan.windowSeconds)
  const strict = plan.order === 'strict'
  const mask = (k: number, name: string) =>
    `arrayMap(e -> toUInt8(${L.step('e', k)}${stepAttribution(plan, L, k - 1, 'e')}), evs) AS ${name}`
  const exclusionSteps = Array.from({ length: n - 1 }, (_, i) => i + 1).filter((i) =>
    plan.exclusions.some((e) => e.funnelFromStep + 1 <= i && i <= e.funnelToStep),
  )
  const exclusionMask = (i: number, name: string) =>
    `arrayMap(e -> toUInt8(${L.excluded('e', i)}), evs) AS ${name}`

  // ---- the starts level
  // Only starts that can win: a start followed by another start before any step-2 event is beaten by
  // that later start (same chain, more window left, and the later start wins ties), so the starts
  // kept are those whose next step-1-or-2 event (strict: next event) can be step 2, and the last.
  // `s_g` picks the step-1-or-2 events (strict: all); `s_fs` marks the starts among them.
  const sd = [`arrayEnumerate(evs) AS s_idx`, `arrayMap(e -> ${L.ts('e')}, evs) AS s_tsa`]
  sd.push(mask(1, 's_m1'), mask(2, 's_m2'))
  let inG = (a: string) => a
  if (strict) sd.push('s_m1 AS s_fa', `${shifted('s_m2', 1)} AS s_fnext`)
  else {
    sd.push(
      'arrayMap((a, b) -> a OR b, s_m1, s_m2) AS s_g',
      'arrayFilter((a, x) -> x, s_m1, s_g) AS s_fa',
      // cut back to s_fa's length: when s_g is empty (a person whose events are all of step 3 or
      // later) pushing the 0 would leave s_fnext one longer
      `arraySlice(${shifted('arrayFilter((b, x) -> x, s_m2, s_g)', 1)}, 1, length(s_fa)) AS s_fnext`,
    )
    inG = (a) => `arrayFilter((v, x) -> x, ${a}, s_g)`
  }
  // s_fleft: step-1 events from here to the end, so `s_fleft = 1` on a step-1 event marks the last
  sd.push(
    'arrayReverse(arrayCumSum(arrayReverse(s_fa))) AS s_fleft',
    'arrayMap((a, b, c) -> a AND (b OR c = 1), s_fa, s_fnext, s_fleft) AS s_fs',
  )
  const atStart = (a: string) => `arrayFilter((v, s) -> s, ${inG(a)}, s_fs)`
  sd.push(`${atStart('s_idx')} AS cx0`, `${atStart('s_tsa')} AS ct0`)
  const pos = ['cx0']
  const secs = ['ct0']

  // ---- the chain level (and, for strict funnels, the rest of the starts level)
  const d = ['arrayEnumerate(evs) AS idx']
  // a list of one step's (or exclusion's) events: positions and seconds
  const list = (name: string, m: string) => [
    `arrayFilter((i, m) -> m, idx, ${m}) AS l${name}`,
    `arrayFilter((t, m) -> m, tsa, ${m}) AS ls${name}`,
  ]
  for (let k = 2; k <= n; k++) {
    if (strict) {
      // step k of the chain from event i is event i+k-1: the arrays moved k-1 places
      if (k > 2) sd.push(mask(k, `s_m${k}`))
      const reach =
        k === 2
          ? `arrayMap((m, t, s) -> m AND t - s <= ${W}, ${shifted('s_m2', 1)}, ${shifted('s_tsa', 1)}, s_tsa)`
          : `arrayMap((r, m, t, s) -> r AND m AND t - s <= ${W}, s_r${k - 1}, ${shifted(`s_m${k}`, k - 1)}, ${shifted('s_tsa', k - 1)}, s_tsa)`
      sd.push(
        `${reach} AS s_r${k}`,
        `arrayMap((x, r) -> if(r, x + ${k - 1}, 0), cx0, ${atStart(`s_r${k}`)}) AS cx${k - 1}`,
        `arrayMap((t, r) -> if(r, t, 0), ${atStart(shifted('s_tsa', k - 1))}, ${atStart(`s_r${k}`)}) AS ct${k - 1}`,
      )
    } else {
      // q<k>: each chain's index in step k's list (0: not reached): the first step-k event after the
      // chain's step k-1 event, if within the window of its start (if even the first one is outside
      // the window, none is inside). a<k>: how many step-k events there are up to each start (k = 2)
      // or each step-(k-1) event.
      d.push(mask(k, `m${k}`), ...list(String(k), `m${k}`))
      const first = (c: string) =>
        `if(${c} + 1 <= length(ls${k}) AND ls${k}[${c} + 1] - t <= ${W}, ${c} + 1, 0)`
      if (k === 2) {
        sd.push(`${atStart('arrayCumSum(s_m2)')} AS a2`)
        d.push(`arrayMap((c, t) -> ${first('c')}, a2, ct0) AS q2`)
      } else
        d.push(
          `arrayFilter((c, m) -> m, arrayCumSum(m${k}), m${k - 1}) AS a${k}`,
          `arrayMap((p, t) -> if(p = 0, 0, ${first(`a${k}[p]`)}), q${k - 1}, ct0) AS q${k}`,
        )
      d.push(`arrayMap(q -> l${k}[q], q${k}) AS cx${k - 1}`, `arrayMap(q -> ls${k}[q], q${k}) AS ct${k - 1}`)
    }
    pos.push(`cx${k - 1}`)
    secs.push(`ct${k - 1}`)
  }
  // exclusion i blocks step i+1: its events' list, and how many come up to the chain's step-i event
  const exclusions: ChainColumns['exclusions'] = []
  for (const i of exclusionSteps) {
    if (i === 1 || strict) {
      sd.push(exclusionMask(i, `s_em${i}`), `${atStart(shifted(`arrayCumSum(s_em${i})`, i - 1))} AS ec${i}`)
      d.push(exclusionMask(i, `em${i}`))
    } else {
      d.push(
        exclusionMask(i, `em${i}`),
        `arrayFilter((c, m) -> m, arrayCumSum(em${i}), m${i}) AS ea${i}`,
        `arrayMap(q -> ea${i}[q], q${i}) AS ec${i}`,
      )
    }
    d.push(
      ...list(`e${i}`, `em${i}`),
      `arrayMap(c -> le${i}[c + 1], ec${i}) AS ep${i}`,
      `arrayMap(c -> lse${i}[c + 1], ec${i}) AS et${i}`,
    )
    exclusions.push({ step: i, pos: `ep${i}`, secs: `et${i}` })
  }
  return { startDefs: sd, defs: d, pos, secs, exclusions }
}

/** Candidates of an unordered funnel: at each event of a step, per step its latest event up to there
 * within the window (`cols[k]`: positions, 0 = none). */
function unorderedChains(plan: FunnelPlan, L: EventLayout): { defs: string[]; cols: string[] } {
  const n = plan.steps.length
  const W = num(plan.windowSeconds)
  const defs = [`arrayFilter((j, e) -> ${L.low('e')} > 0, idx, evs) AS cands`]
  const cols: string[] = []
  for (let k = 1; k <= n; k++) {
    defs.push(...positionDefs(`u${k}`, (e) => `(${L.low(e)} = ${k}${stepAttribution(plan, L, k - 1, e)})`))
    const last = upTo(`u${k}`, 'j')
    defs.push(
      `arrayMap(j -> if(${last} > 0 AND ${ts('j')} - ${ts(last)} <= ${W}, ${last}, 0), cands) AS u${k}`,
    )
    cols.push(`u${k}`)
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
  const W = num(plan.windowSeconds)
  const L = eventLayout(plan)
  const unordered = plan.order === 'unordered'
  let startDefs: string[] = []
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
    ;({ startDefs, defs } = c)
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
  // uses computes it again; and that read of `tsa` is what keeps `evs` a column 18.16 reads, above).
  // An unordered funnel times each step by its earliest event still inside the window (PostHog's
  // deque fronts), found at `best`'s level: 18.16 inlines aliases into the lambdas that capture them
  // and then loses a subquery's columns that only a lambda reads.
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
  // Reading `times` in the WHERE (true whenever step_reached >= 0) keeps 18.16 reading `evs` at the
  // chain level when the caller reads no timing: everything else there reads it only in lambdas.
  const keep = unordered ? '' : ' AND length(times) > 0'
  const passed = startDefs.map((d) => / AS (\w+)$/.exec(d)![1]!).filter((c) => /^cx\d+$/.test(c))
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

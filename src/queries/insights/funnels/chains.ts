// The candidate chains of a funnel's persons, as ClickHouse SQL definitions over `evs` (layout.ts):
// for ordered and strict funnels one chain per start that can win, for unordered ones one candidate
// per event of a step (sql.ts says what each order means).
import { num } from '../common/index.ts'
import { type EventLayout, stepAttribution, ts } from './layout.ts'
import type { FunnelPlan } from './plan.ts'

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
export interface ChainColumns {
  /** the starts level: per-start arrays, from a person's events (its helpers named `s_…`) */
  startDefs: string[]
  /** the chain level above it: the step lists and what is read through them, and `best` */
  defs: string[]
  pos: string[]
  secs: string[]
  /** the `pos` columns computed at the starts level, which the chain level passes up to the times */
  posFromStarts: string[]
  exclusions: { step: number; pos: string; secs: string }[]
}

// Two levels, written for two traits of 18.16 (kept: the same answers on 26.7, and no bench there
// yet of one level). It expanded every alias where it was used, so a chain of aliases each using
// the one before and the starts grew the statement with the square of the steps ("AST is too big"
// at 20 steps) unless the starts are columns of a level below. And it dropped a subquery's column
// that only a lambda reads, so what a lambda captures (the step lists) is
// computed at the chain level from `evs`, which the level above reads through `tsa`.
export function orderedChains(plan: FunnelPlan, L: EventLayout): ChainColumns {
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
  // kept are those whose next step-1-or-2 event (strict: next event) can be step 2. And the first
  // and the last step-1 events, for a person who gets no further than step 1: PostHog's UDF keeps
  // the first chain to reach a new furthest step (timed from the first step-1 event, which is where
  // correlation's window for drop-offs starts), unless an exclusion removes it, when a later start
  // takes its place (the last one is one that may be free of it).
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
  // s_fleft / s_fseen: step-1 events from here to the end / from the beginning to here, so `= 1` on
  // a step-1 event marks the last / the first
  sd.push(
    'arrayReverse(arrayCumSum(arrayReverse(s_fa))) AS s_fleft',
    'arrayCumSum(s_fa) AS s_fseen',
    'arrayMap((a, b, c, d) -> a AND (b OR c = 1 OR d = 1), s_fa, s_fnext, s_fleft, s_fseen) AS s_fs',
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
  // strict chains are all computed at the starts level, ordered ones from the first step on above it
  return { startDefs: sd, defs: d, pos, secs, posFromStarts: strict ? pos : ['cx0'], exclusions }
}

/** Candidates of an unordered funnel: at each event of a step, per step its latest event up to there
 * within the window (`cols[k]`: positions, 0 = none). */
export function unorderedChains(plan: FunnelPlan, L: EventLayout): { defs: string[]; cols: string[] } {
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

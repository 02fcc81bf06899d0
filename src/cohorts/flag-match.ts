// Cohorts in feature flag conditions ({type: 'cohort', key: 'id', value: <id>, operator: 'in' |
// 'not_in'}), evaluated per request:
// - a cohort of person filters (and other such cohorts) is decided from the person's properties,
//   with the flag operators' rules (src/flags/match.ts), as PostHog's flags service and SDKs'
//   local evaluation decide it;
// - a static cohort, and one with behavioural filters or an operator flags do not have, is decided
//   by its computed membership (cohortpeople / person_static_cohort), looked up for the person.
// These are also the cohorts /api/feature_flag/local_evaluation sends to SDKs (localCohorts): the
// others make an SDK ask the server, which answers from the membership.
import { PROPERTY_OPERATORS } from '../flags/definition.ts'
import type { Cohort, Group, Leaf } from './document.ts'
import { isGroup } from './document.ts'

/** The cohort ids a flag's conditions name. */
export function flagCohortIds(filters: {
  groups: { properties: { type: string; value?: unknown }[] }[]
}): number[] {
  return [
    ...new Set(
      filters.groups.flatMap((g) =>
        g.properties.filter((p) => p.type === 'cohort').map((p) => Number(p.value)),
      ),
    ),
  ]
}

/** A cohort the evaluation cannot decide (unknown, deleted, membership unavailable). */
export class CohortMatchError extends Error {
  override name = 'CohortMatchError'
}

const FLAG_OPERATORS: ReadonlySet<string> = new Set(PROPERTY_OPERATORS)
/** PostHog's cohort-only spellings of list operators, as flags spell them */
const ALIASES: Record<string, string> = { in: 'exact', not_in: 'is_not' }

/** A person filter of a cohort, as a flag property filter (undefined: flags cannot evaluate it). */
export function flagFilter(leaf: Leaf): { key: string; operator: string; value: unknown } | undefined {
  if (leaf.type !== 'person') return undefined
  const op = ALIASES[leaf.operator ?? 'exact'] ?? leaf.operator ?? 'exact'
  return FLAG_OPERATORS.has(op) ? { key: leaf.key, operator: op, value: leaf.value } : undefined
}

/**
 * Whether cohort `id` is decided from person properties alone: dynamic, and every filter of its
 * tree (and of the cohorts it contains) a person filter flags can evaluate.
 */
export function byProperties(
  id: number,
  cohort: (id: number) => Cohort | undefined,
  path = new Set<number>(),
): boolean {
  const c = cohort(id)
  if (!c || c.deleted || c.is_static || !c.filters || path.has(id)) return false
  const inner = new Set([...path, id])
  const ok = (g: Group): boolean =>
    g.values.every((v) => {
      if (isGroup(v)) return ok(v)
      if (v.type === 'person') return flagFilter(v) !== undefined
      if (v.type === 'behavioral') return false
      const nested = cohort(v.value as number)
      // a static cohort inside is looked up (membership), which SDKs cannot do
      return (
        nested !== undefined && !nested.deleted && !nested.is_static && byProperties(nested.id, cohort, inner)
      )
    })
  return ok(c.filters.properties)
}

/** The cohorts of the project a decision about `ids` may need: those ids and what they contain. */
export function closure(ids: number[], cohort: (id: number) => Cohort | undefined): Cohort[] {
  const out = new Map<number, Cohort>()
  const visit = (id: number) => {
    if (out.has(id)) return
    const c = cohort(id)
    if (!c) return
    out.set(id, c)
    if (c.filters)
      for (const leaf of leavesOf(c.filters.properties))
        if (leaf.type !== 'person' && leaf.type !== 'behavioral') visit(leaf.value as number)
  }
  ids.forEach(visit)
  return [...out.values()]
}

function leavesOf(g: Group): Leaf[] {
  return g.values.flatMap((v) => (isGroup(v) ? leavesOf(v) : [v]))
}

/** What deciding cohorts for one person needs. */
export interface CohortContext {
  cohort(id: number): Cohort | undefined
  /** the cohorts decided by membership that the person belongs to; undefined: not looked up */
  members?: ReadonlySet<number>
  /** one person filter against the person's properties (src/flags/match.ts) */
  matchFilter(filter: { key: string; operator: string; value: unknown }): boolean
}

/** Whether the person is in cohort `id`; throws CohortMatchError when that cannot be told. */
export function inCohort(id: number, ctx: CohortContext, path = new Set<number>()): boolean {
  const c = ctx.cohort(id)
  if (!c || c.deleted) throw new CohortMatchError(`cohort ${id} does not exist`)
  if (path.has(id)) throw new CohortMatchError(`cohort ${id} contains itself`)
  if (!byProperties(id, ctx.cohort)) {
    if (!ctx.members) throw new CohortMatchError(`the members of cohort ${id} are unavailable`)
    return ctx.members.has(id)
  }
  const inner = new Set([...path, id])
  const leaf = (l: Leaf): boolean => {
    const matched =
      l.type === 'person' ? ctx.matchFilter(flagFilter(l)!) : inCohort(l.value as number, ctx, inner)
    return l.negation ? !matched : matched
  }
  // every filter is evaluated (no short circuit), as flags do, so a broken regex fails for everyone
  const group = (g: Group): boolean => {
    const results = g.values.map((v) => (isGroup(v) ? group(v) : leaf(v)))
    return g.type === 'AND' ? results.every(Boolean) : results.some(Boolean)
  }
  return group(c.filters!.properties)
}

/**
 * The cohort definitions SDKs evaluate locally (posthog-node's `cohorts`, keyed by id as text):
 * every cohort the flags name, and those they contain, that is decided from person properties.
 * The others are left out, so an SDK that meets one asks the server.
 */
export function localCohorts(
  ids: number[],
  cohort: (id: number) => Cohort | undefined,
): Record<string, Group> {
  const out: Record<string, Group> = {}
  for (const c of closure(ids, cohort)) {
    if (c.filters && byProperties(c.id, cohort)) out[String(c.id)] = c.filters.properties
  }
  return out
}

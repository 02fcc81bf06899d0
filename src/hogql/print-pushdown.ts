import { hasAggregate, isConstant, mentionsLevelNames, sourcesOf } from './analysis.ts'
import type { Expr, Select, Source } from './ir.ts'

// Which WHERE conditions may move below a level's joins or into a source's guarded read. A condition
// moved inside the team guard could run on other projects' rows should the server evaluate it
// ahead of the guard, so only conditions that cannot fail and say nothing about a row but
// whether it matches go there (guardable); the rest may only move below joins that cannot bring
// back rows they removed.

const SAFE_JOIN_FOR_PUSHDOWN = new Set([
  'INNER JOIN',
  'LEFT JOIN',
  'ANY LEFT JOIN',
  'ANY INNER JOIN',
  'CROSS JOIN',
])

const COMPARISONS = new Set(['=', '!=', '<', '<=', '>', '>='])

/**
 * Whether `e`, a condition of the level's WHERE, may go inside the guarded read of `base`: it
 * compares `base`'s own columns with constants (through AND / OR / NOT), which cannot fail or
 * depend on any other column, so evaluating it on rows of other projects (should the server move it
 * ahead of the guard) neither errs nor tells anything. Versioned tables take conditions on their key
 * only (other columns are their newest values, known after the GROUP BY); derived ones on the
 * columns they declare pushable, which they place where those columns are plain reads or constants.
 */
export function guardable(e: Expr, base: Source): boolean {
  if (base.kind !== 'table') return false
  const rel = base.table!.relation
  const column = (x: Expr): boolean =>
    x.k === 'col' &&
    x.src === base &&
    (rel.kind === 'physical' ||
      (rel.kind === 'latest' && rel.key.includes(x.column)) ||
      (rel.kind === 'derived' && (rel.pushable ?? []).includes(x.column)))
  // Constants, Nullable ones included (`timestamp < toDateTime('…')` is a parseDateTime…OrNull):
  // they read no row, so they cannot fail on another project's (compile.test.ts runs them inside).
  // A bare NULL literal never gets here as a comparison side (coerce.ts decides those).
  const constant = (x: Expr): boolean => isConstant(x) && !(x.k === 'const' && x.value === null)
  switch (e.k) {
    case 'and':
    case 'or':
      return e.items.length > 0 && e.items.every((i) => guardable(i, base))
    case 'not':
      return guardable(e.expr, base)
    case 'op':
      // A null-safe comparison of a Nullable column answers a constant where it is NULL.
      if (e.ifNull && e.ifNull.k !== 'const') return false
      if (e.op === 'IN' || e.op === 'NOT IN') {
        return column(e.left) && e.right.k === 'tuple' && e.right.items.every(constant)
      }
      return (
        COMPARISONS.has(e.op) &&
        ((column(e.left) && constant(e.right)) || (constant(e.left) && column(e.right)))
      )
    default:
      return false
  }
}

/**
 * A level's WHERE, split into what goes inside the first source's guarded read and the rest;
 * `implied` are the rest's conditions on the first source alone, whose implied time bounds
 * (timestampBoundsOfDay) go inside too while they themselves stay outside.
 */
export interface GuardSplit {
  inside: Expr[]
  implied: Expr[]
  where?: Expr
}

/**
 * Moves the WHERE conditions guardable() accepts into the first source's guarded read, when no
 * join can bring back rows of the first source that the condition removed.
 */
export function splitForGuard(s: Select): GuardSplit {
  const conjuncts = conjunctsOf(s.where)
  const base = s.sources[0]
  if (!base || !canPushBelowJoins(s)) return { inside: [], implied: [], where: s.where }
  const inside = conjuncts.filter((c) => guardable(c, base))
  const outside = conjuncts.filter((c) => !inside.includes(c))
  const implied = base.kind === 'table' ? outside.filter((c) => pushable(c, base)) : []
  return { inside, implied, where: andOf(outside) }
}

/** The items of a top-level AND (or the condition alone; none for none). */
export function conjunctsOf(e: Expr | undefined): Expr[] {
  return !e ? [] : e.k === 'and' ? e.items : [e]
}

/** Whether every join of the level keeps the first source's rows as a filter below it would. */
export function canPushBelowJoins(s: Select): boolean {
  return s.sources.slice(1).every((x) => SAFE_JOIN_FOR_PUSHDOWN.has(x.joinType!))
}

/** The AND of `items` (the item alone for one, undefined for none). */
export function andOf(items: Expr[]): Expr | undefined {
  if (!items.length) return undefined
  return items.length === 1 ? items[0] : { k: 'and', items, type: 'UInt8' }
}

/** Whether `e` reads the first source alone and no aggregate or level name: it may run below the joins. */
export function pushable(e: Expr, first: Source): boolean {
  if (hasAggregate(e) || mentionsLevelNames(e)) return false
  const srcs = sourcesOf(e)
  return srcs.size > 0 && [...srcs].every((x) => x === first)
}

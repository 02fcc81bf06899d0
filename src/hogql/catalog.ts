import type { Node } from './ast.ts'
import { HogQLError, type Span } from './errors.ts'

// The project's cohorts and actions as the compiler sees them: what `x IN COHORT 5`,
// `IN COHORT 'name'` and `matchesAction('name')` stand for. The compiler never reads a store; the
// caller hands it this catalog (src/queries/catalog.ts builds it from the cohort and action
// definitions), so a compile is a pure function of its text and options.

/** A cohort: its id and name, whether its members are a list (static), and its current version. */
export interface CatalogCohort {
  id: number
  name: string | null
  static: boolean
  /** the calculated version whose members are current (dynamic cohorts); null: never calculated */
  version: number | null
}

/** An action: its id and name, and the HogQL condition on an event that it stands for. */
export interface CatalogAction {
  id: number
  name: string | null
  /** a HogQL boolean expression over the events table (src/actions/expr.ts) */
  expr: string
}

/** Everything `IN COHORT` and `matchesAction` may name; `key` changes whenever any of it does. */
export interface HogQLCatalog {
  key: string
  cohorts: CatalogCohort[]
  actions: CatalogAction[]
}

type Named = { id: number; name: string | null }

// PostHog's lookup (posthog/hogql/functions/cohort.py, action.py): a number is an id, a string a
// name that must be unique; anything else is refused.
function lookup<T extends Named>(what: 'cohort' | 'action', all: T[], arg: Node, s: Span): T {
  const value: unknown = arg.node === 'Constant' ? arg.value : undefined
  const fn = what === 'cohort' ? 'cohort()' : 'matchesAction()'
  if (arg.node !== 'Constant') throw new HogQLError('bad_argument', `${fn} takes only constant arguments`, s)
  if (typeof value === 'number' && Number.isFinite(value)) {
    const found = all.find((x) => x.id === Math.trunc(value))
    if (found) return found
    throw new HogQLError('bad_argument', `Could not find ${what} with ID ${value}`, s)
  }
  if (typeof value === 'string') {
    const named = all.filter((x) => x.name === value)
    if (named.length === 1) return named[0]!
    if (named.length > 1)
      throw new HogQLError('bad_argument', `Found multiple ${what}s with name '${value}'`, s)
    throw new HogQLError(
      'bad_argument',
      `Could not find ${what === 'cohort' ? 'a' : 'an'} ${what} with the name '${value}'`,
      s,
    )
  }
  throw new HogQLError('bad_argument', `${fn} takes exactly one string or integer argument`, s)
}

/**
 * The HogQL subquery of the person ids of the cohort `arg` names: static members, or the current
 * calculated version's (none before the first calculation).
 */
export function cohortSubquery(catalog: HogQLCatalog | undefined, arg: Node, s: Span): string {
  const c = lookup('cohort', catalog?.cohorts ?? [], arg, s)
  if (c.static) return `(SELECT person_id FROM static_cohort_people WHERE cohort_id = ${c.id})`
  if (c.version === null) return '(SELECT person_id FROM cohort_people WHERE 0)'
  return `(SELECT person_id FROM cohort_people WHERE cohort_id = ${c.id} AND version = ${c.version})`
}

/** The HogQL condition of the action `arg` names. */
export function actionExpression(catalog: HogQLCatalog | undefined, arg: Node, s: Span): string {
  return lookup('action', catalog?.actions ?? [], arg, s).expr
}

// The team guard, as SQL. Every read of a physical table is a subquery
//
//   (SELECT <columns> FROM <table> PREWHERE team_id = <team> [WHERE ...] [GROUP BY ...] LIMIT <max>)
//
// - PREWHERE: the server filters the rows it reads by team before it computes anything else on
//   them, so no expression of the query ever sees another project's row (a WHERE guard would sit
//   beside the user's conditions, and ClickHouse evaluates every conjunct on every row it reads);
// - explicit PREWHERE: the server then never moves other conditions into PREWHERE ahead of it
//   (optimize_move_to_prewhere skips queries that have one);
// - LIMIT: a filter is never pushed below a LIMIT (it would change the result), so neither the
//   AST-level predicate push-down of 18.16 nor the query-plan push-down of current releases can
//   carry a user's condition into the guarded read, where index analysis or a merged PREWHERE
//   could evaluate it on other projects' rows.
// Only conditions the printer chose (comparisons of the table's own columns with constants, which
// cannot fail or differ by row content) go inside, after the team condition in the same PREWHERE:
// for partition and index pruning, and so that the other columns are read only for matching rows.
// test/integration/hogql/isolation.test.ts proves it on the real servers, with the settings of
// capabilities.ts GUARD_SETTINGS both on and off.

/** The largest LIMIT: the barrier no filter push-down crosses. */
export const LIMIT_BARRIER = 'LIMIT 18446744073709551615'

/** The guard's condition for `teamId`, as it appears in PREWHERE. */
export function teamCondition(teamId: number): string {
  if (!Number.isSafeInteger(teamId)) throw new Error('teamId must be an integer')
  return `team_id = ${teamId}`
}

/**
 * A guarded read of physical `table` for `teamId`, parenthesised: `columns` is the select list,
 * `tail` the clauses after PREWHERE (WHERE / GROUP BY / HAVING, written by Burrow, never by a user),
 * `also` conditions that join the team condition in PREWHERE (ones that cannot fail on any row).
 */
export function guardedTable(
  table: string,
  teamId: number,
  columns: string,
  tail: string,
  also: string[] = [],
): string {
  const rest = tail ? ` ${tail}` : ''
  const prewhere = [teamCondition(teamId), ...also].join(' AND ')
  return `(SELECT ${columns} FROM ${table} PREWHERE ${prewhere}${rest} ${LIMIT_BARRIER})`
}

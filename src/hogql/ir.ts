import type { Span } from './errors.ts'
import type { FnDef } from './functions.ts'
import type { TableDef } from './schema.ts'

/** A property's path in its JSON: keys, and array indexes counted from 1. */
export type PropertyPath = (string | number)[]

// The resolved query: every name is bound to a source column, a select item, a lambda argument or
// a constant. The printer only walks this tree; it never looks names up.

/** A resolved expression: names bound, functions checked, a best-effort ClickHouse type on each node. */
export type Expr =
  | { k: 'const'; value: string | number | boolean | null; type: string }
  // A column of a source. `tz`: print in the project time zone (DateTime values).
  // `ms`: the epoch-milliseconds twin column, for output with millisecond precision.
  // `property`: a property's value read from a column of its own (materialized), compared as a
  // property read is (coerce.ts).
  | { k: 'col'; src: Source; column: string; type: string; tz?: boolean; property?: boolean }
  // A property read: the value at `path` (keys, and indexes from 1) in the JSON text of a column.
  | { k: 'prop'; src: Source; column: string; path: PropertyPath; type: string }
  | { k: 'item'; item: SelectItem; type: string }
  | { k: 'call'; fn: FnDef; name: string; args: Expr[]; params?: Expr[]; type: string; span: Span }
  // `ifNull`: what a comparison answers where ClickHouse's is NULL (printed `ifNull(op, ifNull)`).
  // `nullIn`: `IN (subquery)` where NULL matches NULL, as under PostHog's `transform_null_in = 1`.
  | { k: 'op'; op: string; left: Expr; right: Expr; type: string; ifNull?: Expr; nullIn?: boolean }
  | { k: 'and' | 'or'; items: Expr[]; type: string }
  | { k: 'not'; expr: Expr; type: string }
  | { k: 'lambda'; args: string[]; body: Expr; type: string }
  | { k: 'ident'; name: string; type: string }
  | { k: 'array' | 'tuple'; items: Expr[]; type: string }
  | { k: 'subquery'; query: Query; type: string }
  // Fixed SQL around printed children: `parts` interleave with `args` (parts.length = args.length + 1).
  | { k: 'template'; parts: string[]; args: Expr[]; type: string; ifNull?: Expr }
  // A window function: `name(params)(args) OVER (spec)` or `OVER <named window>`.
  | { k: 'window'; name: string; args: Expr[]; params?: Expr[]; over: WindowSpec | string; type: string }

/** One edge of a window frame: CURRENT ROW, or n (undefined: UNBOUNDED) PRECEDING / FOLLOWING. */
export interface FrameBound {
  kind: 'CURRENT ROW' | 'PRECEDING' | 'FOLLOWING'
  n?: number
}

/** What `OVER (...)` says: partitions, their order and the frame. */
export interface WindowSpec {
  partitionBy: Expr[]
  orderBy: OrderItem[]
  frame?: { method: 'ROWS' | 'RANGE'; start: FrameBound; end?: FrameBound }
}

/** One relation of a FROM clause: a virtual table, a subquery or a lazy join hanging off another. */
export interface Source {
  id: number
  // The name the query uses to qualify fields (alias, or the table name when unaliased).
  name: string
  kind: 'table' | 'query'
  table?: TableDef
  query?: Query
  // For sources after the first: how they join.
  joinType?: string
  on?: Expr
  // Lazy joins hang off a parent source.
  parent?: Source
  lazyField?: string
  // Arguments of a table function (numbers), printed into its derived relation's SQL.
  args?: Expr[]
  // SAMPLE on the events table: the range of cityHash64(distinct_id) it reads (resolve-sample.ts).
  sample?: SampleRange
  // Columns the query reads from this source (physical columns for tables, output names for queries).
  used: Set<string>
  // Properties of a versioned table read as columns of their own (name → where the value is): the
  // newest version's value of one path, not the newest JSON of every property (print-relations.ts).
  propColumns?: Map<string, { column: string; path: PropertyPath }>
  // Set by the printer.
  printAlias?: string
  span: Span
}

/** Rows whose sampling key lies in [lower, upper); no upper bound when absent. */
export interface SampleRange {
  lower: bigint
  upper?: bigint
}

/** One output column of a SELECT level. */
export interface SelectItem {
  name: string
  expr: Expr
  // Items the user did not ask for: millisecond twins of timestamps passed up from subqueries.
  hidden?: boolean
  printAlias?: string
}

/** One ORDER BY key. */
export interface OrderItem {
  expr: Expr
  desc: boolean
}

/** One SELECT level, with its sources, clauses and whether it aggregates. */
export interface Select {
  k: 'select'
  sources: Source[]
  arrayJoin?: { left: boolean; items: { expr: Expr; alias: string }[] }
  items: SelectItem[]
  distinct: boolean
  where?: Expr
  groupBy?: Expr[]
  having?: Expr
  orderBy?: OrderItem[]
  limit?: number
  /** `LIMIT <expression>` the server computes (servers that take it), capped at `limit`. */
  limitExpr?: Expr
  /** `LIMIT n WITH TIES` (servers that have it) */
  withTies?: boolean
  offset?: number
  /** `OFFSET <expression>` the server computes (servers that take it). */
  offsetExpr?: Expr
  limitBy?: { n: number; offset?: number; exprs: Expr[] }
  /** `WINDOW name AS (...)` definitions, for servers with window functions. */
  windows?: Record<string, WindowSpec>
  aggregating: boolean
}

/** A UNION of SELECTs (or of other unions). */
export interface SetQuery {
  k: 'set'
  // UNION ALL of the branches; `distinct` removes duplicates afterwards (UNION DISTINCT).
  queries: Query[]
  distinct: boolean
  // INTERSECT / EXCEPT [DISTINCT] of two queries instead of a UNION (servers from 21.8).
  op?: string
}

/** A resolved statement or subquery. */
export type Query = Select | SetQuery

/** The first SELECT of a query: the one whose items name the query's columns. */
export function firstSelect(q: Query): Select {
  return q.k === 'select' ? q : firstSelect(q.queries[0]!)
}

/** The output columns of a query (a union's are its first branch's), hidden twins included. */
export function outputItems(q: Query): SelectItem[] {
  return firstSelect(q).items
}

/** Whether `src` is a lazy join below `ancestor` (directly or through other lazy joins). */
export function descendsFrom(src: Source, ancestor: Source): boolean {
  for (let p = src.parent; p; p = p.parent) if (p === ancestor) return true
  return false
}

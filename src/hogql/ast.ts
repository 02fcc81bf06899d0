// The JSON AST produced by @posthog/hogql-parser. Only the fields Burrow reads are typed; the parser
// emits more (and new node kinds appear over time), so unknown nodes are refused by the resolver.
/** A position in the query text. */
export interface Pos {
  line: number
  column: number
  offset: number
}

/** Any parser node: its kind, its span and the kind-specific fields. */
export interface Node {
  node: string
  start?: Pos
  end?: Pos
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the parser's JSON is loosely shaped by design
  [key: string]: any
}

/** A (possibly qualified) name: `a`, `e.properties.x`. */
export interface FieldNode extends Node {
  node: 'Field'
  chain: (string | number)[]
}

/** One table of a FROM clause and the join to the next. */
export interface JoinExprNode extends Node {
  node: 'JoinExpr'
  table: Node | null
  table_args?: Node[] | null
  alias: string | null
  join_type?: string | null
  constraint?: { node: 'JoinConstraint'; constraint_type: 'ON' | 'USING'; expr: Node } | null
  next_join: JoinExprNode | null
  sample: Node | null
  table_final: boolean | null
  column_aliases?: string[] | null
}

/** A `WITH name AS (...)` (subquery) or `WITH expr AS name` (column) definition. */
export interface CTENode extends Node {
  node: 'CTE'
  name: string
  expr: Node
  cte_type: 'subquery' | 'column'
}

/** One SELECT with its clauses. */
export interface SelectQueryNode extends Node {
  node: 'SelectQuery'
  ctes: CTENode[] | null
  select: Node[]
  distinct: boolean | null
  select_from: JoinExprNode | null
  array_join_op?: string | null
  array_join_list?: Node[] | null
  where: Node | null
  prewhere: Node | null
  group_by: Node[] | null
  having: Node | null
  qualify: Node | null
  order_by?: Node[] | null
  limit?: Node | null
  offset?: Node | null
  limit_by?: { n: Node; exprs: Node[]; offset_value: Node | null } | null
  limit_with_ties?: boolean | null
  window_exprs?: Record<string, Node> | null
}

/** SELECTs joined by set operators (UNION ALL, ...). */
export interface SelectSetQueryNode extends Node {
  node: 'SelectSetQuery'
  initial_select_query: SelectQueryNode | SelectSetQueryNode
  subsequent_select_queries: { node: 'SelectSetNode'; set_operator: string; select_query: Node }[]
}

/** A statement or subquery as the parser gives it. */
export type QueryNode = SelectQueryNode | SelectSetQueryNode

/** The offsets of `n` in the query text, for error messages. */
export function span(n: Node | null | undefined): { start?: number; end?: number } {
  if (!n) return {}
  return { start: n.start?.offset, end: n.end?.offset }
}

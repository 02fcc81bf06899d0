import { type FieldNode, type JoinExprNode, type Node, span } from './ast.ts'
import { isConstant } from './analysis.ts'
import { HogQLError, type Span } from './errors.ts'
import type { Expr, Query, Source } from './ir.ts'
import type { Resolution, Scope } from './resolve-context.ts'
import { using } from './resolve-fields.ts'
import { sampleRange } from './resolve-sample.ts'
import { type TableDef, userTable } from './schema.ts'

// FROM and JOIN: the sources of a SELECT level and the joins HogQL allows (the printer nests longer
// chains to one JOIN per level, print-relations.ts).

const JOIN_TYPES: Record<string, string> = {
  JOIN: 'INNER JOIN',
  'INNER JOIN': 'INNER JOIN',
  'ALL INNER JOIN': 'INNER JOIN',
  'INNER ALL JOIN': 'INNER JOIN',
  'LEFT JOIN': 'LEFT JOIN',
  'LEFT ALL JOIN': 'LEFT JOIN',
  'ALL LEFT JOIN': 'LEFT JOIN',
  'LEFT ANY JOIN': 'ANY LEFT JOIN',
  'ANY LEFT JOIN': 'ANY LEFT JOIN',
  'INNER ANY JOIN': 'ANY INNER JOIN',
  'ANY INNER JOIN': 'ANY INNER JOIN',
  'ANY JOIN': 'ANY INNER JOIN',
  'RIGHT JOIN': 'RIGHT JOIN',
  'RIGHT ALL JOIN': 'RIGHT JOIN',
  'ALL RIGHT JOIN': 'RIGHT JOIN',
  'RIGHT ANY JOIN': 'ANY RIGHT JOIN',
  'ANY RIGHT JOIN': 'ANY RIGHT JOIN',
  'FULL JOIN': 'FULL JOIN',
  'FULL ALL JOIN': 'FULL JOIN',
  'ALL FULL JOIN': 'FULL JOIN',
  'CROSS JOIN': 'CROSS JOIN',
}

/** Adds the sources of `FROM first JOIN ...` to the scope's SELECT, with their join conditions. */
export function resolveJoins(r: Resolution, first: JoinExprNode, scope: Scope): void {
  let join: JoinExprNode | null = first
  let index = 0
  while (join) {
    const source = sourceOf(r, join, scope)
    if (index > 0) source.joinType = normalizeJoinType(join.join_type ?? 'JOIN', join)
    if (scope.select.sources.some((s) => s.name && s.name === source.name)) {
      throw new HogQLError('syntax_error', `The table alias '${source.name}' is used twice`, span(join))
    }
    scope.select.sources.push(source)
    if (index > 0) {
      const c = join.constraint
      if (source.joinType === 'CROSS JOIN') {
        if (c) throw new HogQLError('syntax_error', 'CROSS JOIN takes no condition', span(join))
      } else {
        if (!c) throw new HogQLError('syntax_error', 'JOIN needs an ON or USING condition', span(join))
        const on = c.constraint_type === 'USING' ? using(r, c.expr, source, scope) : r.expr(c.expr, scope)
        source.on = joinKeys(on)
      }
    }
    join = join.next_join
    index++
  }
}

function sourceOf(r: Resolution, join: JoinExprNode, scope: Scope): Source {
  const source = unsampledSourceOf(r, join, scope)
  if (join.sample) {
    const range = sampleRange(join.sample, source.kind === 'table' ? source.table : undefined)
    if (range) source.sample = range
  }
  return source
}

function unsampledSourceOf(r: Resolution, join: JoinExprNode, scope: Scope): Source {
  const s = span(join.table ?? join)
  if (join.column_aliases?.length) {
    throw new HogQLError('not_supported', 'Column aliases on tables are not supported', span(join))
  }
  const table = join.table
  if (!table) throw new HogQLError('syntax_error', 'Missing table', s)
  if (table.node === 'Field') {
    const chain = (table as FieldNode).chain.map(String)
    const name = chain.join('.')
    if (join.table_args) {
      if (name === 'numbers') return numbersSource(r, join, scope, s)
      throw new HogQLError('table_function_not_allowed', `Table functions are not allowed: ${name}()`, s)
    }
    if (chain.length === 1) {
      const cte = scope.ctes.get(name)
      if (cte && cte.node.cte_type !== 'column') {
        const query = r.query(cte.node.expr, cte.scope)
        return querySource(r, query, join.alias ?? name, s)
      }
      const def = userTable(name)
      if (def)
        return {
          id: r.newSourceId(),
          name: join.alias ?? name,
          kind: 'table',
          table: def,
          used: new Set(),
          span: s,
        }
    }
    throw new HogQLError('unknown_table', `Unknown table '${name}'`, s)
  }
  if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
    const query = r.query(table, scope.ctes)
    return querySource(r, query, join.alias ?? '', s)
  }
  throw new HogQLError('not_supported', `Unsupported table expression ${table.node}`, s)
}

// At most this many rows from numbers(): it reads no project data, but should not be a way to
// keep the server busy.
const MAX_NUMBERS = 10_000_000

// numbers(n) / numbers(offset, n), the table function PostHog allows: a derived relation of
// constants (no project data, so no guard to apply). Whole-number literals are checked here;
// other constant expressions (`numbers(2 + 2)`, `numbers(dateDiff(...))`) are computed by the
// server, which refuses a count over the bound (throwIf: a 400 for the value, never more rows).
function numbersSource(r: Resolution, join: JoinExprNode, scope: Scope, s: Span): Source {
  const args = (join.table_args as Node[]).map((a) => r.expr(a, scope))
  if (!args.length || args.length > 2) {
    throw new HogQLError(
      'bad_argument',
      'numbers() takes one or two arguments: numbers(n) or numbers(offset, n)',
      s,
    )
  }
  if (!args.every(isConstant)) {
    throw new HogQLError('bad_argument', 'numbers() takes constant arguments (no columns or subqueries)', s)
  }
  const literal = (a: Expr) =>
    a.k === 'const' && typeof a.value === 'number' && Number.isInteger(a.value) ? a.value : undefined
  const ints = args.map(literal)
  let sql: (teamId: number, printed: string[]) => string
  if (ints.every((n) => n !== undefined)) {
    if (ints.some((n) => n < 0)) {
      throw new HogQLError('bad_argument', 'numbers() takes non-negative whole numbers', s)
    }
    const [offset, count] = ints.length === 2 ? ints : [0, ints[0]!]
    if (count! > MAX_NUMBERS) {
      throw new HogQLError('bad_argument', `numbers() returns at most ${MAX_NUMBERS} rows`, s)
    }
    // the offset is rows system.numbers reads and skips: bounded like the count (a computed offset
    // below is added to each number instead, which costs nothing)
    if (offset! > MAX_NUMBERS) {
      throw new HogQLError('bad_argument', `numbers() takes an offset of at most ${MAX_NUMBERS}`, s)
    }
    sql = () => `SELECT number FROM system.numbers LIMIT ${count} OFFSET ${offset}`
  } else {
    // numbers() takes an unsigned count: toUInt64 makes a negative one huge, which the throwIf
    // refuses like any count past the maximum (ClickHouse's own error would quote the value).
    sql = (_team, printed) => {
      const [offset, count] =
        printed.length === 2 ? printed.map((p) => `toUInt64(${p})`) : ['0', `toUInt64(${printed[0]})`]
      return (
        `SELECT n AS number FROM (SELECT plus(number, ${offset}) AS n FROM numbers(least(${count}, ${MAX_NUMBERS}))` +
        ` WHERE throwIf(${count} > ${MAX_NUMBERS}) = 0)`
      )
    }
  }
  const table: TableDef = {
    name: 'numbers',
    relation: { kind: 'derived', sql },
    fields: { number: { kind: 'column', column: 'number', type: 'UInt64' } },
    asterisk: ['number'],
  }
  return {
    id: r.newSourceId(),
    name: join.alias ?? 'numbers',
    kind: 'table',
    table,
    args,
    used: new Set(),
    span: s,
  }
}

function querySource(r: Resolution, query: Query, name: string, s: Span): Source {
  return { id: r.newSourceId(), name, kind: 'query', query, used: new Set(), span: s }
}

// Join keys compare as ClickHouse's join does (a NULL key matches nothing): the null-safe wrapping
// of `=` would hide the key equality from the server's join analysis.
function joinKeys(on: Expr): Expr {
  if (on.k === 'and') return { ...on, items: on.items.map(joinKeys) }
  if (on.k === 'op' && on.op === '=' && on.ifNull) return { ...on, ifNull: undefined }
  return on
}

function normalizeJoinType(raw: string, node: Node): string {
  const t = raw.toUpperCase().replace(/\s+/g, ' ').replace('OUTER ', '').trim()
  // RIGHT and FULL joins are safe under the guard: every table is read through its own guarded
  // subquery, and no condition is pushed below a join that keeps the other side's rows
  // (print-pushdown.ts canPushBelowJoins).
  const out = JOIN_TYPES[t]
  if (!out) throw new HogQLError('not_supported', `${raw} is not supported`, span(node))
  return out
}

import { sourcesOf } from './analysis.ts'
import { descendsFrom, type Expr, type Select, type SelectItem, type Source } from './ir.ts'
import type { Resolution } from './resolve-context.ts'
import { ExprVisitor } from './visitor.ts'

// `FROM persons JOIN events ON persons.id = events.person_id`: the joined table's person_id needs
// a lazy join of that table itself (its person override), which the one-join-per-level printer
// could only attach after the JOIN that needs it. Such a table and its lazy joins are wrapped into
// one subquery here: (events LEFT JOIN overrides) is joined as a whole, and every read of the
// table or its lazy joins in this SELECT becomes a column of that subquery.

/** Wraps each joined table whose ON reads its own lazy joins, with those joins, into a subquery. */
export function bundleJoinedLazies(r: Resolution, select: Select): void {
  for (let k = 1; k < select.sources.length; k++) {
    const table = select.sources[k]!
    if (table.parent || !table.on || table.kind !== 'table') continue
    const lazies = select.sources.filter((s) => descendsFrom(s, table))
    const onReads = sourcesOf(table.on)
    if (!lazies.some((l) => onReads.has(l))) continue
    const { source, names, items } = bundleOf(r, table, lazies)
    joinKeysInside(source, new Set([table, ...lazies]))
    const rest = select.sources.filter((s) => s !== table && !lazies.includes(s))
    rest.splice(k, 0, source)
    select.sources.splice(0, select.sources.length, ...rest)
    new Rewrite(names, items, source).visitSelect(select)
  }
}

function bundleOf(r: Resolution, table: Source, lazies: Source[]) {
  const names = new Map<Source, Map<string, string>>()
  const items = new Map<string, SelectItem>()
  for (const src of [table, ...lazies]) {
    const m = new Map<string, string>()
    for (const column of [...src.used].sort()) {
      const name = `_s${src.id}_${column}`
      m.set(column, name)
      items.set(name, { name, expr: { k: 'col', src, column, type: 'Unknown' } })
    }
    names.set(src, m)
  }
  const source: Source = {
    id: r.newSourceId(),
    name: table.name,
    kind: 'query',
    query: {
      k: 'select',
      sources: [table, ...lazies],
      items: [...items.values()],
      distinct: false,
      aggregating: false,
    },
    joinType: table.joinType,
    on: table.on,
    used: new Set(items.keys()),
    span: table.span,
  }
  // Inside the subquery the table is its FROM.
  table.joinType = undefined
  table.on = undefined
  return { source, names, items }
}

// A join key computed from the wrapped sources alone (person_id through its override) becomes a
// column of the subquery: the JOIN then compares plain columns, as the servers' hash joins prefer.
function joinKeysInside(source: Source, wrapped: Set<Source>): void {
  const on = source.on!
  const conds = on.k === 'and' ? on.items : [on]
  const inner = source.query as Select
  conds.forEach((c, i) => {
    if (c.k !== 'op' || c.op !== '=') return
    for (const side of ['left', 'right'] as const) {
      const e = c[side]
      const reads = sourcesOf(e)
      if (e.k === 'col' || !reads.size || ![...reads].every((s) => wrapped.has(s))) continue
      const name = `_key${i}_${side}`
      inner.items.push({ name, expr: e })
      source.used.add(name)
      c[side] = { k: 'col', src: source, column: name, type: e.type }
    }
  })
}

// Reads of the wrapped sources in the outer SELECT become reads of the subquery's columns (whose
// types they lend to the subquery's items).
class Rewrite extends ExprVisitor {
  constructor(
    private readonly names: Map<Source, Map<string, string>>,
    private readonly items: Map<string, SelectItem>,
    private readonly to: Source,
  ) {
    super()
  }
  private column(src: Source, column: string, type: string): string {
    const name = this.names.get(src)!.get(column)!
    this.items.get(name)!.expr.type = type
    return name
  }
  protected override visitCol(e: Extract<Expr, { k: 'col' }>): void {
    if (!this.names.has(e.src)) return
    const src = e.src
    e.column = this.column(src, e.column, e.type)
    e.src = this.to
  }
  protected override visitProp(e: Extract<Expr, { k: 'prop' }>): void {
    if (!this.names.has(e.src)) return
    const src = e.src
    e.column = this.column(src, e.column, 'String')
    e.src = this.to
  }
}

import type { FieldNode, Node } from './ast.ts'
import { coerceCompare } from './coerce.ts'
import { HogQLError, type Span } from './errors.ts'
import { isDateTimeType, withTimeZone } from './functions.ts'
import {
  descendsFrom,
  type Expr,
  outputItems,
  type PropertyPath,
  type SelectItem,
  type Source,
} from './ir.ts'
import { parseExpr } from './parse.ts'
import type { Resolution, Scope } from './resolve-context.ts'
import { type FieldDef, lookupField, TABLES } from './schema.ts'
import { span } from './ast.ts'

// Field binding: which source a name belongs to (a lambda argument, an ARRAY JOIN alias, a select
// alias, a column CTE, a table alias or exactly one table that has the field), and what a field
// of the virtual schema reads physically (a column, a property lookup, an expression over other
// fields, or a lazy join to another table).

// Schema expressions are constant text: parse each once per process.
const schemaExprs = new Map<string, Node>()

/** Binds `chain` (plus trailing accessors `path`) in `scope`; undefined when no source has it. */
export function tryField(
  r: Resolution,
  chain: string[],
  scope: Scope,
  s: Span,
  path: (string | number)[],
): Expr | undefined {
  const whole = [...chain, ...path.map(String)]
  const head = chain[0]!
  const plain = (e: Expr): Expr | undefined => (path.length ? undefined : e)

  // a lambda's own arguments first, also inside a schema expression (whose lambdas are its own)
  for (const frame of scope.lambdas) {
    if (frame.includes(head))
      return chain.length === 1 ? plain({ k: 'ident', name: head, type: 'Unknown' }) : undefined
  }
  if (scope.internal) return inSource(r, scope.internal, whole, scope, s, true, path)
  if (chain.length === 1) {
    if (scope.arrayJoinAliases.has(head)) return plain({ k: 'ident', name: head, type: 'Unknown' })
    const slot = scope.aliases.get(head)
    if (slot?.inline && slot.state !== 'resolving') {
      slot.state = 'resolving'
      try {
        return plain(r.expr(slot.node, scope))
      } finally {
        slot.state = 'pending'
      }
    }
    if (slot && !slot.inline && slot.state !== 'resolving') {
      r.resolveAlias(slot, scope)
      return plain({ k: 'item', item: slot.item, type: slot.item.expr.type })
    }
    const cte = scope.ctes.get(head)
    if (cte && cte.node.cte_type === 'column' && !scope.cteColumnsResolving.has(head)) {
      scope.cteColumnsResolving.add(head)
      try {
        return plain(r.expr(cte.node.expr, scope))
      } finally {
        scope.cteColumnsResolving.delete(head)
      }
    }
  }
  const sources = scope.select.sources.filter((src) => !src.parent)
  if (chain.length > 1) {
    const named = sources.find((src) => src.name === head)
    if (named) return inSource(r, named, whole.slice(1), scope, s, false, path)
  }
  const owners = sources.filter((src) => hasField(src, head))
  if (owners.length > 1) {
    throw new HogQLError('ambiguous_field', `Field '${head}' exists in more than one table; qualify it`, s)
  }
  if (owners.length === 1) return inSource(r, owners[0]!, whole, scope, s, false, path)
  return undefined
}

/** Whether `src` exposes a field called `name` to user queries. */
export function hasField(src: Source, name: string): boolean {
  if (src.kind === 'query') return outputItems(src.query!).some((i) => i.name === name && !i.hidden)
  return !!lookupField(src.table!, name, false)
}

/** The field `chain` of one source; `internal` also reaches the schema's hidden fields. */
export function inSource(
  r: Resolution,
  src: Source,
  chain: string[],
  scope: Scope,
  s: Span,
  internal: boolean,
  path: (string | number)[] = [],
): Expr {
  const name = chain[0]!
  if (src.kind === 'query') {
    const item = outputItems(src.query!).find((i) => i.name === name && !i.hidden)
    if (!item)
      throw new HogQLError('unknown_field', `Unknown field '${name}' on '${src.name || 'subquery'}'`, s)
    if (chain.length > 1) {
      throw new HogQLError(
        'not_supported',
        `Cannot read '${chain.slice(1).join('.')}' from the subquery column '${name}'; select it inside the subquery`,
        s,
      )
    }
    src.used.add(name)
    return { k: 'col', src, column: name, type: item.expr.type }
  }
  const table = src.table!
  const def: FieldDef | undefined = lookupField(table, name, internal)
  if (!def) throw new HogQLError('unknown_field', `Unknown field '${name}' on '${src.name || table.name}'`, s)
  return readField(r, src, name, def, chain.slice(1), scope, s, internal, path)
}

/** What field `name` (schema definition `def`) of table source `src` reads, with `rest` after it. */
function readField(
  r: Resolution,
  src: Source,
  name: string,
  def: FieldDef,
  rest: string[],
  scope: Scope,
  s: Span,
  internal: boolean,
  path: (string | number)[],
): Expr {
  const table = src.table!
  switch (def.kind) {
    case 'column': {
      if (rest.length) throw new HogQLError('unknown_field', `'${name}' has no field '${rest.join('.')}'`, s)
      src.used.add(def.column)
      const zoned = isDateTimeType(def.type)
      const type = zoned ? withTimeZone(def.type, r.opts.tz) : def.type
      return { k: 'col', src, column: def.column, type, tz: zoned }
    }
    case 'properties': {
      if (!rest.length) {
        src.used.add(def.raw)
        return { k: 'col', src, column: def.raw, type: 'String' }
      }
      const segments = [...rest.slice(0, rest.length - path.length), ...path]
      const key = segments[0]
      if (typeof key !== 'string') {
        throw new HogQLError(
          'not_supported',
          'A property path starts with the property name, e.g. properties.list.1',
          s,
        )
      }
      if (segments.includes(0)) {
        throw new HogQLError(
          'bad_argument',
          'SQL indexes start from one, not from zero, e.g. properties.list.1',
          s,
        )
      }
      // `burrow materialize` columns hold events' own top-level properties
      const own = table.name === 'events' && def.raw === 'properties' && segments.length === 1
      const materialized = own ? r.opts.materialized?.get(key) : undefined
      if (materialized) {
        src.used.add(materialized)
        return { k: 'col', src, column: materialized, type: 'Nullable(String)', property: true }
      }
      if (own) r.eventProperties.add(key)
      if (table.relation.kind === 'latest') {
        const column = latestPropColumn(src, def.raw, segments)
        return { k: 'col', src, column, type: 'Nullable(String)', property: true }
      }
      src.used.add(def.raw)
      return { k: 'prop', src, column: def.raw, path: segments, type: 'Nullable(String)' }
    }
    case 'expression': {
      if (rest.length) throw new HogQLError('unknown_field', `'${name}' has no field '${rest.join('.')}'`, s)
      const e = schemaExpr(
        r,
        r.opts.personOverrides === false ? (def.plain ?? def.expr) : def.expr,
        src,
        scope,
      )
      return { ...e, type: def.type } as Expr
    }
    case 'join': {
      if (!rest.length) throw new HogQLError('unknown_field', `'${name}' is a table; select a field of it`, s)
      // person.id is the join key itself: no join needed.
      if (rest.length === 1 && rest[0] === def.to) return schemaExpr(r, def.from, src, scope)
      const lazy = lazySource(r, src, name, def, scope, s)
      return inSource(r, lazy, rest, scope, s, internal, path)
    }
    case 'namespace': {
      const inner = rest[0]
      const sub = inner !== undefined && Object.hasOwn(def.fields, inner) ? def.fields[inner] : undefined
      if (!sub) {
        throw new HogQLError(
          'unknown_field',
          inner === undefined
            ? `'${name}' groups fields; select one of them`
            : `Unknown field '${name}.${inner}'`,
          s,
        )
      }
      return readField(r, src, inner!, sub, rest.slice(1), scope, s, internal, path)
    }
  }
}

/** A schema expression (HogQL text over the table's own fields) resolved on `src`. */
function schemaExpr(r: Resolution, text: string, src: Source, scope: Scope): Expr {
  let node = schemaExprs.get(text)
  if (!node) {
    node = parseExpr(r.parser, text)
    schemaExprs.set(text, node)
  }
  return r.expr(node, { ...scope, internal: src, lambdas: [] })
}

// A lazy join (person.x on events): added to the sources once, right after its parent and the
// parent's other lazy joins, as a LEFT JOIN on the schema's key.
function lazySource(
  r: Resolution,
  parent: Source,
  field: string,
  def: Extract<FieldDef, { kind: 'join' }>,
  scope: Scope,
  s: Span,
): Source {
  const sources = scope.select.sources
  const existing = sources.find((x) => x.parent === parent && x.lazyField === field)
  if (existing) return existing
  const table = TABLES[def.table]
  if (!table) throw new Error(`schema: unknown join table ${def.table}`)
  const lazy: Source = {
    id: r.newSourceId(),
    name: '',
    kind: 'table',
    table,
    joinType: 'LEFT JOIN',
    parent,
    lazyField: field,
    used: new Set(),
    span: s,
  }
  // Resolve the left side first: it may need lazy joins of its own, which must come earlier.
  const from = schemaExpr(r, def.from, parent, scope)
  const to = inSource(r, lazy, [def.to], scope, s, true)
  lazy.on = { k: 'op', op: '=', left: from, right: to, type: 'UInt8' }
  let at = sources.indexOf(parent)
  for (let i = at + 1; i < sources.length; i++) {
    if (descendsFrom(sources[i]!, parent)) at = i
  }
  sources.splice(at + 1, 0, lazy)
  return lazy
}

/** `SELECT *` / `SELECT t.*`: every field the sources show to users, in schema order. */
export function asterisk(r: Resolution, qualifier: string[], scope: Scope, s: Span): SelectItem[] {
  let sources = scope.select.sources.filter((src) => !src.parent)
  if (qualifier.length) {
    sources = sources.filter((src) => src.name === qualifier.join('.'))
    if (!sources.length) throw new HogQLError('unknown_table', `Unknown table '${qualifier.join('.')}'`, s)
  }
  if (!scope.select.sources.length) throw new HogQLError('syntax_error', 'SELECT * needs a FROM clause', s)
  // As PostHog: with several tables, * would mix (and repeat) their names; say which table's.
  if (!qualifier.length && sources.length > 1) {
    throw new HogQLError(
      'not_supported',
      'SELECT * is not supported with more than one table; name the columns or use t.* for each table',
      s,
    )
  }
  const items: SelectItem[] = []
  for (const src of sources) {
    // A subquery's repeated unaliased name (`SELECT timestamp, timestamp`) is one column to `*`, as
    // in PostHog, where a SELECT's columns are keyed by name.
    const names =
      src.kind === 'table'
        ? src.table!.asterisk
        : [
            ...new Set(
              outputItems(src.query!)
                .filter((i) => !i.hidden)
                .map((i) => i.name),
            ),
          ]
    for (const name of names) items.push({ name, expr: inSource(r, src, [name], scope, s, false) })
  }
  return items
}

/** `JOIN t USING (a, b)` as `left.a = t.a AND left.b = t.b`. */
export function using(r: Resolution, expr: Node, right: Source, scope: Scope): Expr {
  const names = expr.node === 'Tuple' ? (expr.exprs as Node[]) : [expr]
  const parts = names.map((n) => {
    if (n.node !== 'Field' || (n as FieldNode).chain.length !== 1) {
      throw new HogQLError('syntax_error', 'USING takes column names', span(n))
    }
    const name = String((n as FieldNode).chain[0])
    const left = scope.select.sources.filter((src) => src !== right && hasField(src, name))
    if (left.length !== 1) {
      throw new HogQLError(
        left.length ? 'ambiguous_field' : 'unknown_field',
        `USING column '${name}' must exist in exactly one table on the left`,
        span(n),
      )
    }
    const l = inSource(r, left[0]!, [name], scope, span(n), false)
    const rr = inSource(r, right, [name], scope, span(n), false)
    return coerceCompare('=', l, rr, r.opts.tz)
  })
  return parts.length === 1 ? parts[0]! : { k: 'and', items: parts, type: 'UInt8' }
}

// A property of a versioned table (persons, groups) as a column of its source, one per path: the
// relation prints the newest version's value at that path alone, not the newest JSON of every key.
function latestPropColumn(src: Source, column: string, path: PropertyPath): string {
  src.propColumns ??= new Map()
  const same = (p: PropertyPath) => p.length === path.length && p.every((x, i) => x === path[i])
  for (const [name, p] of src.propColumns) if (p.column === column && same(p.path)) return name
  const name = `_p${src.propColumns.size}_${column}`
  src.propColumns.set(name, { column, path })
  src.used.add(name)
  return name
}

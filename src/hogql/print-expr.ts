import { HogQLError } from './errors.ts'
import { escapeIdentifier, escapeNumber, escapeString } from './escape.ts'
import {
  type Expr,
  type FrameBound,
  outputItems,
  type PropertyPath,
  type Query,
  type WindowSpec,
} from './ir.ts'
import { alwaysNull, columnAlwaysNull } from './nulls.ts'
import type { Level, PrintContext } from './print-context.ts'
import { quoteIdentifier } from './escape.ts'

// Expressions as ClickHouse SQL. Every operator is parenthesised, so precedence never depends on
// the server's grammar (which changed across releases, e.g. NOT in 26.4).

/** Prints `e` at `level`: columns through the level's references, literals escaped. */
export function printExpr(p: PrintContext, e: Expr, level: Level): string {
  const pre = level.pre?.get(e)
  if (pre) return pre
  if ((e.k === 'op' || e.k === 'template') && e.ifNull) {
    return `ifNull(${printBare(p, e, level)}, ${p.expr(e.ifNull, level)})`
  }
  return printBare(p, e, level)
}

// `e` itself, without the null-safe wrapping of a comparison.
function printBare(p: PrintContext, e: Expr, level: Level): string {
  switch (e.k) {
    case 'const':
      return literal(e.value)
    case 'col': {
      const ref = level.ref(e.src, e.column)
      return e.tz && p.opts.tz !== 'UTC' ? `toTimeZone(${ref}, ${escapeString(p.opts.tz)})` : ref
    }
    case 'prop':
      return propertyValue(level.ref(e.src, e.column), e.path)
    case 'item':
      if (!e.item.printAlias) return p.expr(e.item.expr, level)
      return quoteIdentifier(e.item.printAlias)
    case 'call': {
      const args = e.args.map((a) => p.expr(a, level))
      const params = e.params?.map((x) => p.expr(x, level)) ?? []
      const print = e.fn.print
      if (typeof print === 'string') {
        return `${print}${e.params ? `(${params.join(', ')})` : ''}(${args.join(', ')})`
      }
      try {
        return print(args, params, { tz: p.opts.tz, argTypes: e.args.map((a) => a.type) })
      } catch (err) {
        throw new HogQLError('bad_argument', `${e.name}: ${(err as Error).message}`, e.span)
      }
    }
    case 'op': {
      const left = p.expr(e.left, level)
      if (e.op === 'IN' || e.op === 'NOT IN') {
        if (e.right.k === 'tuple') {
          if (!e.right.items.length) return e.op === 'IN' ? '0' : '1'
          return `(${left} ${e.op} (${e.right.items.map((i) => p.expr(i, level)).join(', ')}))`
        }
        if (e.right.k === 'subquery' && e.nullIn) return nullInSubquery(p, e, e.right.query, level)
        if (e.right.k === 'subquery') return `(${left} ${e.op} (${p.query(e.right.query)}))`
        return `(${left} ${e.op} ${p.expr(e.right, level)})`
      }
      return `(${left} ${e.op} ${p.expr(e.right, level)})`
    }
    case 'and':
    case 'or':
      if (!e.items.length) return e.k === 'and' ? '1' : '0'
      return `(${e.items.map((i) => p.expr(i, level)).join(e.k === 'and' ? ' AND ' : ' OR ')})`
    case 'not':
      return `(NOT ${p.expr(e.expr, level)})`
    case 'lambda': {
      const args = e.args.map(escapeIdentifier)
      return `${args.length === 1 ? args[0] : `(${args.join(', ')})`} -> ${p.expr(e.body, level)}`
    }
    case 'ident':
      return escapeIdentifier(e.name)
    case 'array':
      return `[${e.items.map((i) => p.expr(i, level)).join(', ')}]`
    case 'tuple':
      return `tuple(${e.items.map((i) => p.expr(i, level)).join(', ')})`
    case 'subquery':
      return `(${p.query(e.query)})`
    case 'template': {
      let out = e.parts[0]!
      e.args.forEach((a, i) => {
        out += p.expr(a, level) + e.parts[i + 1]!
      })
      return out
    }
    case 'window': {
      const params = e.params ? `(${e.params.map((x) => p.expr(x, level)).join(', ')})` : ''
      const args = e.args.map((a) => p.expr(a, level)).join(', ')
      const over = typeof e.over === 'string' ? escapeIdentifier(e.over) : `(${windowSpec(p, e.over, level)})`
      return `${e.name}${params}(${args}) OVER ${over}`
    }
  }
}

// `x IN (SELECT c ...)` where NULL matches NULL (PostHog's `transform_null_in = 1`, without the
// setting: coerce.ts): each side as (isNull(v), assumeNotNull(v)) pairs, so no key is NULL and the
// set keeps every row. A side that is always NULL (a NULL literal, a column of NULLs) has the type
// Nothing, which ClickHouse does not compare with others: that position compares NULL-ness alone.
function nullInSubquery(p: PrintContext, e: Extract<Expr, { k: 'op' }>, q: Query, level: Level): string {
  const sub = p.query(q)
  const cols = outputItems(q).filter((i) => !i.hidden)
  const lefts = e.left.k === 'tuple' ? e.left.items : [e.left]
  if (lefts.length !== cols.length) return `(${p.expr(e.left, level)} ${e.op} (${sub}))`
  const l: string[] = []
  const r: string[] = []
  lefts.forEach((x, i) => {
    const lx = p.expr(x, level)
    const c = quoteIdentifier(cols[i]!.printAlias ?? cols[i]!.name)
    l.push(`isNull(${lx})`)
    r.push(`isNull(${c})`)
    if (!alwaysNull(x) && !columnAlwaysNull(q, i)) {
      l.push(`assumeNotNull(${lx})`)
      r.push(`assumeNotNull(${c})`)
    }
  })
  return `((${l.join(', ')}) ${e.op} (SELECT ${r.join(', ')} FROM (${sub})))`
}

/** The inside of `OVER (...)` / `WINDOW w AS (...)`. */
export function windowSpec(p: PrintContext, w: WindowSpec, level: Level): string {
  const parts: string[] = []
  if (w.partitionBy.length)
    parts.push(`PARTITION BY ${w.partitionBy.map((x) => p.expr(x, level)).join(', ')}`)
  if (w.orderBy.length) {
    parts.push(
      `ORDER BY ${w.orderBy.map((o) => `${p.expr(o.expr, level)} ${o.desc ? 'DESC' : 'ASC'}`).join(', ')}`,
    )
  }
  if (w.frame) {
    const end = w.frame.end ?? { kind: 'CURRENT ROW' as const }
    parts.push(`${w.frame.method} BETWEEN ${frameBound(w.frame.start)} AND ${frameBound(end)}`)
  }
  return parts.join(' ')
}

function frameBound(b: FrameBound): string {
  if (b.kind === 'CURRENT ROW') return 'CURRENT ROW'
  return `${b.n === undefined ? 'UNBOUNDED' : escapeNumber(b.n)} ${b.kind}`
}

function literal(value: string | number | boolean | null): string {
  if (value === null) return 'NULL'
  if (typeof value === 'boolean') return value ? '1' : '0'
  if (typeof value === 'number') return escapeNumber(value)
  return escapeString(value)
}

/**
 * The SQL of the value at `path` in the JSON text `json` (printed), as HogQL reads a property: a
 * string unquoted and unescaped, any other value as its JSON text, JSON null or a missing path NULL.
 */
export function propertyValue(json: string, path: PropertyPath): string {
  const steps = path.map((x) => (typeof x === 'number' ? String(x) : escapeString(x)))
  return `JSONExtract(${json}, ${steps.join(', ')}, 'Nullable(String)')`
}

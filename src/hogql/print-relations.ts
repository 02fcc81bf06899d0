import { sourcesOf } from './analysis.ts'
import { HogQLError } from './errors.ts'
import { quoteIdentifier } from './escape.ts'
import { guardedTable, timestampBoundsOfDay } from './guard.ts'
import { type Expr, outputItems, type PropertyPath, type Select, type Source } from './ir.ts'
import type { Level, PrintContext } from './print-context.ts'
import { propertyValue } from './print-expr.ts'
import { andOf, canPushBelowJoins, conjunctsOf, type GuardSplit, pushable } from './print-pushdown.ts'

// What a SELECT level reads: tables (each with the team guard), subqueries and joins:
// - a SELECT level holds at most one JOIN: longer chains nest, and WHERE conditions on the first
//   table move into the innermost level so partition pruning still applies;
// - inner joins print as left joins that keep only rows where the right side's marker column is
//   set: an INNER join lets ClickHouse filter the right side before joining, which would put the
//   WHERE's conditions on the right table into that table's guarded read (guard.ts), where only
//   guardable() conditions may go.

/** The inner-join marker column (a select alias of the level never takes its name). */
export const MATCHED = '_matched'

const SIMPLE_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const INNER_AS_LEFT = new Set(['INNER JOIN', 'ANY INNER JOIN'])
const JOIN_KEYWORD: Record<string, string> = {
  'INNER JOIN': 'ALL LEFT JOIN',
  'LEFT JOIN': 'ALL LEFT JOIN',
  'ANY LEFT JOIN': 'ANY LEFT JOIN',
  'ANY INNER JOIN': 'ANY LEFT JOIN',
  'RIGHT JOIN': 'ALL RIGHT JOIN',
  'ANY RIGHT JOIN': 'ANY RIGHT JOIN',
  'FULL JOIN': 'ALL FULL JOIN',
  'CROSS JOIN': 'CROSS JOIN',
}

/** Whether `name` can be printed as an alias without quoting concerns (the printer quotes anyway). */
export function isSimpleName(name: string): boolean {
  return SIMPLE_NAME.test(name)
}

/** Gives each source of a level a unique printed alias (lazy joins are named after their parent). */
export function assignSourceAliases(srcs: Source[]): void {
  const taken = new Set<string>()
  for (const src of srcs) {
    let base: string
    if (src.parent) base = `${src.parent.printAlias}_${src.lazyField!.replace(/^_+/, '')}`
    else if (src.name && SIMPLE_NAME.test(src.name)) base = src.name
    else base = src.kind === 'table' ? src.table!.name.replace(/^_+/, '') : '_q'
    let alias = base
    for (let n = 2; taken.has(alias); n++) alias = `${base}_${n}`
    taken.add(alias)
    src.printAlias = alias
  }
}

/** The name a source's column has in its printed relation. */
export function colName(src: Source, column: string): string {
  if (src.kind === 'query') {
    const item = outputItems(src.query!).find((i) => i.name === column)
    if (!item?.printAlias) throw new Error(`printer: subquery column ${column} printed before its source`)
    return item.printAlias
  }
  return column
}

/**
 * A source as a FROM/JOIN relation, always a parenthesised, aliased subquery: a table is a guarded
 * read (guard.ts) of the columns the query uses, with `pushed` (conditions guardable() accepted on
 * this source) inside it, and the time bounds implied by `implied` (conditions on this source that
 * stay outside, e.g. on `toDate(timestamp)`: timestampBoundsOfDay); a query source is its printed
 * query. `marked` adds the inner-join marker.
 */
export function relation(
  p: PrintContext,
  src: Source,
  marked = false,
  pushed: Expr[] = [],
  implied: Expr[] = [],
): string {
  const alias = quoteIdentifier(src.printAlias!)
  const marker = marked ? [`1 AS ${quoteIdentifier(MATCHED)}`] : []
  if (src.kind === 'query') {
    const sub = p.query(src.query!)
    if (marker.length) return `(SELECT *, ${marker.join(', ')} FROM (${sub})) AS ${alias}`
    return `(${sub}) AS ${alias}`
  }
  const rel = src.table!.relation
  const cols = [...src.used].sort()
  const team = p.opts.teamId
  const inside = pushed.map((e) => p.expr(e, BARE))
  // SAMPLE's key range (resolve-sample.ts): a comparison of a hash of the row's own column with
  // constants, which cannot fail, so it may sit beside the team condition like `pushed`.
  if (src.sample) {
    inside.push(`cityHash64(distinct_id) >= ${src.sample.lower}`)
    if (src.sample.upper !== undefined) inside.push(`cityHash64(distinct_id) < ${src.sample.upper}`)
  }
  if (rel.kind === 'derived') {
    const list = [...cols.map(quoteIdentifier), ...marker]
    const placed = (cols: Readonly<Record<string, string>>) =>
      pushed.map((e) => p.expr(e, { ref: (_s, c) => cols[c] ?? quoteIdentifier(c) }))
    return `(SELECT ${list.join(', ') || '1'} FROM (${rel.sql(
      team,
      (src.args ?? []).map((e) => p.expr(e, BARE)),
      placed,
    )}) AS ${quoteIdentifier('_d')}) AS ${alias}`
  }
  if (rel.kind === 'physical') {
    for (const e of implied) inside.push(...timestampBoundsOfDay(rel.table, p.expr(e, BARE)))
    const list = [...cols.map(quoteIdentifier), ...marker]
    return `${guardedTable(quoteIdentifier(rel.table), team, list.join(', ') || '1', '', inside)} AS ${alias}`
  }
  // Newest version per key; argMax keeps every column of the same (newest) row. A property read
  // as its own column is the newest version's value at its path: argMax of a one-element tuple, since
  // argMax of a Nullable would skip the newest version where the path is missing. Where the whole
  // JSON is read too, its alias is the newest JSON (an aggregate): the value is then read from it a
  // level around, not inside another argMax.
  const keys = rel.key.map(quoteIdentifier)
  const props = src.propColumns ?? new Map<string, { column: string; path: PropertyPath }>()
  const version = quoteIdentifier(rel.version)
  const aroundRaw = (c: string) => cols.includes(props.get(c)!.column)
  const listed = (c: string) => {
    const x = props.get(c)!
    return `tupleElement(argMax(tuple(${propertyValue(quoteIdentifier(x.column), x.path)}), ${version}), 1)`
  }
  const newest = (c: string) =>
    `${props.has(c) ? listed(c) : `argMax(${quoteIdentifier(c)}, ${version})`} AS ${quoteIdentifier(c)}`
  const list = [
    ...rel.key.filter((k) => cols.includes(k) || cols.length === 0).map(quoteIdentifier),
    ...cols.filter((c) => !rel.key.includes(c) && !(props.has(c) && aroundRaw(c))).map(newest),
  ]
  const copies = cols
    .filter((c) => props.has(c) && aroundRaw(c))
    .map(
      (c) =>
        `${propertyValue(quoteIdentifier(props.get(c)!.column), props.get(c)!.path)} AS ${quoteIdentifier(c)}`,
    )
  if (!list.length) list.push(keys[0]!)
  list.push(...marker)
  let tail = `GROUP BY ${keys.join(', ')}`
  if (rel.deleted)
    tail += ` HAVING argMax(${quoteIdentifier(rel.deleted)}, ${quoteIdentifier(rel.version)}) = 0`
  const read = guardedTable(quoteIdentifier(rel.table), team, list.join(', '), tail, inside)
  if (copies.length) return `(SELECT *, ${copies.join(', ')} FROM ${read}) AS ${alias}`
  return `${read} AS ${alias}`
}

// Inside a guarded read the table is unaliased: its columns are named bare.
const BARE: Level = { ref: (_src, column) => quoteIdentifier(column) }

/** `JOIN <relation> ON ...`, and the marker filter an inner join printed as a left join needs. */
export function joinClause(
  p: PrintContext,
  s: Select,
  src: Source,
  level: Level,
): { sql: string; filter?: string } {
  const kw = JOIN_KEYWORD[src.joinType!]
  if (!kw) throw new Error(`printer: unknown join type ${src.joinType}`)
  const marked = INNER_AS_LEFT.has(src.joinType!)
  const rel = relation(p, src, marked)
  if (src.joinType === 'CROSS JOIN') return { sql: `${kw} ${rel}` }
  const sql = `${kw} ${rel} ON ${p.expr(src.on!, level)}`
  if (!marked) return { sql }
  return { sql, filter: `${quoteIdentifier(src.printAlias!)}.${quoteIdentifier(MATCHED)} = 1` }
}

/** The FROM clause of a level with more than one JOIN, nested; what stays for the outer WHERE. */
export interface NestedJoins {
  from: string
  where?: Expr
  filters: string[]
}

/**
 * FROM a JOIN b JOIN c ... becomes FROM (SELECT ... FROM a JOIN b) AS _j1 JOIN c ...: one JOIN per
 * level. Each inner level exposes the columns later levels use, renamed <alias>__<column>.
 */
export function nestJoins(p: PrintContext, s: Select, outer: Level, split: GuardSplit): NestedJoins {
  const srcs = s.sources
  const exposed = new Map<Source, Map<string, string>>()
  const expose = (src: Source, column: string) => `${src.printAlias}__${colName(src, column)}`

  // Other conditions on the first table alone run in the innermost level, before the later joins.
  const conjuncts = conjunctsOf(split.where)
  const pushed = canPushBelowJoins(s) ? conjuncts.filter((c) => pushable(c, srcs[0]!)) : []
  const kept = conjuncts.filter((c) => !pushed.includes(c))

  let innerSql = ''
  let innerAlias = ''
  // Join keys computed from earlier tables (person_id through its override, say) are computed one
  // level down and joined on as plain columns, each computed once below the join.
  let keys = new Map<Expr, string>()
  for (let k = 1; k < srcs.length; k++) {
    const alias = innerAlias
    const pre = new Map(
      [...keys].map(([e, name]) => [e, `${quoteIdentifier(alias)}.${quoteIdentifier(name)}`]),
    )
    const level: Level = {
      pre,
      ref: (src, column) => {
        if (srcs.indexOf(src) === k || (k === 1 && src === srcs[0])) {
          return `${quoteIdentifier(src.printAlias!)}.${quoteIdentifier(colName(src, column))}`
        }
        const name = exposed.get(src)?.get(column)
        // A join condition that reads a lazy join of the table being joined (`e.person_id` when
        // `events e` is the right side): not printable one join per level yet. A 400, not a 500.
        if (!name) {
          throw new HogQLError(
            'not_supported',
            'This JOIN condition reads a field that needs a join of the joined table itself (e.g. person_id of a joined events table); put that table first in FROM',
          )
        }
        return `${quoteIdentifier(alias)}.${quoteIdentifier(name)}`
      },
    }
    let from: string
    if (k === 1) {
      from = `FROM ${relation(p, srcs[0]!, false, split.inside, split.implied)}`
    } else {
      from = `FROM (${innerSql}) AS ${quoteIdentifier(innerAlias)}`
    }
    const join = joinClause(p, s, srcs[k]!, level)
    from += ` ${join.sql}`
    if (k === srcs.length - 1) {
      outer.ref = level.ref
      return { from: ` ${from}`, where: andOf(kept), filters: join.filter ? [join.filter] : [] }
    }
    const cols: string[] = []
    for (let i = 0; i <= k; i++) {
      const src = srcs[i]!
      const m = new Map<string, string>()
      for (const c of src.used) {
        const name = expose(src, c)
        cols.push(`${level.ref(src, c)} AS ${quoteIdentifier(name)}`)
        m.set(c, name)
      }
      exposed.set(src, m)
    }
    keys = new Map()
    const next = srcs[k + 1]!
    const earlier = new Set(srcs.slice(0, k + 1))
    for (const [i, c] of (next.on?.k === 'and' ? next.on.items : next.on ? [next.on] : []).entries()) {
      if (c.k !== 'op') continue
      for (const side of [c.left, c.right]) {
        const used = sourcesOf(side)
        if (side.k === 'col' || !used.size || ![...used].every((x) => earlier.has(x))) continue
        const name = `_key${k + 1}_${i}`
        cols.push(`${p.expr(side, level)} AS ${quoteIdentifier(name)}`)
        keys.set(side, name)
      }
    }
    const conds = [join.filter, ...(k === 1 ? pushed.map((x) => p.expr(x, level)) : [])].filter(Boolean)
    innerSql = `SELECT ${cols.join(', ') || '1'} ${from}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`
    innerAlias = `_j${k}`
  }
  throw new Error('printer: unreachable')
}

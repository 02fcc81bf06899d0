import { HogQLError } from './errors.ts'
import { escapeIdentifier, escapeNumber, escapeString, quoteIdentifier } from './escape.ts'
import type { Expr, Query, Select, SelectItem, Source } from './ir.ts'
import { hasAggregate, sourcesOf } from './resolver.ts'

// Prints the resolved IR as ClickHouse SQL that runs on 18.16 and on current releases:
// - every physical table is read with `team_id = <team>` right where it is read;
// - a SELECT level holds at most one JOIN: longer chains nest, and WHERE conditions on the first
//   table move into the innermost level so partition pruning still applies;
// - select aliases never reuse a column name of their level (18.16 lets an alias shadow even a
//   qualified `t.column` anywhere in the query).

export interface PrintOptions {
  teamId: number
  tz: string
}

interface Level {
  ref: (src: Source, column: string) => string
  // Expressions already computed by an inner level, printed as that level's column.
  pre?: Map<Expr, string>
  // Items printed as something other than their value (millisecond timestamps as text): references
  // to them must repeat the value, not name the alias.
  formatted: Set<SelectItem>
}

const SIMPLE_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const SAFE_JOIN_FOR_PUSHDOWN = new Set([
  'INNER JOIN',
  'LEFT JOIN',
  'ANY LEFT JOIN',
  'ANY INNER JOIN',
  'CROSS JOIN',
])
// 18.16 mishandles INNER joins that match nothing when the left side is itself a join: it returns
// unmatched rows, or crashes when the select list holds a NULL. Inner joins are therefore printed as
// left joins that keep only rows where the right side's marker column is set.
const MATCHED = '_matched'
const INNER_AS_LEFT = new Set(['INNER JOIN', 'ANY INNER JOIN'])
const JOIN_KEYWORD: Record<string, string> = {
  'INNER JOIN': 'ALL LEFT JOIN',
  'LEFT JOIN': 'ALL LEFT JOIN',
  'ANY LEFT JOIN': 'ANY LEFT JOIN',
  'ANY INNER JOIN': 'ANY LEFT JOIN',
  'CROSS JOIN': 'CROSS JOIN',
}

export class Printer {
  private readonly guard: string

  constructor(private opts: PrintOptions) {
    if (!Number.isSafeInteger(opts.teamId)) throw new Error('teamId must be an integer')
    this.guard = `team_id = ${opts.teamId}`
  }

  query(q: Query, top = false): string {
    if (q.k === 'select') return this.select(q, top)
    const parts = q.queries.map((sub) => {
      const sql = this.query(sub, false)
      // A branch's own ORDER BY / LIMIT must stay with that branch.
      const wrap = sub.k === 'set' || sub.orderBy || sub.limit !== undefined || sub.limitBy
      return wrap ? `SELECT * FROM (${sql})` : sql
    })
    const union = parts.join(' UNION ALL ')
    return q.distinct ? `SELECT DISTINCT * FROM (${union})` : union
  }

  select(s: Select, top: boolean): string {
    const srcs = s.sources
    this.assignSourceAliases(srcs)
    const formatted = new Set<SelectItem>()
    const level: Level = { ref: () => '', formatted }

    let from = ''
    let guard: string | undefined
    let where = s.where
    const joinFilters: string[] = []
    let columnNames: Set<string>

    if (srcs.length <= 2) {
      const [s0, s1] = srcs
      level.ref = (src, column) =>
        `${quoteIdentifier(src.printAlias!)}.${quoteIdentifier(this.colName(src, column))}`
      if (s0) {
        const base = this.relation(s0, true)
        from = ` FROM ${base.sql}`
        guard = base.guard
      }
      if (s1) {
        const join = this.joinClause(s1, level)
        from += ` ${join.sql}`
        if (join.filter) joinFilters.push(join.filter)
      }
      columnNames = new Set(srcs.flatMap((src) => [...src.used].map((c) => this.colName(src, c))))
    } else {
      const nested = this.nestJoins(s, level)
      from = nested.from
      where = nested.where
      joinFilters.push(...nested.filters)
      columnNames = nested.columnNames
    }

    // Names an alias must not take at this level.
    const unsafe = new Set<string>([
      'team_id',
      MATCHED,
      ...columnNames,
      ...srcs.map((x) => x.printAlias!),
      ...identNames(s),
    ])
    const taken = new Set<string>()
    const items: string[] = []
    for (const [i, item] of s.items.entries()) {
      const msCol = top && !s.aggregating ? msColumn(item.expr) : undefined
      let value: string
      if (msCol) {
        formatted.add(item)
        value = this.msText(msCol, level)
      } else {
        value = this.expr(item.expr, level)
      }
      // `t.event AS event` is harmless: the alias means the very column it shadows.
      const bareSame =
        !msCol &&
        item.expr.k === 'col' &&
        this.colName(item.expr.src, item.expr.column) === item.name &&
        value === level.ref(item.expr.src, item.expr.column)
      let alias = SIMPLE_NAME.test(item.name) ? item.name : `_c${i}`
      if (taken.has(alias) || (unsafe.has(alias) && !bareSame)) {
        let n = 1
        while (taken.has(`${alias}_${n}`) || unsafe.has(`${alias}_${n}`)) n++
        alias = `${alias}_${n}`
      }
      taken.add(alias)
      item.printAlias = alias
      items.push(`${value} AS ${quoteIdentifier(alias)}`)
    }

    // 18.16 does not deduplicate SELECT DISTINCT across parts when the level has a JOIN (rows come
    // back twice); grouping by every item does the same job correctly.
    const distinctAsGroupBy = s.distinct && srcs.length > 1 && !s.aggregating
    let sql = `SELECT ${s.distinct && !distinctAsGroupBy ? 'DISTINCT ' : ''}${items.join(', ') || '1'}${from}`
    if (s.arrayJoin) {
      const list = s.arrayJoin.items.map((a) => `${this.expr(a.expr, level)} AS ${escapeIdentifier(a.alias)}`)
      sql += ` ${s.arrayJoin.left ? 'LEFT ' : ''}ARRAY JOIN ${list.join(', ')}`
    }
    const conds = [guard, ...joinFilters, where && this.expr(where, level)].filter((c): c is string => !!c)
    if (conds.length) sql += ` WHERE ${conds.join(' AND ')}`
    if (s.groupBy) sql += ` GROUP BY ${s.groupBy.map((g) => this.expr(g, level)).join(', ')}`
    else if (distinctAsGroupBy)
      sql += ` GROUP BY ${s.items.map((i) => quoteIdentifier(i.printAlias!)).join(', ')}`
    if (s.having) sql += ` HAVING ${this.expr(s.having, level)}`
    if (s.orderBy) {
      const key = (e: Expr): string => {
        // Timestamps order by their milliseconds twin: exact, where seconds would leave ties.
        const ms = s.aggregating || s.distinct ? undefined : msColumn(e)
        return ms ? level.ref(ms.src, ms.ms!) : this.expr(e, level)
      }
      sql += ` ORDER BY ${s.orderBy.map((o) => `${key(o.expr)}${o.desc ? ' DESC' : ' ASC'}`).join(', ')}`
    }
    if (s.limitBy) {
      const off = s.limitBy.offset ? `${s.limitBy.offset}, ` : ''
      sql += ` LIMIT ${off}${s.limitBy.n} BY ${s.limitBy.exprs.map((e) => this.expr(e, level)).join(', ')}`
    }
    if (s.limit !== undefined) sql += ` LIMIT ${s.offset ? `${s.offset}, ` : ''}${s.limit}`
    else if (s.offset) sql += ` LIMIT ${s.offset}, 18446744073709551615`
    return sql
  }

  // The output type of each top-level column, matching what select() printed.
  outputTypes(q: Query): string[] {
    const items = q.k === 'select' ? q.items : firstSelect(q).items
    const top = q.k === 'select'
    const aggregating = q.k === 'select' && q.aggregating
    return items
      .filter((i) => !i.hidden)
      .map((i) =>
        top && !aggregating && msColumn(i.expr)
          ? `DateTime64(3, ${escapeString(this.opts.tz)})`
          : i.expr.type,
      )
  }

  // ---- sources -----------------------------------------------------------------------------

  private assignSourceAliases(srcs: Source[]): void {
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

  // The name a source's column has in its printed relation.
  private colName(src: Source, column: string): string {
    if (src.kind === 'query') {
      const item = outputItemsOf(src.query!).find((i) => i.name === column)
      if (!item?.printAlias) throw new Error(`printer: subquery column ${column} printed before its source`)
      return item.printAlias
    }
    return column
  }

  // `base`: the relation opens a FROM clause, so a physical table can be scanned directly with
  // the guard in WHERE; elsewhere every relation is a self-contained guarded subquery.
  private relation(src: Source, base: boolean, marked = false): { sql: string; guard?: string } {
    const alias = quoteIdentifier(src.printAlias!)
    const marker = marked ? [`1 AS ${quoteIdentifier(MATCHED)}`] : []
    if (src.kind === 'query') {
      const sub = this.query(src.query!, false)
      if (marked) return { sql: `(SELECT *, ${marker[0]} FROM (${sub})) AS ${alias}` }
      return { sql: `(${sub}) AS ${alias}` }
    }
    const rel = src.table!.relation
    const cols = [...src.used].sort()
    if (rel.kind === 'physical') {
      if (base) return { sql: `${quoteIdentifier(rel.table)} AS ${alias}`, guard: `${alias}.${this.guard}` }
      const list = [...cols.map(quoteIdentifier), ...marker]
      return {
        sql: `(SELECT ${list.join(', ') || '1'} FROM ${quoteIdentifier(rel.table)} WHERE ${this.guard}) AS ${alias}`,
      }
    }
    // Newest version per key; argMax keeps every column of the same (newest) row.
    const keys = rel.key.map(quoteIdentifier)
    const list = [
      ...rel.key.filter((k) => cols.includes(k) || cols.length === 0).map(quoteIdentifier),
      ...cols
        .filter((c) => !rel.key.includes(c))
        .map(
          (c) => `argMax(${quoteIdentifier(c)}, ${quoteIdentifier(rel.version)}) AS ${quoteIdentifier(c)}`,
        ),
    ]
    if (!list.length) list.push(keys[0]!)
    list.push(...marker)
    let sql = `SELECT ${list.join(', ')} FROM ${quoteIdentifier(rel.table)} WHERE ${this.guard} GROUP BY ${keys.join(', ')}`
    if (rel.deleted)
      sql += ` HAVING argMax(${quoteIdentifier(rel.deleted)}, ${quoteIdentifier(rel.version)}) = 0`
    return { sql: `(${sql}) AS ${alias}` }
  }

  private joinClause(src: Source, level: Level): { sql: string; filter?: string } {
    const kw = JOIN_KEYWORD[src.joinType!]
    if (!kw) throw new Error(`printer: unknown join type ${src.joinType}`)
    const marked = INNER_AS_LEFT.has(src.joinType!)
    const rel = this.relation(src, false, marked).sql
    if (src.joinType === 'CROSS JOIN') return { sql: `${kw} ${rel}` }
    const sql = `${kw} ${rel} ON ${this.expr(src.on!, level)}`
    if (!marked) return { sql }
    return { sql, filter: `${quoteIdentifier(src.printAlias!)}.${quoteIdentifier(MATCHED)} = 1` }
  }

  // FROM a JOIN b JOIN c ... becomes FROM (SELECT ... FROM a JOIN b) AS _j1 JOIN c ...: one JOIN per
  // level. Each inner level exposes the columns later levels use, renamed <alias>__<column>.
  private nestJoins(
    s: Select,
    outer: Level,
  ): { from: string; where?: Expr; columnNames: Set<string>; filters: string[] } {
    const srcs = s.sources
    const exposed = new Map<Source, Map<string, string>>()
    const expose = (src: Source, column: string) => `${src.printAlias}__${this.colName(src, column)}`

    // Conditions on the first table alone can run before the joins when no join can bring back
    // rows of the first table that the condition removed.
    const conjuncts = !s.where ? [] : s.where.k === 'and' ? s.where.items : [s.where]
    const canPush = srcs.slice(1).every((x) => SAFE_JOIN_FOR_PUSHDOWN.has(x.joinType!))
    const pushed = canPush ? conjuncts.filter((c) => pushable(c, srcs[0]!)) : []
    const kept = conjuncts.filter((c) => !pushed.includes(c))

    let innerSql = ''
    let innerAlias = ''
    // Join keys computed from earlier tables (person_id through its override, say) are computed one
    // level down and joined on as plain columns: 18.16 cannot use expression keys in RIGHT/FULL joins.
    let keys = new Map<Expr, string>()
    for (let k = 1; k < srcs.length; k++) {
      const alias = innerAlias
      const pre = new Map(
        [...keys].map(([e, name]) => [e, `${quoteIdentifier(alias)}.${quoteIdentifier(name)}`]),
      )
      const level: Level = {
        formatted: new Set(),
        pre,
        ref: (src, column) => {
          if (srcs.indexOf(src) === k || (k === 1 && src === srcs[0])) {
            return `${quoteIdentifier(src.printAlias!)}.${quoteIdentifier(this.colName(src, column))}`
          }
          const name = exposed.get(src)?.get(column)
          if (!name) throw new Error('printer: column not exposed by the nested join')
          return `${quoteIdentifier(alias)}.${quoteIdentifier(name)}`
        },
      }
      let from: string
      let levelGuard: string | undefined
      if (k === 1) {
        const base = this.relation(srcs[0]!, true)
        from = `FROM ${base.sql}`
        levelGuard = base.guard
      } else {
        from = `FROM (${innerSql}) AS ${quoteIdentifier(innerAlias)}`
      }
      const join = this.joinClause(srcs[k]!, level)
      from += ` ${join.sql}`
      if (k === srcs.length - 1) {
        outer.ref = level.ref
        const columnNames = new Set<string>()
        for (const m of exposed.values()) for (const n of m.values()) columnNames.add(n)
        for (const c of srcs[k]!.used) columnNames.add(this.colName(srcs[k]!, c))
        return {
          from: ` ${from}`,
          where: andOf(kept),
          columnNames,
          filters: join.filter ? [join.filter] : [],
        }
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
          cols.push(`${this.expr(side, level)} AS ${quoteIdentifier(name)}`)
          keys.set(side, name)
        }
      }
      const conds = [
        levelGuard,
        join.filter,
        ...(k === 1 ? pushed.map((p) => this.expr(p, level)) : []),
      ].filter(Boolean)
      innerSql = `SELECT ${cols.join(', ') || '1'} ${from}${conds.length ? ` WHERE ${conds.join(' AND ')}` : ''}`
      innerAlias = `_j${k}`
    }
    throw new Error('printer: unreachable')
  }

  // ---- expressions -------------------------------------------------------------------------

  private msText(e: Extract<Expr, { k: 'col' }>, level: Level): string {
    // 'YYYY-MM-DD hh:mm:ss.mmm' in the project time zone: what a DateTime64(3, tz) column reads
    // as on a current ClickHouse, built from the seconds column and its milliseconds twin.
    const seconds = this.expr(e, level)
    const ms = level.ref(e.src, e.ms!)
    return `concat(toString(${seconds}), '.', substring(toString(1000 + (${ms} % 1000)), 2, 3))`
  }

  expr(e: Expr, level: Level): string {
    const pre = level.pre?.get(e)
    if (pre) return pre
    switch (e.k) {
      case 'const':
        return literal(e.value)
      case 'col': {
        const ref = level.ref(e.src, e.column)
        return e.tz && this.opts.tz !== 'UTC' ? `toTimeZone(${ref}, ${escapeString(this.opts.tz)})` : ref
      }
      case 'prop': {
        const k = level.ref(e.src, e.keys)
        const v = level.ref(e.src, e.values)
        // A missing key gives index 0, which reads NULL from an array of Nullable: one scan, no NULL
        // literal (18.16 crashes on `if(..., NULL)` in some join shapes).
        return `arrayElement(CAST(${v} AS Array(Nullable(String))), indexOf(${k}, ${escapeString(e.key)}))`
      }
      case 'item':
        if (level.formatted.has(e.item)) return this.expr(e.item.expr, level)
        if (!e.item.printAlias) return this.expr(e.item.expr, level)
        return quoteIdentifier(e.item.printAlias)
      case 'call': {
        const args = e.args.map((a) => this.expr(a, level))
        const params = e.params?.map((p) => this.expr(p, level)) ?? []
        const print = e.fn.print
        if (typeof print === 'string') {
          return `${print}${e.params ? `(${params.join(', ')})` : ''}(${args.join(', ')})`
        }
        try {
          return print(args, params, { tz: this.opts.tz, argTypes: e.args.map((a) => a.type) })
        } catch (err) {
          throw new HogQLError('bad_argument', `${e.name}: ${(err as Error).message}`, e.span)
        }
      }
      case 'op': {
        const left = this.expr(e.left, level)
        if (e.op === 'IN' || e.op === 'NOT IN') {
          if (e.right.k === 'tuple') {
            if (!e.right.items.length) return e.op === 'IN' ? '0' : '1'
            return `(${left} ${e.op} (${e.right.items.map((i) => this.expr(i, level)).join(', ')}))`
          }
          if (e.right.k === 'subquery') return `(${left} ${e.op} (${this.query(e.right.query, false)}))`
          return `(${left} ${e.op} ${this.expr(e.right, level)})`
        }
        return `(${left} ${e.op} ${this.expr(e.right, level)})`
      }
      case 'and':
      case 'or':
        if (!e.items.length) return e.k === 'and' ? '1' : '0'
        return `(${e.items.map((i) => this.expr(i, level)).join(e.k === 'and' ? ' AND ' : ' OR ')})`
      case 'not':
        return `(NOT ${this.expr(e.expr, level)})`
      case 'lambda': {
        const args = e.args.map(escapeIdentifier)
        return `${args.length === 1 ? args[0] : `(${args.join(', ')})`} -> ${this.expr(e.body, level)}`
      }
      case 'ident':
        return escapeIdentifier(e.name)
      case 'array':
        return `[${e.items.map((i) => this.expr(i, level)).join(', ')}]`
      case 'tuple':
        return `tuple(${e.items.map((i) => this.expr(i, level)).join(', ')})`
      case 'subquery':
        return `(${this.query(e.query, false)})`
      case 'template': {
        let out = e.parts[0]!
        e.args.forEach((a, i) => {
          out += this.expr(a, level) + e.parts[i + 1]!
        })
        return out
      }
    }
  }
}

function literal(value: string | number | boolean | null): string {
  if (value === null) return 'NULL'
  if (typeof value === 'boolean') return value ? '1' : '0'
  if (typeof value === 'number') return escapeNumber(value)
  return escapeString(value)
}

function outputItemsOf(q: Query): SelectItem[] {
  return q.k === 'select' ? q.items : outputItemsOf(q.queries[0]!)
}

function firstSelect(q: Query): Select {
  return q.k === 'select' ? q : firstSelect(q.queries[0]!)
}

function msColumn(e: Expr): Extract<Expr, { k: 'col' }> | undefined {
  if (e.k === 'item') return msColumn(e.item.expr)
  return e.k === 'col' && e.ms ? e : undefined
}

function andOf(items: Expr[]): Expr | undefined {
  if (!items.length) return undefined
  return items.length === 1 ? items[0] : { k: 'and', items, type: 'UInt8' }
}

function pushable(e: Expr, first: Source): boolean {
  if (hasAggregate(e) || mentionsLevelNames(e)) return false
  const srcs = sourcesOf(e)
  return srcs.size > 0 && [...srcs].every((x) => x === first)
}

// Select-item references and lambda / ARRAY JOIN names only exist at the outer level.
function mentionsLevelNames(e: Expr): boolean {
  switch (e.k) {
    case 'item':
    case 'ident':
      return true
    case 'call':
      return e.args.some(mentionsLevelNames)
    case 'op':
      return mentionsLevelNames(e.left) || mentionsLevelNames(e.right)
    case 'and':
    case 'or':
    case 'array':
    case 'tuple':
      return e.items.some(mentionsLevelNames)
    case 'not':
      return mentionsLevelNames(e.expr)
    case 'lambda':
      return true
    case 'template':
      return e.args.some(mentionsLevelNames)
    default:
      return false
  }
}

function identNames(s: Select): string[] {
  const out: string[] = []
  const walk = (e: Expr | undefined): void => {
    if (!e) return
    switch (e.k) {
      case 'ident':
        out.push(e.name)
        break
      case 'lambda':
        out.push(...e.args)
        walk(e.body)
        break
      case 'call':
        e.args.forEach(walk)
        break
      case 'op':
        walk(e.left)
        walk(e.right)
        break
      case 'and':
      case 'or':
      case 'array':
      case 'tuple':
        e.items.forEach(walk)
        break
      case 'not':
        walk(e.expr)
        break
      case 'template':
        e.args.forEach(walk)
        break
    }
  }
  for (const i of s.items) walk(i.expr)
  walk(s.where)
  walk(s.having)
  for (const g of s.groupBy ?? []) walk(g)
  for (const o of s.orderBy ?? []) walk(o.expr)
  for (const a of s.arrayJoin?.items ?? []) out.push(a.alias)
  return out
}

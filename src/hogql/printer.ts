import { boundNames } from './analysis.ts'
import { escapeIdentifier, quoteIdentifier } from './escape.ts'
import { type Expr, firstSelect, type Query, type Select } from './ir.ts'
import type { Level, PrintContext, PrintOptions } from './print-context.ts'
import { printExpr, windowSpec } from './print-expr.ts'
import {
  assignSourceAliases,
  colName,
  isSimpleName,
  joinClause,
  MATCHED,
  nestJoins,
  relation,
} from './print-relations.ts'
import { splitForGuard } from './print-pushdown.ts'

// Prints the resolved IR as ClickHouse SQL. This file holds statements and SELECT levels; tables,
// joins and the team guard are in print-relations.ts, expressions in print-expr.ts. Columns are
// printed qualified (`t`.`column`), so a select alias may keep a column's name.

export type { PrintOptions } from './print-context.ts'

/** Prints one resolved statement; one instance per statement (it assigns aliases as it goes). */
export class Printer implements PrintContext {
  constructor(readonly opts: PrintOptions) {
    if (!Number.isSafeInteger(opts.teamId)) throw new Error('teamId must be an integer')
  }

  expr(e: Expr, level: Level): string {
    return printExpr(this, e, level)
  }

  query(q: Query): string {
    if (q.k === 'select') return this.select(q)
    const parts = q.queries.map((sub) => {
      const sql = this.query(sub)
      // A branch's own ORDER BY / LIMIT must stay with that branch.
      const wrap = sub.k === 'set' || sub.orderBy || sub.limit !== undefined || sub.limitExpr || sub.limitBy
      return wrap ? `SELECT * FROM (${sql})` : sql
    })
    if (q.op) return parts.map((x) => `SELECT * FROM (${x})`).join(` ${q.op} `)
    const union = parts.join(' UNION ALL ')
    return q.distinct ? `SELECT DISTINCT * FROM (${union})` : union
  }

  /** The output type of each top-level column, matching what the statement printed. */
  outputTypes(q: Query): string[] {
    const items = firstSelect(q).items
    return items.filter((i) => !i.hidden).map((i) => i.expr.type)
  }

  private select(s: Select): string {
    const srcs = s.sources
    assignSourceAliases(srcs)
    const level: Level = { ref: () => '' }

    let from = ''
    const split = splitForGuard(s)
    let where = split.where
    const joinFilters: string[] = []

    if (srcs.length <= 2) {
      const [s0, s1] = srcs
      level.ref = (src, column) =>
        `${quoteIdentifier(src.printAlias!)}.${quoteIdentifier(colName(src, column))}`
      if (s0) from = ` FROM ${relation(this, s0, false, split.inside, split.implied)}`
      if (s1) {
        const join = joinClause(this, s, s1, level)
        from += ` ${join.sql}`
        if (join.filter) joinFilters.push(join.filter)
      }
    } else {
      const nested = nestJoins(this, s, level, split)
      from = nested.from
      where = nested.where
      joinFilters.push(...nested.filters)
    }

    // Names an alias must not take at this level: the names this level reads bare (a source's alias
    // before its `.column`, a lambda parameter, an ARRAY JOIN alias), where ClickHouse would read
    // the select alias instead, and the guard's and the join marker's columns. The level's columns
    // are read qualified (`t`.`c`), which ClickHouse resolves to the column whatever the aliases.
    const unsafe = new Set<string>(['team_id', MATCHED, ...srcs.map((x) => x.printAlias!), ...boundNames(s)])
    const taken = new Set<string>()
    const items: string[] = []
    for (const [i, item] of s.items.entries()) {
      const value = this.expr(item.expr, level)
      // `t.event AS event` is harmless: the alias means the very column it shadows.
      const bareSame =
        item.expr.k === 'col' &&
        colName(item.expr.src, item.expr.column) === item.name &&
        value === level.ref(item.expr.src, item.expr.column)
      let alias = isSimpleName(item.name) ? item.name : `_c${i}`
      if (taken.has(alias) || (unsafe.has(alias) && !bareSame)) {
        let n = 1
        while (taken.has(`${alias}_${n}`) || unsafe.has(`${alias}_${n}`)) n++
        alias = `${alias}_${n}`
      }
      taken.add(alias)
      item.printAlias = alias
      items.push(`${value} AS ${quoteIdentifier(alias)}`)
    }

    let sql = `SELECT ${s.distinct ? 'DISTINCT ' : ''}${items.join(', ') || '1'}${from}`
    if (s.arrayJoin) {
      const list = s.arrayJoin.items.map((a) => `${this.expr(a.expr, level)} AS ${escapeIdentifier(a.alias)}`)
      sql += ` ${s.arrayJoin.left ? 'LEFT ' : ''}ARRAY JOIN ${list.join(', ')}`
    }
    const conds = [...joinFilters, where && this.expr(where, level)].filter((c): c is string => !!c)
    if (conds.length) sql += ` WHERE ${conds.join(' AND ')}`
    if (s.groupBy) sql += ` GROUP BY ${s.groupBy.map((g) => this.expr(g, level)).join(', ')}`
    if (s.having) sql += ` HAVING ${this.expr(s.having, level)}`
    if (s.windows) {
      const defs = Object.entries(s.windows).map(
        ([n, w]) => `${escapeIdentifier(n)} AS (${windowSpec(this, w, level)})`,
      )
      sql += ` WINDOW ${defs.join(', ')}`
    }
    if (s.orderBy) {
      sql += ` ORDER BY ${s.orderBy.map((o) => `${this.expr(o.expr, level)}${o.desc ? ' DESC' : ' ASC'}`).join(', ')}`
    }
    if (s.limitBy) {
      const off = s.limitBy.offset ? `${s.limitBy.offset}, ` : ''
      sql += ` LIMIT ${off}${s.limitBy.n} BY ${s.limitBy.exprs.map((e) => this.expr(e, level)).join(', ')}`
    }
    if (s.limitExpr || s.offsetExpr) {
      // Expressions (servers that compute them): PostHog's cap, `least` of the maximum and the value;
      // ClickHouse reads WITH TIES after the OFFSET.
      const limit = s.limitExpr
        ? `least(${s.limit ?? '18446744073709551615'}, ${this.expr(s.limitExpr, level)})`
        : `${s.limit ?? '18446744073709551615'}`
      const offset = s.offsetExpr ? this.expr(s.offsetExpr, level) : s.offset ? `${s.offset}` : ''
      sql += ` LIMIT ${limit}${offset ? ` OFFSET ${offset}` : ''}${s.withTies ? ' WITH TIES' : ''}`
    } else if (s.limit !== undefined) {
      sql += ` LIMIT ${s.offset ? `${s.offset}, ` : ''}${s.limit}${s.withTies ? ' WITH TIES' : ''}`
    } else if (s.offset) sql += ` LIMIT ${s.offset}, 18446744073709551615`
    return sql
  }
}

import type { HogQLParser } from '@posthog/hogql-parser'
import { type FieldNode, type Node, type QueryNode, type SelectQueryNode, span } from './ast.ts'
import { hasAggregate, isConstant } from './analysis.ts'
import { HogQLError, type Span } from './errors.ts'
import {
  type Expr,
  type OrderItem,
  outputItems,
  type Query,
  type Select,
  type SelectItem,
  type SetQuery,
} from './ir.ts'
import { materializedProperties } from './materialized.ts'
import { asFilter } from './nulls.ts'
import { bundleJoinedLazies } from './resolve-bundles.ts'
import type { AliasSlot, CteEntry, Resolution, ResolveOptions, Scope } from './resolve-context.ts'
import { constInt, positional, resolveExpr } from './resolve-expr.ts'
import { asterisk, tryField } from './resolve-fields.ts'
import { resolveJoins } from './resolve-joins.ts'
import { limitValue } from './resolve-limit.ts'
import { resolveWindowSpec } from './resolve-windows.ts'

// Name resolution: turns the parser's AST into the IR, binding every name and checking every
// function against the allow-list. Semantics follow HogQL: select aliases are visible in all
// clauses, `alias.field` qualifies, an unqualified field must belong to exactly one table.
// This file holds the query structure (set operations, SELECT levels, CTEs, select aliases); the
// other parts are resolve-expr.ts, resolve-fields.ts and resolve-joins.ts.

export type { ResolveOptions } from './resolve-context.ts'

/** Resolves one HogQL statement; one instance per statement (it numbers the sources it creates). */
export class Resolver implements Resolution {
  private nextId = 1
  readonly opts: ResolveOptions
  readonly eventProperties = new Set<string>()

  constructor(
    readonly parser: HogQLParser,
    opts: ResolveOptions,
    /** The statement's text, for naming unaliased select items as the user wrote them. */
    private readonly sourceText = '',
  ) {
    this.opts = { ...opts, materialized: opts.materialized ?? materializedProperties() }
  }

  newSourceId(): number {
    return this.nextId++
  }

  expr(node: Node, scope: Scope): Expr {
    return resolveExpr(this, node, scope)
  }

  tryField(chain: string[], scope: Scope, s: Span, path: (string | number)[]): Expr | undefined {
    return tryField(this, chain, scope, s, path)
  }

  text(node: Node): string {
    const start = node.start?.offset
    const end = node.end?.offset
    if (start !== undefined && end !== undefined && this.sourceText) return this.sourceText.slice(start, end)
    return node.node
  }

  /** Resolves a SELECT or set query (the statement itself, a subquery or a CTE body). */
  query(node: Node, ctes: Map<string, CteEntry> = new Map()): Query {
    if (node.node === 'SelectQuery') return this.select(node as SelectQueryNode, ctes)
    if (node.node === 'SelectSetQuery') return this.set(node as QueryNode, ctes)
    throw new HogQLError('syntax_error', `Expected a SELECT query, got ${node.node}`, span(node))
  }

  resolveAlias(slot: AliasSlot, scope: Scope): void {
    if (slot.state === 'done') return
    slot.state = 'resolving'
    slot.item.expr = this.expr(slot.node, scope)
    slot.state = 'done'
  }

  private set(node: QueryNode, ctes: Map<string, CteEntry>): Query {
    if (node.node !== 'SelectSetQuery') return this.query(node, ctes)
    // As in PostHog, a CTE written on one SELECT of a set is also visible in the SELECTs after it
    // (`WITH a AS (...) SELECT ... UNION ALL SELECT * FROM a`).
    const shared = new Map(ctes)
    const branch = (n: Node): Query => {
      const q = this.query(n, shared)
      if (n.node === 'SelectQuery') {
        for (const cte of (n as SelectQueryNode).ctes ?? []) {
          shared.set(cte.name, { node: cte, scope: new Map(shared) })
        }
      }
      return q
    }
    // INTERSECT binds tighter than UNION and EXCEPT (as in ClickHouse and PostHog:
    // `a UNION ALL b INTERSECT c` is `a UNION ALL (b INTERSECT c)`); the others go left to right.
    const operands: Query[] = [branch(node.initial_select_query)]
    const ops: string[] = []
    for (const next of node.subsequent_select_queries) {
      const op = next.set_operator.toUpperCase()
      if (!/^(UNION ALL|UNION DISTINCT|UNION|INTERSECT|EXCEPT)( DISTINCT)?$/.test(op)) {
        throw new HogQLError('not_supported', `${op} is not supported`, span(next.select_query))
      }
      const q = branch(next.select_query)
      if (op.startsWith('INTERSECT')) {
        operands[operands.length - 1] = { k: 'set', queries: [operands.at(-1)!, q], distinct: false, op }
      } else {
        operands.push(q)
        ops.push(op)
      }
    }
    let current: Query = operands[0]!
    ops.forEach((op, i) => {
      const q = operands[i + 1]!
      if (op === 'UNION ALL') {
        if (current.k === 'set' && !current.distinct && !current.op) current.queries.push(q)
        else current = { k: 'set', queries: [current, q], distinct: false }
      } else if (op === 'UNION DISTINCT' || op === 'UNION') {
        current = { k: 'set', queries: [current, q], distinct: true }
      } else current = { k: 'set', queries: [current, q], distinct: false, op }
    })
    const set = current as SetQuery
    const width = outputWidth(set.queries[0]!)
    for (const q of set.queries) {
      if (outputWidth(q) !== width) {
        throw new HogQLError(
          'syntax_error',
          `All parts of a ${set.op ?? 'UNION'} must select the same number of columns`,
          span(node),
        )
      }
    }
    return current
  }

  private select(node: SelectQueryNode, outerCtes: Map<string, CteEntry>): Select {
    if (node.qualify) throw new HogQLError('not_supported', 'QUALIFY is not supported', span(node))
    const windowNodes = Object.entries(node.window_exprs ?? {})

    const ctes = new Map(outerCtes)
    for (const cte of node.ctes ?? []) {
      ctes.set(cte.name, { node: cte, scope: new Map(ctes) })
    }

    const select: Select = {
      k: 'select',
      sources: [],
      items: [],
      distinct: !!node.distinct,
      aggregating: false,
    }
    const scope: Scope = {
      select,
      ctes,
      aliases: new Map(),
      arrayJoinAliases: new Set(),
      lambdas: [],
      cteColumnsResolving: new Set(),
      windows: new Set(windowNodes.map(([name]) => name)),
      windowNodes: new Map(windowNodes as [string, Node][]),
    }

    if (node.select_from) resolveJoins(this, node.select_from, scope)

    // Aliases are visible everywhere in the query, including earlier select items: register them
    // all first, resolve each on first use.
    const slots: (AliasSlot | Node)[] = []
    for (const itemNode of node.select) {
      if (itemNode.node === 'Alias') {
        const name = itemNode.alias as string
        if (scope.aliases.has(name)) {
          throw new HogQLError('syntax_error', `The alias '${name}' is used twice`, span(itemNode))
        }
        const slot: AliasSlot = {
          node: itemNode.expr,
          item: { name, expr: { k: 'const', value: null, type: 'Unknown' } },
          state: 'pending',
        }
        scope.aliases.set(name, slot)
        slots.push(slot)
      } else {
        slots.push(itemNode)
      }
    }
    // Aliases inside expressions (`arrayZip((sumMap(a, b) AS x).1, x.2)`) are visible too; a use
    // repeats the expression (ClickHouse computes it once).
    for (const itemNode of node.select) {
      const top = itemNode.node === 'Alias' ? itemNode.expr : itemNode
      for (const inner of nestedAliases(top)) {
        const name = inner.alias as string
        if (scope.aliases.has(name)) continue
        const item = { name, expr: { k: 'const', value: null, type: 'Unknown' } as const }
        scope.aliases.set(name, { node: inner.expr, item, state: 'pending', inline: true })
      }
    }
    // ARRAY JOIN after the aliases are registered: it may unroll a select item (`ARRAY JOIN a AS x`).
    if (node.array_join_list?.length) {
      const items = node.array_join_list.map((a) => {
        if (a.node !== 'Alias') throw new HogQLError('syntax_error', 'ARRAY JOIN needs an alias', span(a))
        const expr = this.expr(a.expr, scope)
        scope.arrayJoinAliases.add(a.alias)
        return { expr, alias: a.alias as string }
      })
      select.arrayJoin = { left: /LEFT/i.test(node.array_join_op ?? ''), items }
    }

    for (const slot of slots) {
      if (isSlot(slot)) {
        this.resolveAlias(slot, scope)
        select.items.push(slot.item)
      } else {
        select.items.push(...this.selectItem(slot as Node, scope))
      }
    }

    const where = [node.prewhere, node.where]
      .filter((n): n is Node => !!n)
      .map((n) => asFilter(this.expr(n, scope)))
    if (where.length === 1) select.where = where[0]
    if (where.length > 1) select.where = { k: 'and', items: where, type: 'UInt8' }
    if (node.group_by?.length) select.groupBy = node.group_by.map((n) => positional(this, n, scope))
    if (node.having) select.having = asFilter(this.expr(node.having, scope))
    if (
      select.having &&
      !select.groupBy &&
      select.items.some((i) => !hasAggregate(i.expr) && !isConstant(i.expr))
    ) {
      throw new HogQLError(
        'not_supported',
        'HAVING without GROUP BY needs every selected column to be an aggregate (or add GROUP BY)',
        span(node.having!),
      )
    }
    if (windowNodes.length) {
      select.windows = Object.fromEntries(
        windowNodes.map(([name, w]) => [name, resolveWindowSpec(this, w, scope)]),
      )
    }
    if (node.order_by?.length) {
      select.orderBy = node.order_by.map((o): OrderItem => ({
        expr: positional(this, o.expr, scope),
        desc: o.order === 'DESC',
      }))
    }
    if (node.limit) {
      const v = limitValue(this, node.limit, scope, 'LIMIT')
      if (typeof v === 'number') select.limit = v
      else select.limitExpr = v
    }
    if (node.limit_with_ties) select.withTies = true
    if (node.offset) {
      const v = limitValue(this, node.offset, scope, 'OFFSET')
      if (typeof v === 'number') select.offset = v
      else select.offsetExpr = v
    }
    if (node.limit_by) {
      select.limitBy = {
        n: constInt(this, node.limit_by.n, scope, 'LIMIT BY'),
        offset: node.limit_by.offset_value
          ? constInt(this, node.limit_by.offset_value, scope, 'LIMIT BY')
          : undefined,
        exprs: node.limit_by.exprs.map((e) => this.expr(e, scope)),
      }
    }
    bundleJoinedLazies(this, select)
    select.aggregating =
      !!select.groupBy ||
      select.items.some((i) => hasAggregate(i.expr)) ||
      (!!select.having && hasAggregate(select.having))
    return select
  }

  private selectItem(node: Node, scope: Scope): SelectItem[] {
    if (node.node === 'Field') {
      const chain = (node as FieldNode).chain.map(String)
      if (chain[chain.length - 1] === '*') return asterisk(this, chain.slice(0, -1), scope, span(node))
      return [{ name: chain[chain.length - 1]!, expr: this.expr(node, scope) }]
    }
    return [{ name: this.text(node), expr: this.expr(node, scope) }]
  }
}

function outputWidth(q: Query): number {
  return outputItems(q).filter((i) => !i.hidden).length
}

function isSlot(x: AliasSlot | Node): x is AliasSlot {
  return 'state' in x && 'item' in x
}

// Alias nodes inside an expression, not descending into subqueries or lambdas (their own scopes).
function nestedAliases(node: Node, out: Node[] = []): Node[] {
  if (node.node === 'SelectQuery' || node.node === 'SelectSetQuery' || node.node === 'Lambda') return out
  if (node.node === 'Alias') out.push(node)
  for (const v of Object.values(node)) {
    for (const child of Array.isArray(v) ? v : [v]) {
      if (child && typeof child === 'object' && typeof (child as Node).node === 'string')
        nestedAliases(child as Node, out)
    }
  }
  return out
}

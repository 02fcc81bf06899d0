import type { HogQLParser } from '@posthog/hogql-parser'
import {
  type CTENode,
  type FieldNode,
  type JoinExprNode,
  type Node,
  type QueryNode,
  type SelectQueryNode,
  span,
} from './ast.ts'
import { coerceCompare, constantsOf, constType } from './coerce.ts'
import { materializedProperties } from './materialized.ts'
import { HogQLError, type Span } from './errors.ts'
import { type FnDef, isDateTimeType, isDateType, isNumericType, lookupFunction } from './functions.ts'
import type { Expr, OrderItem, Query, Select, SelectItem, SetQuery, Source } from './ir.ts'
import { parseExpr } from './parse.ts'
import { type FieldDef, lookupField, TABLES, type TableDef, userTable } from './schema.ts'

// Name resolution: turns the parser's AST into the IR, binding every name and checking every
// function against the allow-list. Semantics follow HogQL: select aliases are visible in all
// clauses, `alias.field` qualifies, an unqualified field must belong to exactly one table.

export interface ResolveOptions {
  teamId: number
  tz: string
  values: Record<string, unknown>
  /** event property → materialized column of `events` */
  materialized?: ReadonlyMap<string, string>
}

interface AliasSlot {
  node: Node
  item: SelectItem
  state: 'pending' | 'resolving' | 'done'
}

interface CteEntry {
  node: CTENode
  // CTEs visible where this one was defined (it may use earlier ones, never itself).
  scope: Map<string, CteEntry>
}

interface Scope {
  select: Select
  ctes: Map<string, CteEntry>
  aliases: Map<string, AliasSlot>
  arrayJoinAliases: Set<string>
  lambdas: string[][]
  // Set while resolving a schema expression field: names resolve on this source only.
  internal?: Source
  cteColumnsResolving: Set<string>
}

const NUMERIC_OPS: Record<string, string> = { '+': '+', '-': '-', '*': '*', '/': '/', '%': '%' }

export class Resolver {
  private nextId = 1
  private exprCache = new Map<string, Node>()

  private readonly materialized: ReadonlyMap<string, string>

  constructor(
    private parser: HogQLParser,
    private opts: ResolveOptions,
  ) {
    this.materialized = opts.materialized ?? materializedProperties()
  }

  resolveQuery(node: Node, ctes: Map<string, CteEntry> = new Map()): Query {
    if (node.node === 'SelectQuery') return this.resolveSelect(node as SelectQueryNode, ctes)
    if (node.node === 'SelectSetQuery') return this.resolveSet(node as QueryNode, ctes)
    throw new HogQLError('syntax_error', `Expected a SELECT query, got ${node.node}`, span(node))
  }

  private resolveSet(node: QueryNode, ctes: Map<string, CteEntry>): Query {
    if (node.node !== 'SelectSetQuery') return this.resolveQuery(node, ctes)
    let current: Query = this.resolveQuery(node.initial_select_query, ctes)
    for (const next of node.subsequent_select_queries) {
      const q = this.resolveQuery(next.select_query, ctes)
      const op = next.set_operator.toUpperCase()
      if (op === 'UNION ALL') {
        if (current.k === 'set' && !current.distinct) current.queries.push(q)
        else current = { k: 'set', queries: [current, q], distinct: false }
      } else if (op === 'UNION DISTINCT' || op === 'UNION') {
        current = { k: 'set', queries: [current, q], distinct: true }
      } else {
        throw new HogQLError('not_supported', `${op} is not supported`, span(next.select_query))
      }
    }
    const set = current as SetQuery
    const width = outputWidth(set.queries[0]!)
    for (const q of set.queries) {
      if (outputWidth(q) !== width) {
        throw new HogQLError(
          'syntax_error',
          'All parts of a UNION must select the same number of columns',
          span(node),
        )
      }
    }
    return current
  }

  private resolveSelect(node: SelectQueryNode, outerCtes: Map<string, CteEntry>): Select {
    for (const [key, label] of [
      ['qualify', 'QUALIFY'],
      ['window_exprs', 'WINDOW'],
    ] as const) {
      if (node[key]) throw new HogQLError('not_supported', `${label} is not supported`, span(node))
    }
    if (node.limit_with_ties)
      throw new HogQLError('not_supported', 'LIMIT ... WITH TIES is not supported', span(node))

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
    }

    if (node.select_from) this.resolveJoins(node.select_from, scope)

    if (node.array_join_list?.length) {
      const items = node.array_join_list.map((a) => {
        if (a.node !== 'Alias') throw new HogQLError('syntax_error', 'ARRAY JOIN needs an alias', span(a))
        const expr = this.expr(a.expr, scope)
        scope.arrayJoinAliases.add(a.alias)
        return { expr, alias: a.alias as string }
      })
      select.arrayJoin = { left: /LEFT/i.test(node.array_join_op ?? ''), items }
    }

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
    for (const slot of slots) {
      if (isSlot(slot)) {
        this.resolveAlias(slot, scope)
        select.items.push(slot.item)
      } else {
        select.items.push(...this.selectItem(slot as Node, scope))
      }
    }

    const where = [node.prewhere, node.where].filter((n): n is Node => !!n).map((n) => this.expr(n, scope))
    if (where.length === 1) select.where = where[0]
    if (where.length > 1) select.where = { k: 'and', items: where, type: 'UInt8' }
    if (node.group_by?.length) select.groupBy = node.group_by.map((n) => this.positional(n, scope))
    if (node.having) select.having = this.expr(node.having, scope)
    if (node.order_by?.length) {
      select.orderBy = node.order_by.map((o): OrderItem => ({
        expr: this.positional(o.expr, scope),
        desc: o.order === 'DESC',
      }))
    }
    if (node.limit) select.limit = this.constInt(node.limit, scope, 'LIMIT')
    if (node.offset) select.offset = this.constInt(node.offset, scope, 'OFFSET')
    if (node.limit_by) {
      select.limitBy = {
        n: this.constInt(node.limit_by.n, scope, 'LIMIT BY'),
        offset: node.limit_by.offset_value
          ? this.constInt(node.limit_by.offset_value, scope, 'LIMIT BY')
          : undefined,
        exprs: node.limit_by.exprs.map((e) => this.expr(e, scope)),
      }
    }
    select.aggregating =
      !!select.groupBy ||
      select.items.some((i) => hasAggregate(i.expr)) ||
      (!!select.having && hasAggregate(select.having))
    return select
  }

  // ---- FROM / JOIN ------------------------------------------------------------------------

  private resolveJoins(first: JoinExprNode, scope: Scope): void {
    let join: JoinExprNode | null = first
    let index = 0
    while (join) {
      const source = this.source(join, scope)
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
          source.on =
            c.constraint_type === 'USING' ? this.using(c.expr, source, scope) : this.expr(c.expr, scope)
          checkEquiJoin(source, scope.select, c.expr)
        }
      }
      join = join.next_join
      index++
    }
  }

  private source(join: JoinExprNode, scope: Scope): Source {
    const s = span(join.table ?? join)
    if (join.sample) throw new HogQLError('not_supported', 'SAMPLE is not supported', span(join.sample))
    if (join.column_aliases?.length) {
      throw new HogQLError('not_supported', 'Column aliases on tables are not supported', span(join))
    }
    const table = join.table
    if (!table) throw new HogQLError('syntax_error', 'Missing table', s)
    if (table.node === 'Field') {
      const chain = (table as FieldNode).chain.map(String)
      const name = chain.join('.')
      if (join.table_args) {
        throw new HogQLError('table_function_not_allowed', `Table functions are not allowed: ${name}()`, s)
      }
      if (chain.length === 1) {
        const cte = scope.ctes.get(name)
        if (cte && cte.node.cte_type !== 'column') {
          const query = this.resolveQuery(cte.node.expr, cte.scope)
          return this.querySource(query, join.alias ?? name, s)
        }
        const def = userTable(name)
        if (def) return this.tableSource(def, join.alias ?? name, s)
      }
      throw new HogQLError('unknown_table', `Unknown table '${name}'`, s)
    }
    if (table.node === 'SelectQuery' || table.node === 'SelectSetQuery') {
      const query = this.resolveQuery(table, scope.ctes)
      return this.querySource(query, join.alias ?? '', s)
    }
    throw new HogQLError('not_supported', `Unsupported table expression ${table.node}`, s)
  }

  private tableSource(table: TableDef, name: string, s: Span): Source {
    return { id: this.nextId++, name, kind: 'table', table, used: new Set(), span: s }
  }

  private querySource(query: Query, name: string, s: Span): Source {
    const src: Source = { id: this.nextId++, name, kind: 'query', query, used: new Set(), span: s }
    // Timestamps keep their milliseconds through a plain subquery: a hidden twin column carries them.
    if (query.k === 'select' && !query.aggregating && !query.distinct) {
      for (const item of [...query.items]) {
        const twin = msTwin(item.expr)
        if (!twin) continue
        query.items.push({ name: `${item.name}__ms`, expr: twin, hidden: true })
      }
    }
    return src
  }

  private using(expr: Node, right: Source, scope: Scope): Expr {
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
      const l = this.inSource(left[0]!, [name], scope, span(n), false)
      const r = this.inSource(right, [name], scope, span(n), false)
      return coerceCompare('=', l, r, this.opts.tz)
    })
    return parts.length === 1 ? parts[0]! : { k: 'and', items: parts, type: 'UInt8' }
  }

  // ---- select list -------------------------------------------------------------------------

  private resolveAlias(slot: AliasSlot, scope: Scope): void {
    if (slot.state === 'done') return
    slot.state = 'resolving'
    slot.item.expr = this.expr(slot.node, scope)
    slot.state = 'done'
  }

  private selectItem(node: Node, scope: Scope): SelectItem[] {
    if (node.node === 'Field') {
      const chain = (node as FieldNode).chain.map(String)
      if (chain[chain.length - 1] === '*') return this.asterisk(chain.slice(0, -1), scope, span(node))
      return [{ name: chain[chain.length - 1]!, expr: this.expr(node, scope) }]
    }
    return [{ name: this.text(node), expr: this.expr(node, scope) }]
  }

  private asterisk(qualifier: string[], scope: Scope, s: Span): SelectItem[] {
    let sources = scope.select.sources.filter((src) => !src.parent)
    if (qualifier.length) {
      sources = sources.filter((src) => src.name === qualifier.join('.'))
      if (!sources.length) throw new HogQLError('unknown_table', `Unknown table '${qualifier.join('.')}'`, s)
    }
    if (!scope.select.sources.length) throw new HogQLError('syntax_error', 'SELECT * needs a FROM clause', s)
    const items: SelectItem[] = []
    for (const src of sources) {
      const names =
        src.kind === 'table'
          ? src.table!.asterisk
          : outputItemsOf(src.query!)
              .filter((i) => !i.hidden)
              .map((i) => i.name)
      for (const name of names) items.push({ name, expr: this.inSource(src, [name], scope, s, false) })
    }
    return items
  }

  private positional(node: Node, scope: Scope): Expr {
    // GROUP BY 1 / ORDER BY 2 name select items; 18.16 would read them as constants.
    if (node.node === 'Constant' && typeof node.value === 'number' && Number.isInteger(node.value)) {
      const item = scope.select.items[node.value - 1]
      if (!item || item.hidden)
        throw new HogQLError('syntax_error', `No select item number ${node.value}`, span(node))
      return { k: 'item', item, type: item.expr.type }
    }
    return this.expr(node, scope)
  }

  private constInt(node: Node, scope: Scope, what: string): number {
    const e = this.expr(node, scope)
    if (e.k !== 'const' || typeof e.value !== 'number' || !Number.isInteger(e.value) || e.value < 0) {
      throw new HogQLError('bad_limit', `${what} must be a non-negative whole number`, span(node))
    }
    return e.value
  }

  // ---- expressions -------------------------------------------------------------------------

  expr(node: Node, scope: Scope): Expr {
    switch (node.node) {
      case 'Constant':
        return { k: 'const', value: node.value, type: constType(node.value) }
      case 'Field':
        return this.field(node as FieldNode, scope)
      case 'Alias':
        // An alias inside an expression: HogQL allows it; we keep the expression, the name is local.
        return this.expr(node.expr, scope)
      case 'Placeholder':
        return this.placeholder(node)
      case 'ArithmeticOperation': {
        const op = NUMERIC_OPS[node.op as string]
        if (!op) throw new HogQLError('not_supported', `Unsupported operator ${node.op}`, span(node))
        const left = this.expr(node.left, scope)
        const right = this.expr(node.right, scope)
        return { k: 'op', op, left, right, type: arithmeticType(op, left.type, right.type) }
      }
      case 'CompareOperation':
        return this.compare(node, scope)
      case 'BetweenExpr': {
        const x = this.expr(node.expr, scope)
        const both: Expr = {
          k: 'and',
          items: [
            coerceCompare('>=', x, this.expr(node.low, scope), this.opts.tz),
            coerceCompare('<=', x, this.expr(node.high, scope), this.opts.tz),
          ],
          type: 'UInt8',
        }
        return node.negated ? { k: 'not', expr: both, type: 'UInt8' } : both
      }
      case 'And':
      case 'Or':
        return {
          k: node.node === 'And' ? 'and' : 'or',
          items: (node.exprs as Node[]).map((e) => this.expr(e, scope)),
          type: 'UInt8',
        }
      case 'Not':
        return { k: 'not', expr: this.expr(node.expr, scope), type: 'UInt8' }
      case 'Call':
        return this.call(node, scope)
      case 'Lambda': {
        const args = node.args as string[]
        scope.lambdas.push(args)
        try {
          return { k: 'lambda', args, body: this.expr(node.expr, scope), type: 'Unknown' }
        } finally {
          scope.lambdas.pop()
        }
      }
      case 'Array': {
        const items = (node.exprs as Node[]).map((e) => this.expr(e, scope))
        return { k: 'array', items, type: `Array(${items[0]?.type ?? 'Nothing'})` }
      }
      case 'Tuple': {
        const items = (node.exprs as Node[]).map((e) => this.expr(e, scope))
        return { k: 'tuple', items, type: `Tuple(${items.map((i) => i.type).join(', ')})` }
      }
      case 'ArrayAccess':
      case 'TupleAccess':
        return this.access(node, scope)
      case 'TypeCast':
        return this.typeCast(node, scope)
      case 'SelectQuery':
      case 'SelectSetQuery': {
        const query = this.resolveQuery(node, scope.ctes)
        const first = outputItemsOf(query)[0]
        return { k: 'subquery', query, type: first?.expr.type ?? 'Unknown' }
      }
      case 'WindowFunction':
        throw new HogQLError('not_supported', 'Window functions are not supported', span(node))
      default:
        throw new HogQLError('not_supported', `Unsupported expression: ${node.node}`, span(node))
    }
  }

  private text(node: Node): string {
    const start = node.start?.offset
    const end = node.end?.offset
    if (start !== undefined && end !== undefined && this.sourceText) return this.sourceText.slice(start, end)
    return node.node
  }

  sourceText = ''

  private placeholder(node: Node): Expr {
    const chain = node.expr?.node === 'Field' ? (node.expr as FieldNode).chain : undefined
    if (chain?.length !== 1) {
      throw new HogQLError('not_supported', 'Placeholders must be a single name, e.g. {name}', span(node))
    }
    const name = String(chain[0])
    if (!Object.hasOwn(this.opts.values, name)) {
      throw new HogQLError('missing_placeholder', `No value given for placeholder {${name}}`, span(node))
    }
    return valueToExpr(this.opts.values[name], span(node))
  }

  private compare(node: Node, scope: Scope): Expr {
    const op = node.op as string
    const left = this.expr(node.left, scope)
    if (op === 'in cohort' || op === 'not in cohort') {
      throw new HogQLError('not_supported', 'Cohorts are not supported', span(node))
    }
    const right = this.expr(node.right, scope)
    const map: Record<string, string> = {
      '==': '=',
      '!=': '!=',
      '<': '<',
      '<=': '<=',
      '>': '>',
      '>=': '>=',
      like: 'LIKE',
      'not like': 'NOT LIKE',
      ilike: 'ILIKE',
      'not ilike': 'NOT ILIKE',
      in: 'IN',
      'global in': 'IN',
      'not in': 'NOT IN',
      'global not in': 'NOT IN',
      '=~': '=~',
      '=~*': '=~*',
      '!~': '!~',
      '!~*': '!~*',
    }
    const mapped = map[op]
    if (!mapped) throw new HogQLError('not_supported', `Unsupported comparison ${op}`, span(node))
    return coerceCompare(mapped, left, right, this.opts.tz)
  }

  private call(node: Node, scope: Scope): Expr {
    const name = node.name as string
    const s = span(node)
    if (name === 'not' && (node.args as Node[]).length === 1) {
      return { k: 'not', expr: this.expr(node.args[0], scope), type: 'UInt8' }
    }
    let fn = lookupFunction(name)
    if (!fn) throw new HogQLError('function_not_allowed', `Function '${name}' is not available in HogQL`, s)
    let argNodes = (node.args ?? []) as Node[]
    // count(*) is count()
    if (
      fn.agg &&
      argNodes.length === 1 &&
      argNodes[0]!.node === 'Field' &&
      (argNodes[0] as FieldNode).chain.join('.') === '*'
    ) {
      argNodes = []
    }
    const args = argNodes.map((a) => this.expr(a, scope))
    let fnName = name
    if (node.distinct) {
      if (fnName.toLowerCase() !== 'count') {
        throw new HogQLError('not_supported', `${name}(DISTINCT ...) is not supported; try uniqExact`, s)
      }
      fn = lookupFunction('uniqExact')!
      fnName = 'uniqExact'
    }
    if (node.filter_expr) {
      const base = fnName.toLowerCase() === 'count' ? 'count' : fnName
      const withIf = lookupFunction(`${base}If`)
      if (!fn.agg || !withIf) throw new HogQLError('not_supported', `FILTER is not supported for ${name}`, s)
      fn = withIf
      fnName = `${base}If`
      args.push(this.expr(node.filter_expr, scope))
    }
    if (args.length < fn.min || args.length > fn.max) {
      throw new HogQLError('bad_arity', arityMessage(name, fn, args.length), s)
    }
    const params = node.params ? (node.params as Node[]).map((p) => this.expr(p, scope)) : undefined
    if (params && !fn.params) throw new HogQLError('bad_arity', `Function '${name}' takes no parameters`, s)
    if (fn.params && (params?.length ?? 0) < fn.params[0]) {
      throw new HogQLError(
        'bad_arity',
        `Function '${name}' needs ${fn.params[0]} parameter(s), e.g. quantile(0.5)(x)`,
        s,
      )
    }
    if (fn.params && (params?.length ?? 0) > fn.params[1]) {
      throw new HogQLError('bad_arity', `Function '${name}' takes at most ${fn.params[1]} parameter(s)`, s)
    }
    const argTypes = args.map((a) => a.type)
    const type = typeof fn.ret === 'function' ? fn.ret(argTypes) : (fn.ret ?? 'Unknown')
    return { k: 'call', fn, name: fnName, args, params, type: fixTz(type, this.opts.tz), span: s }
  }

  private access(node: Node, scope: Scope): Expr {
    // properties.a['b'].c and friends: gather the whole path first so it becomes one exact key.
    const chain = accessChain(node)
    if (chain) {
      const field = this.tryField(chain.base, scope, span(node), chain.path)
      if (field) return field
    }
    if (node.node === 'ArrayAccess') {
      const arr = this.expr(node.array, scope)
      const idx = this.expr(node.property, scope)
      const fn = lookupFunction('arrayElement')!
      const type = /^Array\((.*)\)$/.exec(arr.type)?.[1] ?? 'Unknown'
      return { k: 'call', fn, name: 'arrayElement', args: [arr, idx], type, span: span(node) }
    }
    const tuple = this.expr(node.tuple, scope)
    const fn = lookupFunction('tupleElement')!
    return {
      k: 'call',
      fn,
      name: 'tupleElement',
      args: [tuple, { k: 'const', value: node.index as number, type: 'UInt64' }],
      type: 'Unknown',
      span: span(node),
    }
  }

  private typeCast(node: Node, scope: Scope): Expr {
    const target: Record<string, string> = {
      string: 'toString',
      text: 'toString',
      varchar: 'toString',
      int: 'toInt',
      integer: 'toInt',
      int64: 'toInt',
      bigint: 'toInt',
      float: 'toFloat',
      float64: 'toFloat',
      double: 'toFloat',
      date: 'toDate',
      datetime: 'toDateTime',
      timestamp: 'toDateTime',
      uuid: 'toUUID',
    }
    const fnName = target[String(node.type_name).toLowerCase()]
    if (!fnName) throw new HogQLError('not_supported', `Cannot cast to ${node.type_name}`, span(node))
    return this.call(
      { node: 'Call', name: fnName, args: [node.expr], start: node.start, end: node.end },
      scope,
    )
  }

  // ---- fields ------------------------------------------------------------------------------

  private field(node: FieldNode, scope: Scope): Expr {
    const chain = node.chain.map(String)
    const s = span(node)
    if (chain.includes('*')) throw new HogQLError('syntax_error', '* is only allowed in the select list', s)
    const found = this.tryField(chain, scope, s, [])
    if (found) return found
    throw new HogQLError('unknown_field', `Unknown field '${chain.join('.')}'`, s)
  }

  // `path` holds accessors that followed the field ([...] or .1); they only make sense on properties.
  private tryField(chain: string[], scope: Scope, s: Span, path: (string | number)[]): Expr | undefined {
    const whole = [...chain, ...path.map(String)]
    const head = chain[0]!
    const plain = (e: Expr): Expr | undefined => (path.length ? undefined : e)

    if (scope.internal) return this.inSource(scope.internal, whole, scope, s, true, path)

    for (const frame of scope.lambdas) {
      if (frame.includes(head))
        return chain.length === 1 ? plain({ k: 'ident', name: head, type: 'Unknown' }) : undefined
    }
    if (chain.length === 1) {
      if (scope.arrayJoinAliases.has(head)) return plain({ k: 'ident', name: head, type: 'Unknown' })
      const slot = scope.aliases.get(head)
      if (slot && slot.state !== 'resolving') {
        this.resolveAlias(slot, scope)
        return plain({ k: 'item', item: slot.item, type: slot.item.expr.type })
      }
      const cte = scope.ctes.get(head)
      if (cte && cte.node.cte_type === 'column' && !scope.cteColumnsResolving.has(head)) {
        scope.cteColumnsResolving.add(head)
        try {
          return plain(this.expr(cte.node.expr, scope))
        } finally {
          scope.cteColumnsResolving.delete(head)
        }
      }
    }
    const sources = scope.select.sources.filter((src) => !src.parent)
    if (chain.length > 1) {
      const named = sources.find((src) => src.name === head)
      if (named) return this.inSource(named, whole.slice(1), scope, s, false, path)
    }
    const owners = sources.filter((src) => hasField(src, head))
    if (owners.length > 1) {
      throw new HogQLError('ambiguous_field', `Field '${head}' exists in more than one table; qualify it`, s)
    }
    if (owners.length === 1) return this.inSource(owners[0]!, whole, scope, s, false, path)
    return undefined
  }

  private inSource(
    src: Source,
    chain: string[],
    scope: Scope,
    s: Span,
    internal: boolean,
    path: (string | number)[] = [],
  ): Expr {
    const name = chain[0]!
    if (src.kind === 'query') {
      const item = outputItemsOf(src.query!).find((i) => i.name === name && !i.hidden)
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
      const twin = outputItemsOf(src.query!).find((i) => i.hidden && i.name === `${name}__ms`)
      if (twin) src.used.add(twin.name)
      return { k: 'col', src, column: name, type: item.expr.type, ms: twin?.name }
    }
    const table = src.table!
    const def: FieldDef | undefined = lookupField(table, name, internal)
    if (!def)
      throw new HogQLError('unknown_field', `Unknown field '${name}' on '${src.name || table.name}'`, s)
    const rest = chain.slice(1)
    switch (def.kind) {
      case 'column': {
        if (rest.length)
          throw new HogQLError('unknown_field', `'${name}' has no field '${rest.join('.')}'`, s)
        src.used.add(def.column)
        if (def.ms) src.used.add(def.ms)
        const type = def.type === 'DateTime' ? fixTz('DateTime', this.opts.tz) : def.type
        return { k: 'col', src, column: def.column, type, ms: def.ms, tz: def.type === 'DateTime' }
      }
      case 'properties': {
        if (!rest.length) {
          src.used.add(def.raw)
          return { k: 'col', src, column: def.raw, type: 'String' }
        }
        if (path.some((p) => typeof p === 'number')) {
          throw new HogQLError('not_supported', 'Array indexes inside properties are not supported', s)
        }
        const materialized =
          table.name === 'events' && rest.length === 1 ? this.materialized.get(String(rest[0])) : undefined
        if (materialized) {
          src.used.add(materialized)
          return { k: 'col', src, column: materialized, type: 'Nullable(String)' }
        }
        src.used.add(def.keys)
        src.used.add(def.values)
        // Nested object paths are stored with their keys joined by the unit separator.
        return {
          k: 'prop',
          src,
          keys: def.keys,
          values: def.values,
          key: rest.join('\x1F'),
          type: 'Nullable(String)',
        }
      }
      case 'expression': {
        if (rest.length)
          throw new HogQLError('unknown_field', `'${name}' has no field '${rest.join('.')}'`, s)
        const e = this.internalExpr(def.expr, src, scope)
        return { ...e, type: def.type } as Expr
      }
      case 'join': {
        if (!rest.length)
          throw new HogQLError('unknown_field', `'${name}' is a table; select a field of it`, s)
        // person.id is the join key itself: no join needed.
        if (rest.length === 1 && rest[0] === def.to) return this.internalExpr(def.from, src, scope)
        const lazy = this.lazySource(src, name, def, scope, s)
        return this.inSource(lazy, rest, scope, s, internal, path)
      }
    }
  }

  private internalExpr(text: string, src: Source, scope: Scope): Expr {
    let node = this.exprCache.get(text)
    if (!node) {
      node = parseExpr(this.parser, text)
      this.exprCache.set(text, node)
    }
    return this.expr(node, { ...scope, internal: src, lambdas: [] })
  }

  private lazySource(
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
      id: this.nextId++,
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
    const from = this.internalExpr(def.from, parent, scope)
    const to = this.inSource(lazy, [def.to], scope, s, true)
    lazy.on = { k: 'op', op: '=', left: from, right: to, type: 'UInt8' }
    let at = sources.indexOf(parent)
    for (let i = at + 1; i < sources.length; i++) {
      if (descendsFrom(sources[i]!, parent)) at = i
    }
    sources.splice(at + 1, 0, lazy)
    return lazy
  }
}

// ---- helpers ---------------------------------------------------------------------------------

function outputItemsOf(q: Query): SelectItem[] {
  return q.k === 'select' ? q.items : outputItemsOf(q.queries[0]!)
}

function outputWidth(q: Query): number {
  return outputItemsOf(q).filter((i) => !i.hidden).length
}

function isSlot(x: AliasSlot | Node): x is AliasSlot {
  return 'state' in x && 'item' in x
}

function descendsFrom(src: Source, ancestor: Source): boolean {
  for (let p = src.parent; p; p = p.parent) if (p === ancestor) return true
  return false
}

function hasField(src: Source, name: string): boolean {
  if (src.kind === 'query') return outputItemsOf(src.query!).some((i) => i.name === name && !i.hidden)
  return !!lookupField(src.table!, name, false)
}

function msTwin(e: Expr): Expr | undefined {
  if (e.k === 'item') return msTwin(e.item.expr)
  if (e.k === 'col' && e.ms) {
    e.src.used.add(e.ms)
    return { k: 'col', src: e.src, column: e.ms, type: 'Int64' }
  }
  return undefined
}

export function hasAggregate(e: Expr): boolean {
  switch (e.k) {
    case 'call':
      return !!e.fn.agg || e.args.some(hasAggregate)
    case 'op':
      return hasAggregate(e.left) || hasAggregate(e.right)
    case 'and':
    case 'or':
    case 'array':
    case 'tuple':
      return e.items.some(hasAggregate)
    case 'not':
      return hasAggregate(e.expr)
    case 'item':
      return hasAggregate(e.item.expr)
    case 'lambda':
      return hasAggregate(e.body)
    case 'template':
      return e.args.some(hasAggregate)
    default:
      return false
  }
}

function fixTz(type: string, tz: string): string {
  return type === 'DateTime' ? `DateTime('${tz.replace(/'/g, '')}')` : type
}

function arithmeticType(op: string, l: string, r: string): string {
  if (isDateTimeType(l) || isDateType(l)) return l
  if (isDateTimeType(r) || isDateType(r)) return r
  if (op === '/') return 'Float64'
  if (isNumericType(l) && isNumericType(r)) return /Float/.test(l + r) ? 'Float64' : 'Int64'
  return 'Unknown'
}

function arityMessage(name: string, fn: FnDef, got: number): string {
  const want =
    fn.min === fn.max
      ? `${fn.min}`
      : fn.max === Number.POSITIVE_INFINITY
        ? `at least ${fn.min}`
        : `${fn.min} to ${fn.max}`
  return `Function '${name}' takes ${want} argument(s), got ${got}`
}

function normalizeJoinType(raw: string, node: Node): string {
  const t = raw.toUpperCase().replace(/\s+/g, ' ').replace('OUTER ', '').trim()
  const known: Record<string, string> = {
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
    'CROSS JOIN': 'CROSS JOIN',
  }
  const out = known[t]
  // 18.16 cannot return the right table's join key from RIGHT/FULL joins; LEFT JOIN with the tables
  // swapped says the same thing and runs everywhere.
  if (/RIGHT|FULL/.test(t)) {
    throw new HogQLError(
      'not_supported',
      `${raw} is not supported; swap the tables and use LEFT JOIN`,
      span(node),
    )
  }
  if (!out) throw new HogQLError('not_supported', `${raw} is not supported`, span(node))
  return out
}

// 18.16 evaluates JOIN ON as hash-join keys: each condition must be `left side = right side`.
// Anything else reads garbage or crashes the server there, so it is refused here.
function checkEquiJoin(right: Source, select: Select, node: Node): void {
  const conds = right.on!.k === 'and' ? right.on!.items : [right.on!]
  const rightSet = new Set<Source>()
  for (const s of select.sources) if (s === right || descendsFrom(s, right)) rightSet.add(s)
  for (const c of conds) {
    const ok =
      c.k === 'op' &&
      c.op === '=' &&
      (() => {
        const l = sourcesOf(c.left)
        const r = sourcesOf(c.right)
        if (!l.size || !r.size) return false
        const lRight = [...l].every((s) => rightSet.has(s))
        const lLeft = [...l].every((s) => !rightSet.has(s))
        const rRight = [...r].every((s) => rightSet.has(s))
        const rLeft = [...r].every((s) => !rightSet.has(s))
        return (lLeft && rRight) || (lRight && rLeft)
      })()
    if (!ok) {
      throw new HogQLError(
        'not_supported',
        'JOIN conditions must be equalities between a column of the left side and one of the right side',
        span(node),
      )
    }
  }
}

export function sourcesOf(e: Expr, out = new Set<Source>()): Set<Source> {
  switch (e.k) {
    case 'col':
    case 'prop':
      out.add(e.src)
      break
    case 'call':
      for (const a of e.args) sourcesOf(a, out)
      break
    case 'op':
      sourcesOf(e.left, out)
      sourcesOf(e.right, out)
      break
    case 'and':
    case 'or':
    case 'array':
    case 'tuple':
      for (const a of e.items) sourcesOf(a, out)
      break
    case 'not':
      sourcesOf(e.expr, out)
      break
    case 'item':
      sourcesOf(e.item.expr, out)
      break
    case 'lambda':
      sourcesOf(e.body, out)
      break
    case 'template':
      for (const a of e.args) sourcesOf(a, out)
      break
  }
  return out
}

interface AccessChain {
  base: string[]
  path: (string | number)[]
}

function accessChain(node: Node): AccessChain | undefined {
  const path: (string | number)[] = []
  let cur: Node = node
  while (cur.node === 'ArrayAccess' || cur.node === 'TupleAccess') {
    if (cur.node === 'TupleAccess') {
      path.unshift(cur.index as number)
      cur = cur.tuple
    } else {
      const p = cur.property as Node
      if (p.node !== 'Constant' || (typeof p.value !== 'string' && typeof p.value !== 'number'))
        return undefined
      path.unshift(p.value)
      cur = cur.array
    }
  }
  if (cur.node !== 'Field') return undefined
  return { base: (cur as FieldNode).chain.map(String), path }
}

function valueToExpr(value: unknown, s: Span): Expr {
  if (value === null || value === undefined) return { k: 'const', value: null, type: 'Nullable(Nothing)' }
  if (typeof value === 'string' || typeof value === 'boolean')
    return { k: 'const', value, type: constType(value) }
  if (typeof value === 'number') {
    if (!Number.isFinite(value))
      throw new HogQLError('bad_argument', 'Placeholder values must be finite numbers', s)
    return { k: 'const', value, type: constType(value) }
  }
  if (typeof value === 'bigint') return { k: 'const', value: Number(value), type: 'Int64' }
  if (value instanceof Date) {
    return { k: 'const', value: value.toISOString(), type: 'String' }
  }
  if (Array.isArray(value)) {
    const items = value.map((v) => valueToExpr(v, s))
    return { k: 'array', items, type: `Array(${items[0]?.type ?? 'Nothing'})` }
  }
  throw new HogQLError(
    'bad_argument',
    'Placeholder values must be strings, numbers, booleans, dates or arrays',
    s,
  )
}

export { constantsOf }

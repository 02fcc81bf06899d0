import { type FieldNode, type Node, span } from './ast.ts'
import { coerceCompare, constType } from './coerce.ts'
import { HogQLError, type Span } from './errors.ts'
import {
  type FnDef,
  isDateTimeType,
  isDateType,
  isNumericType,
  isStringType,
  functionKey,
  lookupFunction,
  withTimeZone,
} from './functions.ts'
import { hasAggregate } from './analysis.ts'
import { type Expr, outputItems } from './ir.ts'
import { maybeNull } from './nulls.ts'
import type { Resolution, Scope } from './resolve-context.ts'
import { access, tupleAccess } from './resolve-access.ts'
import { resolveWindowFunction } from './resolve-windows.ts'
import { parseExpr } from './parse.ts'
import { actionExpression, cohortSubquery } from './catalog.ts'

// Expressions: every AST expression node becomes an IR expression with a (best effort) ClickHouse
// type; functions are checked against the allow-list and their arity here.

const NUMERIC_OPS: Record<string, string> = { '+': '+', '-': '-', '*': '*', '/': '/', '%': '%' }

const COMPARISONS: Record<string, string> = {
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

const CASTS: Record<string, string> = {
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

/** Resolves one expression node in `scope`; refuses what HogQL (or Burrow) does not support. */
export function resolveExpr(r: Resolution, node: Node, scope: Scope): Expr {
  const tz = r.opts.tz
  switch (node.node) {
    case 'Constant':
      return { k: 'const', value: node.value, type: constType(node.value) }
    case 'Field':
      return field(r, node as FieldNode, scope)
    case 'Alias':
      // An alias inside an expression: HogQL allows it; we keep the expression, the name is local.
      return r.expr(node.expr, scope)
    case 'Placeholder':
      return placeholder(r, node, scope)
    case 'ArithmeticOperation': {
      const op = NUMERIC_OPS[node.op as string]
      if (!op) throw new HogQLError('not_supported', `Unsupported operator ${node.op}`, span(node))
      const left = r.expr(node.left, scope)
      const right = r.expr(node.right, scope)
      return { k: 'op', op, left, right, type: arithmeticType(op, left.type, right.type) }
    }
    case 'CompareOperation':
      return compare(r, node, scope)
    case 'BetweenExpr': {
      const x = r.expr(node.expr, scope)
      const both: Expr = {
        k: 'and',
        items: [
          coerceCompare('>=', x, r.expr(node.low, scope), tz),
          coerceCompare('<=', x, r.expr(node.high, scope), tz),
        ],
        type: 'UInt8',
      }
      return node.negated ? { k: 'not', expr: both, type: 'UInt8' } : both
    }
    case 'And':
    case 'Or':
      return {
        k: node.node === 'And' ? 'and' : 'or',
        items: (node.exprs as Node[]).map((e) => r.expr(e, scope)),
        type: 'UInt8',
      }
    case 'Not':
      return { k: 'not', expr: r.expr(node.expr, scope), type: 'UInt8' }
    case 'Call':
      return call(r, node, scope)
    case 'Lambda': {
      const args = node.args as string[]
      scope.lambdas.push(args)
      try {
        return { k: 'lambda', args, body: r.expr(node.expr, scope), type: 'Unknown' }
      } finally {
        scope.lambdas.pop()
      }
    }
    case 'Array': {
      const items = (node.exprs as Node[]).map((e) => r.expr(e, scope))
      return { k: 'array', items, type: `Array(${items[0]?.type ?? 'Nothing'})` }
    }
    case 'Tuple': {
      const items = (node.exprs as Node[]).map((e) => r.expr(e, scope))
      return { k: 'tuple', items, type: `Tuple(${items.map((i) => i.type).join(', ')})` }
    }
    case 'ArrayAccess':
    case 'TupleAccess':
      return access(r, node, scope)
    case 'TypeCast': {
      const fnName = CASTS[String(node.type_name).toLowerCase()]
      if (!fnName) throw new HogQLError('not_supported', `Cannot cast to ${node.type_name}`, span(node))
      return call(
        r,
        { node: 'Call', name: fnName, args: [node.expr], start: node.start, end: node.end },
        scope,
      )
    }
    case 'SelectQuery':
    case 'SelectSetQuery': {
      const query = r.query(node, scope.ctes)
      const first = outputItems(query)[0]
      return { k: 'subquery', query, type: first?.expr.type ?? 'Unknown' }
    }
    case 'WindowFunction':
      return resolveWindowFunction(r, node, scope)
    default:
      throw new HogQLError('not_supported', `Unsupported expression: ${node.node}`, span(node))
  }
}

/** GROUP BY 1 / ORDER BY 2 name select items (printed as the item's alias, not as a position). */
export function positional(r: Resolution, node: Node, scope: Scope): Expr {
  if (node.node === 'Constant' && typeof node.value === 'number' && Number.isInteger(node.value)) {
    const item = scope.select.items[node.value - 1]
    if (!item || item.hidden) {
      throw new HogQLError('syntax_error', `No select item number ${node.value}`, span(node))
    }
    return { k: 'item', item, type: item.expr.type }
  }
  return r.expr(node, scope)
}

/** A LIMIT/OFFSET-like clause value: a constant non-negative whole number. */
export function constInt(r: Resolution, node: Node, scope: Scope, what: string): number {
  const e = r.expr(node, scope)
  if (e.k !== 'const' || typeof e.value !== 'number' || !Number.isInteger(e.value) || e.value < 0) {
    throw new HogQLError('bad_limit', `${what} must be a non-negative whole number`, span(node))
  }
  return e.value
}

function field(r: Resolution, node: FieldNode, scope: Scope): Expr {
  const chain = node.chain.map(String)
  const s = span(node)
  if (chain.includes('*')) throw new HogQLError('syntax_error', '* is only allowed in the select list', s)
  const tuple = tupleAccess(r, chain, scope, s)
  if (tuple) return tuple
  const found = r.tryField(chain, scope, s, [])
  if (found) return found
  throw new HogQLError('unknown_field', `Unknown field '${chain.join('.')}'`, s)
}

function placeholder(r: Resolution, node: Node, scope: Scope): Expr {
  const chain = node.expr?.node === 'Field' ? (node.expr as FieldNode).chain : undefined
  if (chain?.length !== 1) {
    throw new HogQLError('not_supported', 'Placeholders must be a single name, e.g. {name}', span(node))
  }
  const name = String(chain[0])
  // PostHog's {filters}: the given filters' condition on this SELECT's events, true without filters.
  if (name === 'filters' && !Object.hasOwn(r.opts.values, name)) {
    if (!scope.select.sources.some((src) => !src.parent && src.table?.name === 'events')) {
      throw new HogQLError(
        'not_supported',
        "Cannot use the 'filters' placeholder in a SELECT that does not select from the events table",
        span(node),
      )
    }
    if (r.opts.filters === undefined) return { k: 'const', value: true, type: 'UInt8' }
    return r.expr(parseExpr(r.parser, r.opts.filters), scope)
  }
  if (!Object.hasOwn(r.opts.values, name)) {
    throw new HogQLError('missing_placeholder', `No value given for placeholder {${name}}`, span(node))
  }
  return valueToExpr(r.opts.values[name], span(node))
}

function compare(r: Resolution, node: Node, scope: Scope): Expr {
  const op = node.op as string
  const left = r.expr(node.left, scope)
  if (op === 'in cohort' || op === 'not in cohort') {
    // `x IN COHORT 5` is `x IN (the cohort's person ids)`, resolved in the user's scope
    const sub = cohortSubquery(r.opts.catalog, node.right as Node, span(node.right))
    const members = r.expr(internalExpr(r, sub), scope)
    return coerceCompare(op === 'in cohort' ? 'IN' : 'NOT IN', left, members, r.opts.tz)
  }
  const right = r.expr(node.right, scope)
  const mapped = COMPARISONS[op]
  if (!mapped) throw new HogQLError('not_supported', `Unsupported comparison ${op}`, span(node))
  return coerceCompare(mapped, left, right, r.opts.tz)
}

// Expansions of cohorts and actions are parsed once per text: an action's condition can be long, and
// PostHog's parser takes milliseconds for it.
const expansions = new Map<string, Node>()
const MAX_EXPANSIONS = 2000

function internalExpr(r: Resolution, text: string): Node {
  let node = expansions.get(text)
  if (!node) {
    node = parseExpr(r.parser, text)
    if (expansions.size >= MAX_EXPANSIONS) expansions.clear()
    expansions.set(text, node)
  }
  return node
}

function call(r: Resolution, node: Node, scope: Scope): Expr {
  const name = node.name as string
  const s = span(node)
  // PostHog's matchesAction(id | 'name'): the action's condition on this SELECT's events
  if (name === 'matchesAction') {
    const args = (node.args ?? []) as Node[]
    if (args.length !== 1)
      throw new HogQLError('bad_arity', `Function '${name}' takes 1 argument(s), got ${args.length}`, s)
    return r.expr(internalExpr(r, actionExpression(r.opts.catalog, args[0]!, span(args[0]))), scope)
  }
  // PostHog's `not` is case-insensitive: `NOT (a = b)` parses as a call of NOT.
  if (name.toLowerCase() === 'not' && (node.args as Node[]).length === 1) {
    return { k: 'not', expr: r.expr(node.args[0], scope), type: 'UInt8' }
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
  let args = argNodes.map((a) => r.expr(a, scope))
  if (name.toLowerCase() === 'concat') {
    args = args.map(concatArg)
  }
  let fnName = functionKey(name)
  if (node.distinct) {
    // count(DISTINCT x) counts distinct values; countIf(DISTINCT x, cond) those where cond holds.
    const lower = fnName.toLowerCase()
    if (lower !== 'count' && lower !== 'countif') {
      throw new HogQLError('not_supported', `${name}(DISTINCT ...) is not supported; try uniqExact`, s)
    }
    fnName = lower === 'count' ? 'uniqExact' : 'uniqExactIf'
    fn = lookupFunction(fnName)!
  }
  if (fnName === 'arrayReduce') checkReducer(args[0], s)
  if (fn.agg && args.some(hasAggregate)) {
    throw new HogQLError(
      'not_supported',
      `An aggregation cannot be nested inside the aggregation '${name}'; aggregate in a subquery first`,
      s,
    )
  }
  if (node.filter_expr) {
    const base = fnName.toLowerCase() === 'count' ? 'count' : fnName
    const withIf = lookupFunction(`${base}If`)
    if (!fn.agg || !withIf) throw new HogQLError('not_supported', `FILTER is not supported for ${name}`, s)
    fn = withIf
    fnName = `${base}If`
    args.push(r.expr(node.filter_expr, scope))
  }
  if (args.length < fn.min || args.length > fn.max) {
    throw new HogQLError('bad_arity', arityMessage(name, fn, args.length), s)
  }
  const params = node.params ? (node.params as Node[]).map((p) => r.expr(p, scope)) : undefined
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
  return { k: 'call', fn, name: fnName, args, params, type: withTimeZone(type, r.opts.tz), span: s }
}

// arrayReduce('name', ...) runs aggregate `name`: only an allow-listed one, named by a constant, and
// under its ClickHouse name (the server reads the text: a HogQL alias such as array_agg is refused,
// as PostHog's test_fails_on_parametric_function expects).
function checkReducer(first: Expr | undefined, s: Span): void {
  const text = first?.k === 'const' && typeof first.value === 'string' ? first.value : undefined
  const name = text ? /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*\))?\s*$/.exec(text)?.[1] : undefined
  const def = name ? lookupFunction(name) : undefined
  if (!def?.agg || def.print !== name) {
    throw new HogQLError(
      'function_not_allowed',
      "arrayReduce's first argument must name an allowed aggregate function, e.g. arrayReduce('max', arr)",
      s,
    )
  }
}

// concat (and ||) reads NULL as '' and converts other values to text, as PostHog prints it.
function concatArg(a: Expr): Expr {
  if (a.k === 'const') {
    if (a.value === null) return { k: 'const', value: '', type: 'String' }
    if (typeof a.value === 'string') return a
    return { k: 'template', parts: ['toString(', ')'], args: [a], type: 'String' }
  }
  const inner = a.k === 'call' && a.name === 'toString' && a.args.length === 1 ? a.args[0]! : undefined
  if (inner?.k === 'const' && inner.value === null) return { k: 'const', value: '', type: 'String' }
  if (!maybeNull(a))
    return isStringType(a.type) ? a : { k: 'template', parts: ['toString(', ')'], args: [a], type: 'String' }
  return { k: 'template', parts: ['ifNull(toString(', "), '')"], args: [a], type: 'String' }
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

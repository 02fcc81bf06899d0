import { type Node, span } from './ast.ts'
import { HogQLError } from './errors.ts'
import { lookupFunction, withTimeZone } from './functions.ts'
import type { Expr, FrameBound, OrderItem, WindowSpec } from './ir.ts'
import type { Resolution, Scope } from './resolve-context.ts'

// Window functions (`f(x) OVER (...)`, `WINDOW w AS (...)`): printed as written.

// Functions that exist only over a window; allow-listed aggregates work over one as well.
const WINDOW_ONLY: Record<string, { min: number; max: number; ret: (t: string[]) => string }> = {
  row_number: { min: 0, max: 0, ret: () => 'UInt64' },
  rank: { min: 0, max: 0, ret: () => 'UInt64' },
  dense_rank: { min: 0, max: 0, ret: () => 'UInt64' },
  percent_rank: { min: 0, max: 0, ret: () => 'Float64' },
  first_value: { min: 1, max: 1, ret: (t) => t[0] ?? 'Unknown' },
  last_value: { min: 1, max: 1, ret: (t) => t[0] ?? 'Unknown' },
  nth_value: { min: 2, max: 2, ret: (t) => t[0] ?? 'Unknown' },
  lagInFrame: { min: 1, max: 3, ret: (t) => t[0] ?? 'Unknown' },
  leadInFrame: { min: 1, max: 3, ret: (t) => t[0] ?? 'Unknown' },
}

// PostHog's Postgres-style lag / lead: ClickHouse's lagInFrame / leadInFrame of the value made
// Nullable (so a row without a neighbour gets NULL, not the type's default), over the whole
// partition unless the query gives a frame (lagInFrame only sees its frame).
const NEIGHBOUR: Record<string, string> = { lag: 'lagInFrame', lead: 'leadInFrame' }

function neighbour(r: Resolution, node: Node, scope: Scope): Expr {
  const name = String(node.name)
  const s = span(node)
  const args = ((node.exprs ?? []) as Node[]).map((a) => r.expr(a, scope))
  if (args.length < 1 || args.length > 3) {
    throw new HogQLError('bad_arity', `Window function '${name}' takes 1 to 3 argument(s)`, s)
  }
  if ((node.args as Node[] | undefined)?.length) {
    throw new HogQLError('bad_arity', `Window function '${name}' takes no parameters`, s)
  }
  const value = args[0]!
  const type = /^Nullable\(/.test(value.type) ? value.type : `Nullable(${value.type})`
  args[0] = { k: 'template', parts: ['toNullable(', ')'], args: [value], type }
  let spec: WindowSpec
  if (node.over_identifier) {
    const named = String(node.over_identifier)
    const def = scope.windowNodes?.get(named)
    if (!def) throw new HogQLError('syntax_error', `Unknown window '${named}'`, s)
    spec = resolveWindowSpec(r, def, scope)
  } else spec = resolveWindowSpec(r, node.over_expr ?? { node: 'WindowExpr' }, scope)
  spec.frame ??= { method: 'ROWS', start: { kind: 'PRECEDING' }, end: { kind: 'FOLLOWING' } }
  return { k: 'window', name: NEIGHBOUR[name]!, args, over: spec, type: withTimeZone(type, r.opts.tz) }
}

/** `name(args) OVER ...` as an IR window expression. */
export function resolveWindowFunction(r: Resolution, node: Node, scope: Scope): Expr {
  const name = String(node.name)
  if (Object.hasOwn(NEIGHBOUR, name)) return neighbour(r, node, scope)
  const s = span(node)
  const args = ((node.exprs ?? []) as Node[]).map((a) => r.expr(a, scope))
  const params = ((node.args ?? []) as Node[]).map((a) => r.expr(a, scope))
  const types = args.map((a) => a.type)
  let type: string
  const only = Object.hasOwn(WINDOW_ONLY, name) ? WINDOW_ONLY[name] : undefined
  if (only) {
    if (args.length < only.min || args.length > only.max) {
      throw new HogQLError(
        'bad_arity',
        `Window function '${name}' takes ${only.min} to ${only.max} argument(s)`,
        s,
      )
    }
    if (params.length) throw new HogQLError('bad_arity', `Window function '${name}' takes no parameters`, s)
    type = only.ret(types)
  } else {
    const fn = lookupFunction(name)
    if (!fn?.agg) {
      throw new HogQLError('function_not_allowed', `'${name}' is not a window function or an aggregate`, s)
    }
    if (args.length < fn.min || args.length > fn.max) {
      throw new HogQLError('bad_arity', `Function '${name}' takes ${fn.min} to ${fn.max} argument(s)`, s)
    }
    if (params.length && !fn.params)
      throw new HogQLError('bad_arity', `Function '${name}' takes no parameters`, s)
    type = typeof fn.ret === 'function' ? fn.ret(types) : (fn.ret ?? 'Unknown')
    return {
      k: 'window',
      name: typeof fn.print === 'string' ? fn.print : name,
      args,
      params: params.length ? params : undefined,
      over: over(r, node, scope),
      type: withTimeZone(type, r.opts.tz),
    }
  }
  return { k: 'window', name, args, over: over(r, node, scope), type: withTimeZone(type, r.opts.tz) }
}

function over(r: Resolution, node: Node, scope: Scope): WindowSpec | string {
  if (node.over_identifier) {
    const name = String(node.over_identifier)
    if (!scope.windows.has(name)) throw new HogQLError('syntax_error', `Unknown window '${name}'`, span(node))
    return name
  }
  return resolveWindowSpec(r, node.over_expr ?? { node: 'WindowExpr' }, scope)
}

/** A `(PARTITION BY ... ORDER BY ... ROWS BETWEEN ...)` definition. */
export function resolveWindowSpec(r: Resolution, node: Node, scope: Scope): WindowSpec {
  const partitionBy = ((node.partition_by ?? []) as Node[]).map((e) => r.expr(e, scope))
  const orderBy = ((node.order_by ?? []) as Node[]).map((o): OrderItem => ({
    expr: r.expr(o.expr, scope),
    desc: o.order === 'DESC',
  }))
  const spec: WindowSpec = { partitionBy, orderBy }
  if (node.frame_start) {
    const method = String(node.frame_method ?? 'ROWS').toUpperCase()
    if (method !== 'ROWS' && method !== 'RANGE') {
      throw new HogQLError('not_supported', `${method} frames are not supported`, span(node))
    }
    spec.frame = {
      method,
      start: bound(node.frame_start),
      end: node.frame_end ? bound(node.frame_end) : undefined,
    }
  }
  return spec
}

function bound(node: Node): FrameBound {
  const t = String(node.frame_type).toUpperCase().replace(/\s+/g, '')
  if (t === 'CURRENTROW') return { kind: 'CURRENT ROW' }
  if (t !== 'PRECEDING' && t !== 'FOLLOWING')
    throw new HogQLError('not_supported', `Frame bound ${t}`, span(node))
  const n = node.frame_value
  if (n !== null && n !== undefined && (!Number.isInteger(n) || n < 0)) {
    throw new HogQLError('bad_argument', 'Frame offsets must be non-negative whole numbers', span(node))
  }
  return { kind: t, n: n ?? undefined }
}

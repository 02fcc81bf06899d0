import { type FieldNode, type Node, span } from './ast.ts'
import type { Span } from './errors.ts'
import { isStringType, lookupFunction } from './functions.ts'
import type { Expr } from './ir.ts'
import type { Resolution, Scope } from './resolve-context.ts'

// Accessors: `properties.a['b'].c` (one exact property key), `arr[i]` (an array element) and
// `t.1` (a tuple element, also of each tuple of an array).

/**
 * `g.1`, `x.2.1`: elements of a tuple (or of each tuple of an array) named by a select alias, a
 * lambda argument or a subquery column; undefined when `chain` is no such access (property paths
 * such as `properties.list.1` are not tuples).
 */
export function tupleAccess(r: Resolution, chain: string[], scope: Scope, s: Span): Expr | undefined {
  let n = chain.length
  while (n > 1 && /^[1-9]\d*$/.test(chain[n - 1]!)) n--
  if (n === chain.length) return undefined
  const base = r.tryField(chain.slice(0, n), scope, s, [])
  if (!base || base.k === 'prop' || isStringType(base.type)) return undefined
  return tupleElement(base, chain.slice(n).map(Number), s)
}

function tupleElement(base: Expr, indexes: number[], s: Span): Expr {
  const fn = lookupFunction('tupleElement')!
  return indexes.reduce<Expr>(
    (e, i) => ({
      k: 'call',
      fn,
      name: 'tupleElement',
      args: [e, { k: 'const', value: i, type: 'UInt64' }],
      type: 'Unknown',
      span: s,
    }),
    base,
  )
}

/** `a[i]` and `t.1` nodes: property paths, array elements and tuple elements. */
export function access(r: Resolution, node: Node, scope: Scope): Expr {
  // (x).1 on a tuple (a select alias, a subquery column, a call): an element of it.
  if (node.node === 'TupleAccess') {
    const base = r.expr(node.tuple, scope)
    if (base.k !== 'prop' && !isStringType(base.type))
      return tupleElement(base, [node.index as number], span(node))
  }
  // properties.a['b'].c and friends: gather the whole path first so it becomes one exact key.
  const chain = accessChain(node)
  if (chain) {
    const found = r.tryField(chain.base, scope, span(node), chain.path)
    if (found) return found
  }
  if (node.node === 'ArrayAccess') {
    const arr = r.expr(node.array, scope)
    const idx = r.expr(node.property, scope)
    const fn = lookupFunction('arrayElement')!
    const type = /^Array\((.*)\)$/.exec(arr.type)?.[1] ?? 'Unknown'
    return { k: 'call', fn, name: 'arrayElement', args: [arr, idx], type, span: span(node) }
  }
  return tupleElement(r.expr(node.tuple, scope), [node.index as number], span(node))
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

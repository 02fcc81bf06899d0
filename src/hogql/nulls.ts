import { firstSelect, type Expr, type Query } from './ir.ts'

// HogQL comparisons are null-safe: they answer 0 or 1, never NULL (PostHog's printer wraps them in
// ifNull and its tests pin the answers, e.g. `NULL = NULL` is 1 and `NULL < 2` is 0). The wrapping
// is only printed where a side can be NULL, so comparisons of plain columns (event, timestamp,
// team_id...) stay bare and keep reaching the primary index and the guard's PREWHERE.

const NULLABLE_TYPE = /Nullable|Nothing|Unknown/
const UUID = /^[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}$/

// Functions whose result is never NULL whatever their arguments.
const NEVER_NULL = new Set([
  'isNull',
  'isNotNull',
  'count',
  'countIf',
  'uniq',
  'uniqIf',
  'uniqExact',
  'uniqExactIf',
  'assumeNotNull',
  'toTypeName',
  'empty',
  'notEmpty',
  'length',
])

/** Whether `e` can be NULL (true when unsure: a needless ifNull costs little, a missing one is wrong). */
export function maybeNull(e: Expr): boolean {
  switch (e.k) {
    case 'const':
      return e.value === null
    case 'col':
      if (e.src.kind === 'query' && e.src.query) return queryColumnMaybeNull(e.src.query, e.column, e.type)
      return NULLABLE_TYPE.test(e.type)
    case 'prop':
      return true
    case 'item':
      return maybeNull(e.item.expr)
    case 'op':
      if (e.ifNull) return false
      return NULLABLE_TYPE.test(e.type) || maybeNull(e.left) || maybeNull(e.right)
    case 'and':
    case 'or':
      return e.items.some(maybeNull)
    case 'not':
      return maybeNull(e.expr)
    case 'call':
      if (NEVER_NULL.has(e.name)) return false
      if (e.name === 'toUUID' && e.args[0]?.k === 'const' && UUID.test(String(e.args[0].value))) return false
      if (e.name.toLowerCase() === 'ifnull') return maybeNull(e.args[1]!)
      if (e.name.toLowerCase() === 'coalesce') return e.args.every(maybeNull)
      return NULLABLE_TYPE.test(e.type) || e.args.some(maybeNull)
    case 'template':
      if (e.ifNull) return false
      return NULLABLE_TYPE.test(e.type) || e.args.some(maybeNull)
    case 'window':
      return NULLABLE_TYPE.test(e.type) || e.args.some(maybeNull)
    case 'array':
    case 'tuple':
    case 'lambda':
    case 'ident':
      return false
    case 'subquery':
      return true
  }
}

/** Whether `e` is NULL on every row (a NULL literal; its type is Nothing, which no IN compares). */
export function alwaysNull(e: Expr): boolean {
  if (e.k === 'item') return alwaysNull(e.item.expr)
  return (e.k === 'const' && e.value === null) || /^(Nullable\()?Nothing/.test(e.type)
}

/** Whether column `index` of `q` is NULL on every row, in every branch of a union. */
export function columnAlwaysNull(q: Query, index: number): boolean {
  if (q.k === 'set') return q.queries.every((b) => columnAlwaysNull(b, index))
  const item = q.items.filter((i) => !i.hidden)[index]
  return !!item && alwaysNull(item.expr)
}

// A subquery's column can be NULL when it can be in any branch of a union.
function queryColumnMaybeNull(q: Query, name: string, type: string): boolean {
  const items = firstSelect(q).items
  const index = items.findIndex((i) => i.name === name)
  if (index < 0) return NULLABLE_TYPE.test(type)
  const branches: Query[] = []
  const walk = (x: Query) => (x.k === 'select' ? branches.push(x) : x.queries.forEach(walk))
  walk(q)
  return branches.some((b) => {
    const item = b.k === 'select' ? b.items[index] : undefined
    return !item || maybeNull(item.expr)
  })
}

const isNullOf = (x: Expr, negate: boolean): Expr => ({
  k: 'template',
  parts: [negate ? 'isNotNull(' : 'isNull(', ')'],
  args: [x],
  type: 'UInt8',
})

const ZERO: Expr = { k: 'const', value: 0, type: 'UInt8' }
const ONE: Expr = { k: 'const', value: 1, type: 'UInt8' }

/**
 * What a comparison answers where ClickHouse's would be NULL. `kind`: 'eq' (=, LIKE, =~: NULL
 * matches only NULL), 'ne' (their negations), 'order' (<, <=, >, >=: never true with a NULL).
 * Undefined when neither side can be NULL.
 */
export function nullFallback(kind: 'eq' | 'ne' | 'order', left: Expr, right: Expr): Expr | undefined {
  const l = maybeNull(left)
  const r = maybeNull(right)
  if (!l && !r) return undefined
  if (kind === 'order') return ZERO
  if (!l || !r) return kind === 'eq' ? ZERO : ONE
  return {
    k: kind === 'eq' ? 'and' : 'or',
    items: [isNullOf(left, kind === 'ne'), isNullOf(right, kind === 'ne')],
    type: 'UInt8',
  }
}

/**
 * `e` as a WHERE / HAVING condition: a row is kept only where it is 1, so NULL and 0 drop it alike
 * and a comparison that answers 0 for NULL needs no wrapping outside NOT. Bare comparisons reach
 * ClickHouse's partition and primary-key analysis (which does not see through ifNull) and the guard.
 */
export function asFilter(e: Expr): Expr {
  if (e.k === 'and' || e.k === 'or') return { ...e, items: e.items.map(asFilter) }
  if ((e.k === 'op' || e.k === 'template') && e.ifNull?.k === 'const' && e.ifNull.value === 0) {
    return { ...e, ifNull: undefined }
  }
  return e
}

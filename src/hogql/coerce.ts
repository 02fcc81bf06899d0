import { escapeString } from './escape.ts'
import { isDateTimeType, isDateType, isNumericType } from './functions.ts'
import type { Expr } from './ir.ts'
import { maybeNull, nullFallback } from './nulls.ts'

// Comparisons are where HogQL's loose typing meets ClickHouse's strict one. Properties are stored
// as text, so comparing one with a number compares numerically, with true/false compares with the
// stored 'true'/'false', and `= NULL` asks whether the key is missing.

/** The ClickHouse type of a literal. */
export function constType(value: unknown): string {
  if (typeof value === 'number') return Number.isInteger(value) ? 'Int64' : 'Float64'
  if (typeof value === 'string') return 'String'
  if (typeof value === 'boolean') return 'UInt8'
  return 'Nullable(Nothing)'
}

const tpl = (parts: string[], args: Expr[], type: string): Expr => ({ k: 'template', parts, args, type })

function isNullConst(e: Expr): boolean {
  return e.k === 'const' && e.value === null
}

function isProp(e: Expr): boolean {
  if (e.k === 'item') return isProp(e.item.expr)
  return e.k === 'prop' || (e.k === 'col' && e.property === true)
}

const toNumber = (e: Expr): Expr => tpl(['toFloat64OrNull(', ')'], [e], 'Nullable(Float64)')

// The stored text of a scalar: strings as they are, numbers and booleans as JSON.
function asStoredText(e: Expr): Expr {
  if (e.k === 'const' && (typeof e.value === 'number' || typeof e.value === 'boolean')) {
    return { k: 'const', value: String(e.value), type: 'String' }
  }
  return e
}

/** Constants of an IN list (a tuple, an array or a single value); undefined for subqueries etc. */
export function constantsOf(e: Expr): Expr[] | undefined {
  if (e.k === 'tuple' || e.k === 'array') return e.items.every((i) => i.k === 'const') ? e.items : undefined
  if (e.k === 'const') return [e]
  return undefined
}

// Timestamp columns compare raw: the instant does not depend on the display zone, and the bare
// column lets ClickHouse prune partitions.
function raw(e: Expr): Expr {
  return e.k === 'col' && e.tz ? { ...e, tz: false } : e
}

function dateLiteral(e: Expr, other: Expr, tz: string): Expr {
  if (e.k !== 'const' || typeof e.value !== 'string') return e
  if (isDateTimeType(other.type)) {
    // a DateTime64 compares with the literal's fraction, as PostHog's toDateTime64(…, 6, tz) does
    const precision = /DateTime64\((\d+)/.exec(other.type)?.[1]
    const parse = precision ? `parseDateTime64BestEffort(` : `parseDateTimeBestEffort(`
    const rest = precision ? `, ${precision}, ${escapeString(tz)})` : `, ${escapeString(tz)})`
    return tpl([parse, rest], [e], other.type)
  }
  if (isDateType(other.type)) return tpl(['toDate(', ')'], [e], 'Date')
  return e
}

// How each comparison treats NULL (see nulls.ts): like `=`, like `!=`, or never true.
const NULL_KIND: Record<string, 'eq' | 'ne' | 'order'> = {
  '=': 'eq',
  LIKE: 'eq',
  ILIKE: 'eq',
  '=~': 'eq',
  '=~*': 'eq',
  '!=': 'ne',
  'NOT LIKE': 'ne',
  'NOT ILIKE': 'ne',
  '!~': 'ne',
  '!~*': 'ne',
  '<': 'order',
  '<=': 'order',
  '>': 'order',
  '>=': 'order',
}

const bool = (b: boolean): Expr => ({ k: 'const', value: b ? 1 : 0, type: 'UInt8' })

/** A comparison with HogQL's loose typing made explicit for ClickHouse, and null-safe. */
export function coerceCompare(op: string, leftIn: Expr, rightIn: Expr, tz: string): Expr {
  const kind = NULL_KIND[op]
  if (kind && (isNullConst(leftIn) || isNullConst(rightIn))) {
    // A NULL literal: the answer is known here (a constant, or whether the other side is NULL).
    if (kind === 'order') return bool(false)
    if (isNullConst(leftIn) && isNullConst(rightIn)) return bool(kind === 'eq')
    const x = isNullConst(rightIn) ? leftIn : rightIn
    if (!maybeNull(x)) return bool(kind === 'ne')
    return tpl([kind === 'eq' ? 'isNull(' : 'isNotNull(', ')'], [x], 'UInt8')
  }
  const out = coerceLoose(op, leftIn, rightIn, tz)
  if (!kind || (out.k !== 'op' && out.k !== 'template')) return out
  const [l, r] = out.k === 'op' ? [out.left, out.right] : [out.args[0]!, out.args[1]!]
  const fallback = nullFallback(kind, l, r)
  return fallback ? { ...out, ifNull: fallback } : out
}

// `x IN (...)` answers 0/1: NULL is in a list that holds NULL, and in nothing else. PostHog runs
// with `transform_null_in = 1`, where the same holds for subqueries (`NULL IN (SELECT NULL)` is 1).
// The printer compares NULL-ness and value as a pair (`nullIn`) instead: the statement then means
// the same without a setting, and a side that is always NULL compares by NULL-ness alone, where
// the setting fails on 26.7 (`x IN (SELECT NULL)` for a Nullable x: "Conversion from Int64 to
// Nothing is not supported").
function nullSafeIn(op: string, left: Expr, right: Expr): Expr {
  if (right.k === 'subquery') {
    const parts = left.k === 'tuple' ? left.items : [left]
    return { k: 'op', op, left, right, type: 'UInt8', nullIn: parts.some(maybeNull) || undefined }
  }
  const items = right.k === 'tuple' ? right.items : undefined
  const hasNull = !!items?.some(isNullConst)
  if (!hasNull && !maybeNull(left)) return { k: 'op', op, left, right, type: 'UInt8' }
  if (isNullConst(left)) return bool(hasNull === (op === 'IN'))
  const rest = items ? items.filter((i) => !isNullConst(i)) : undefined
  const parts: Expr[] = []
  if (!rest || rest.length) {
    const list = rest ? { ...right, items: rest } : right
    const within: Expr = { k: 'op', op: 'IN', left, right: list, type: 'UInt8' }
    parts.push(maybeNull(left) ? { ...within, ifNull: bool(false) } : within)
  }
  if (hasNull) parts.push(tpl(['isNull(', ')'], [left], 'UInt8'))
  const inside: Expr = parts.length === 1 ? parts[0]! : { k: 'or', items: parts, type: 'UInt8' }
  return op === 'IN' ? inside : { k: 'not', expr: inside, type: 'UInt8' }
}

// The rows of `(a, b) IN ((1, NULL), (2, 3))` when a NULL takes part, else undefined (a plain IN).
// `(a, b) IN ((1, 2))` reaches here as a list of two scalars: one row when the shapes fit.
function tupleRows(left: Expr, right: Expr): Expr[][] | undefined {
  if (left.k !== 'tuple' || (right.k !== 'tuple' && right.k !== 'array')) return undefined
  const width = left.items.length
  const items: Expr[] = right.items
  const nested = (i: Expr) => i.k === 'tuple' || i.k === 'array'
  let rows: Expr[][] | undefined
  if (items.every((i) => i.k === 'tuple')) rows = items.map((i) => (i.k === 'tuple' ? i.items : []))
  else if (items.length === width && !items.some(nested)) rows = [items]
  if (!rows || rows.some((r) => r.length !== width)) return undefined
  const nulls = left.items.some(maybeNull) || rows.some((r) => r.some(maybeNull))
  return nulls ? rows : undefined
}

// A tuple list holding NULLs as the null-safe equalities it means (without transform_null_in,
// ClickHouse's sets skip rows with a NULL): NULL matches NULL, as in PostHog.
function tupleIn(op: string, left: Expr[], rows: Expr[][], tz: string): Expr {
  const any: Expr = {
    k: 'or',
    items: rows.map((r) => ({
      k: 'and',
      items: r.map((x, i) => coerceCompare('=', left[i]!, x, tz)),
      type: 'UInt8',
    })),
    type: 'UInt8',
  }
  return op === 'IN' ? any : { k: 'not', expr: any, type: 'UInt8' }
}

function coerceLoose(op: string, leftIn: Expr, rightIn: Expr, tz: string): Expr {
  let left = leftIn
  let right = rightIn

  if (op === 'IN' || op === 'NOT IN') {
    const rows = tupleRows(left, right)
    if (rows && left.k === 'tuple') return tupleIn(op, left.items, rows, tz)
    const consts = constantsOf(right)
    if (isProp(left) && consts) {
      const numeric = consts.every((c) => c.k === 'const' && typeof c.value === 'number')
      if (numeric) left = toNumber(left)
      else right = { k: 'tuple', items: consts.map(asStoredText), type: 'Tuple(String)' }
    }
    if (isDateTimeType(left.type) && consts) {
      right = { k: 'tuple', items: consts.map((c) => dateLiteral(c, left, tz)), type: 'Tuple' }
      left = raw(left)
    }
    if (right.k === 'array') right = { ...right, k: 'tuple' }
    if (right.k === 'const') right = { k: 'tuple', items: [right], type: 'Tuple' }
    return nullSafeIn(op, left, right)
  }

  if (isProp(left) !== isProp(right)) {
    const propOnLeft = isProp(left)
    const other = propOnLeft ? right : left
    let prop = propOnLeft ? left : right
    let otherOut = other
    if (other.k === 'const' && typeof other.value === 'boolean') otherOut = asStoredText(other)
    else if ((other.k === 'const' && typeof other.value === 'number') || isNumericType(other.type)) {
      prop = toNumber(prop)
    }
    left = propOnLeft ? prop : otherOut
    right = propOnLeft ? otherOut : prop
  }

  if (isDateTimeType(left.type) || isDateType(left.type)) right = dateLiteral(right, left, tz)
  if (isDateTimeType(right.type) || isDateType(right.type)) left = dateLiteral(left, right, tz)
  if (isDateTimeType(left.type) && isDateTimeType(right.type)) {
    left = raw(left)
    right = raw(right)
  } else if (isDateTimeType(left.type) && right.k === 'template') {
    left = raw(left)
  } else if (isDateTimeType(right.type) && left.k === 'template') {
    right = raw(right)
  }

  switch (op) {
    case 'ILIKE':
      return tpl(['lowerUTF8(', ') LIKE lowerUTF8(', ')'], [left, right], 'UInt8')
    case 'NOT ILIKE':
      return tpl(['lowerUTF8(', ') NOT LIKE lowerUTF8(', ')'], [left, right], 'UInt8')
    case '=~':
      return tpl(['match(', ', ', ')'], [left, right], 'UInt8')
    case '!~':
      return tpl(['NOT match(', ', ', ')'], [left, right], 'UInt8')
    case '=~*':
      return tpl(['match(', ", concat('(?i)', ", '))'], [left, right], 'UInt8')
    case '!~*':
      return tpl(['NOT match(', ", concat('(?i)', ", '))'], [left, right], 'UInt8')
  }
  return { k: 'op', op, left, right, type: 'UInt8' }
}

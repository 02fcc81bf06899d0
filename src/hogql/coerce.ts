import { escapeString } from './escape.ts'
import { isDateTimeType, isDateType, isNumericType } from './functions.ts'
import type { Expr } from './ir.ts'

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
  return e.k === 'prop'
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
    return tpl([`parseDateTimeBestEffort(`, `, ${escapeString(tz)})`], [e], other.type)
  }
  if (isDateType(other.type)) return tpl(['toDate(', ')'], [e], 'Date')
  return e
}

/** A comparison with HogQL's loose typing made explicit for ClickHouse. */
export function coerceCompare(op: string, leftIn: Expr, rightIn: Expr, tz: string): Expr {
  let left = leftIn
  let right = rightIn
  if (op === '=' || op === '!=') {
    if (isNullConst(left) || isNullConst(right)) {
      const x = isNullConst(right) ? left : right
      return tpl([op === '=' ? 'isNull(' : 'isNotNull(', ')'], [x], 'UInt8')
    }
  }

  if (op === 'IN' || op === 'NOT IN') {
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
    return { k: 'op', op, left, right, type: 'UInt8' }
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

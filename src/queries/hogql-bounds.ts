import { AppError } from '../http/errors.ts'

// Bounds on the HogQL text a request may carry, checked in one cheap pass before anything parses
// it: nesting depth of brackets, and the number of list elements and operands. The grammar's
// parser (WebAssembly) needs time and stack that grow with both; text past these bounds is refused
// at once with a clear answer instead of being handed to a parser at all.

export interface HogQLBounds {
  /** deepest nesting of ( [ { */
  maxDepth: number
  /** list elements and operands (commas and binary operators) in one text */
  maxItems: number
}

export const DEFAULT_HOGQL_BOUNDS: HogQLBounds = { maxDepth: 32, maxItems: 20_000 }

/** A query the server will not parse: too deep, too many items, or too slow to parse. */
export class QueryTooComplex extends AppError {
  constructor(detail: string) {
    super(400, 'validation_error', 'query_too_complex', detail, 'query')
  }
}

const OPERATOR = /[+\-*/%=<>!|]/

/** Throws QueryTooComplex when `text` nests or lists beyond `bounds` (strings and comments skipped). */
export function checkHogQLText(text: string, bounds: HogQLBounds): void {
  let depth = 0
  let items = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "'" || c === '"' || c === '`') {
      // a quoted literal or identifier: skip to its end (backslash escapes)
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++
    } else if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      i = end < 0 ? text.length : end + 1
    } else if (c === '(' || c === '[' || c === '{') {
      if (++depth > bounds.maxDepth) {
        throw new QueryTooComplex(`The query nests more than ${bounds.maxDepth} levels of brackets.`)
      }
    } else if (c === ')' || c === ']' || c === '}') {
      depth = Math.max(0, depth - 1)
    } else if (c === ',' || OPERATOR.test(c)) {
      if (++items > bounds.maxItems) {
        throw new QueryTooComplex(`The query has more than ${bounds.maxItems} list elements and operands.`)
      }
    }
  }
}

/**
 * Checks every string of a structured query (insights carry HogQL fragments in filters, breakdowns
 * and select items) and the number of values it holds.
 */
export function checkQueryStrings(value: unknown, bounds: HogQLBounds): void {
  const stack: unknown[] = [value]
  let leaves = 0
  while (stack.length) {
    const v = stack.pop()
    if (typeof v === 'string') checkHogQLText(v, bounds)
    if (v === null || typeof v !== 'object') {
      if (++leaves > bounds.maxItems) {
        throw new QueryTooComplex(`The query has more than ${bounds.maxItems} values.`)
      }
      continue
    }
    stack.push(...(Array.isArray(v) ? v : Object.values(v)))
  }
}

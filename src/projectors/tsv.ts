// Rows for ClickHouse's TabSeparated format, serialized here rather than by the client: the client's
// object serialization is the slow part of the insert path (see DESIGN.md's numbers).

// One escaping serves both a plain TSV field and a string inside a TSV array literal: ClickHouse reads
// backslash escapes in both places, and escaping the quote is harmless in a plain field.
// (the control characters in these patterns are the ones being escaped)
const NEEDS_ESCAPE = /[\\\t\n\r\0'\b\f]/
const ESCAPES = /[\\\t\n\r\0'\b\f]/g
const REPLACEMENT: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '\\0',
  "'": "\\'",
  '\b': '\\b',
  '\f': '\\f',
}

/** A string escaped for a TabSeparated field or a string in a TSV array. */
export function tsvString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? s.replace(ESCAPES, (c) => REPLACEMENT[c]!) : s
}

/** An Array(String) value for a TabSeparated field. */
export function tsvArray(items: string[]): string {
  let out = '['
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out += ','
    out += `'${tsvString(items[i]!)}'`
  }
  return `${out}]`
}

// Rows come in runs of nearby times (a chunk's events, its receive time): the last two seconds
// formatted are remembered.
let memoSecond = [Number.NaN, Number.NaN]
let memoText = ['', '']

/** 'YYYY-MM-DD hh:mm:ss' in UTC, what a DateTime('UTC') column parses. */
export function tsvDateTime(ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second === memoSecond[0]) return memoText[0]!
  if (second === memoSecond[1]) return memoText[1]!
  const iso = new Date(second * 1000).toISOString()
  const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`
  memoSecond = [second, memoSecond[0]!]
  memoText = [text, memoText[0]!]
  return text
}

// DateTime holds whole seconds from the epoch up to 2105; anything outside cannot be stored.
export const MIN_DATETIME_MS = 0
/** The latest time a DateTime column stores (and MIN_DATETIME_MS the earliest). */
export const MAX_DATETIME_MS = Date.UTC(2105, 11, 31, 23, 59, 59)

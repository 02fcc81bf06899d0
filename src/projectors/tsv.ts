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

/**
 * Whether JSON text holds a character tsvString() escapes. JSON writes the control characters among
 * them as backslash sequences, so only a backslash or a quote can be there: two scans for one
 * character are several times faster than the pattern over a bag's text.
 */
export function jsonNeedsEscape(json: string): boolean {
  return json.indexOf('\\') !== -1 || json.indexOf("'") !== -1
}

/** A string escaped for a TabSeparated field or a string in a TSV array. */
export function tsvString(s: string): string {
  // (most of an events row's strings are empty: elements, groups)
  return s !== '' && NEEDS_ESCAPE.test(s) ? s.replace(ESCAPES, (c) => REPLACEMENT[c]!) : s
}

// Rows come in runs of nearby times (a chunk's events, its receive time: often two different days):
// the date part of the last two days formatted is remembered, the time of day is written from the
// seconds.
let memoDay = [Number.NaN, Number.NaN]
let memoDate = ['', '']
const two = (i: number) => String(i).padStart(2, '0')
const HOURS = Array.from({ length: 24 }, (_, i) => `${two(i)}:`)
const SIXTY = Array.from({ length: 60 }, (_, i) => two(i))
const MINUTES = SIXTY.map((m) => `${m}:`)

function datePart(day: number): string {
  if (day === memoDay[0]) return memoDate[0]!
  if (day === memoDay[1]) return memoDate[1]!
  const text = `${new Date(day * 86_400_000).toISOString().slice(0, 10)} `
  memoDay = [day, memoDay[0]!]
  memoDate = [text, memoDate[0]!]
  return text
}

// The texts of the two seconds last written, the latest first: an events row's receive time is its
// chunk's, so it is written once per chunk rather than once per row.
let memoSecondA = Number.NaN
let memoTextA = ''
let memoSecondB = Number.NaN
let memoTextB = ''

/** 'YYYY-MM-DD hh:mm:ss' in UTC, what a DateTime('UTC') column parses. */
export function tsvDateTime(ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second === memoSecondA) return memoTextA
  let text: string
  if (second === memoSecondB) {
    text = memoTextB
  } else {
    const day = Math.floor(second / 86_400)
    const s = second - day * 86_400
    const h = Math.floor(s / 3600)
    const m = Math.floor((s - h * 3600) / 60)
    text = `${datePart(day)}${HOURS[h]}${MINUTES[m]}${SIXTY[s - h * 3600 - m * 60]}`
  }
  memoSecondB = memoSecondA
  memoTextB = memoTextA
  memoSecondA = second
  memoTextA = text
  return text
}

const MILLIS = Array.from({ length: 1000 }, (_, i) => `.${String(i).padStart(3, '0')}`)

/** 'YYYY-MM-DD hh:mm:ss.mmm' in UTC, what a DateTime64(3 or more, 'UTC') column parses. */
export function tsvDateTime64(ms: number): string {
  const whole = Math.floor(ms)
  return tsvDateTime(whole) + MILLIS[whole - Math.floor(whole / 1000) * 1000]!
}

// DateTime holds whole seconds from the epoch up to 2105; anything outside cannot be stored.
export const MIN_DATETIME_MS = 0
/** The latest time a DateTime column stores (and MIN_DATETIME_MS the earliest). */
export const MAX_DATETIME_MS = Date.UTC(2105, 11, 31, 23, 59, 59)

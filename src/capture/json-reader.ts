// Long because the walk over a body is one unit: its string and byte sources, the quick item read
// and the member walk share every rule of JSON text (strings, nesting, blanks) and are tested together.
import { isAscii } from 'node:buffer'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { ValidationError } from '../http/errors.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../http/json-depth.ts'
import { EventTooLarge, TooManyEvents } from './limits.ts'

// JSON.parse of a big capture body holds the event loop for as long as it runs (10 MB: ~0.3 s on a
// small machine, and a gzip body inflates to five times the body limit), so every other request —
// /_health included — waits. Bodies above a threshold are read here instead: a pass over the text
// finds where each member and each batch item starts and ends (minding strings and nesting), each
// is parsed on its own by the native parser, and the work gives way to other requests every few
// milliseconds. The result is what JSON.parse gives; invalid JSON is refused the same way.
//
// The pass reads a string (lz64's output) or, for every other body, the UTF-8 bytes themselves: a
// string of a whole body would be one V8 large object (over 128 KiB), some twenty times dearer per
// byte to make than the small strings of each item. A byte walk finds the same spans as a string
// walk: JSON's structural characters, quotes and backslashes are ASCII, and no byte of a multi-byte
// UTF-8 character is. Only lengths differ, and limits keep counting UTF-16 characters.

/** A batch item whose text alone exceeds the per-event limit: dropped unread as too large. */
export const OVERSIZE = Symbol('oversize event')

export interface ReadLimits {
  /** more items in a batch than this refuses the request (413) */
  maxEvents: number
  /** a batch item longer than this (UTF-16 characters) is not parsed (OVERSIZE); another member this long is a 413 */
  maxEventChars: number
  /** bodies shorter than this (UTF-16 characters) are parsed in one go */
  incrementalFrom: number
  /** how long to work before letting other requests run */
  sliceMs?: number
}

const invalid = () => new ValidationError('Body is not valid JSON.', null, 'invalid_payload')
const tooDeep = () =>
  new ValidationError(`Body nests deeper than ${MAX_JSON_DEPTH} levels.`, null, 'invalid_payload')

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const COLON = 0x3a
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d

/** Whether JavaScript's trim() and \\s take the character `c` for white space. */
function isJsSpace(c: number): boolean {
  if (c < 0x80) return c === 0x20 || (c >= 0x09 && c <= 0x0d)
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  )
}

/**
 * A body's text as the walk reads it, by index: the code units of a string, or the bytes of valid
 * UTF-8. Structural characters are the same ASCII units in both.
 */
interface JsonSource {
  readonly length: number
  /** the unit at `i` (NaN or undefined past the end) */
  at(i: number): number
  /** the index of the next ASCII `unit` from `from`, or -1 */
  find(unit: number, from: number): number
  /** the text of [start, end) */
  text(start: number, end: number): string
  /** whether [start, end) is more than `max` UTF-16 characters long */
  longerThan(start: number, end: number, max: number): boolean
  /** the first index in [from, to) whose character is not white space to trim(), or `to` */
  skipSpace(from: number, to: number): number
}

class StringSource implements JsonSource {
  readonly length: number
  constructor(private readonly s: string) {
    this.length = s.length
  }
  at(i: number): number {
    return this.s.charCodeAt(i)
  }
  find(unit: number, from: number): number {
    return this.s.indexOf(String.fromCharCode(unit), from)
  }
  text(start: number, end: number): string {
    return this.s.slice(start, end)
  }
  longerThan(start: number, end: number, max: number): boolean {
    return end - start > max
  }
  skipSpace(from: number, to: number): number {
    let i = from
    while (i < to && isJsSpace(this.s.charCodeAt(i))) i++
    return i
  }
}

/** Valid UTF-8, without a byte order mark (the decoder drops it): decode.ts checks both. */
class ByteSource implements JsonSource {
  readonly length: number
  private readonly ascii: boolean
  constructor(private readonly b: Buffer) {
    this.length = b.length
    this.ascii = isAscii(b)
  }
  at(i: number): number {
    return this.b[i]!
  }
  find(unit: number, from: number): number {
    return this.b.indexOf(unit, from)
  }
  text(start: number, end: number): string {
    // (an ASCII body's text is its latin1 one, copied without decoding)
    return this.b.toString(this.ascii ? 'latin1' : 'utf8', start, end)
  }
  /**
   * A character is one to three bytes, or four bytes and two UTF-16 units: the bytes bound the
   * count both ways, and only a span between the bounds is counted (a lead byte starts a
   * character; one of four bytes starts two units).
   */
  longerThan(start: number, end: number, max: number): boolean {
    const bytes = end - start
    if (bytes <= max) return false
    if (this.ascii || bytes > 3 * max) return true
    let chars = 0
    for (let i = start; i < end; i++) {
      const c = this.b[i]!
      if ((c & 0xc0) !== 0x80) chars++
      if (c >= 0xf0) chars++
      if (chars > max) return true
    }
    return false
  }
  skipSpace(from: number, to: number): number {
    let i = from
    while (i < to) {
      const c = this.b[i]!
      if (c < 0x80) {
        if (!isJsSpace(c)) return i
        i++
        continue
      }
      // every white space past ASCII is two or three bytes (U+00A0 to U+FEFF)
      const two = (c & 0xe0) === 0xc0
      if (!two && (c & 0xf0) !== 0xe0) return i
      const cp = two
        ? ((c & 0x1f) << 6) | (this.b[i + 1]! & 0x3f)
        : ((c & 0x0f) << 12) | ((this.b[i + 1]! & 0x3f) << 6) | (this.b[i + 2]! & 0x3f)
      if (!isJsSpace(cp)) return i
      i += two ? 2 : 3
    }
    return to
  }
}

/**
 * Lets other requests run once this stretch of work has taken `sliceMs`. Asked per event, so the
 * common answer (keep going) costs no promise: `if (slicer.due()) await slicer.pause()`.
 */
export class Slicer {
  private last = performance.now()
  constructor(private readonly sliceMs: number) {}
  /** Whether the stretch has taken its time. */
  due(): boolean {
    return performance.now() - this.last >= this.sliceMs
  }
  /** Lets the other requests run, then starts a new stretch. */
  async pause(): Promise<void> {
    await nextTurn()
    this.last = performance.now()
  }
}

interface Member {
  /** the key of an object member; undefined for array items */
  key: string | undefined
  start: number
  end: number
  /** the item, when it was already parsed (quickItem) */
  value?: unknown
}

/**
 * The index after the string whose opening quote is at `i`. Most of a body is string text: the next
 * quote is found by the native search, and it closes the string unless an odd run of backslashes
 * precedes it.
 */
function stringEnd(src: JsonSource, i: number): number {
  let from = i + 1
  for (;;) {
    const q = src.find(QUOTE, from)
    if (q < 0) throw invalid()
    let b = q - 1
    while (b > i && src.at(b) === BACKSLASH) b--
    if ((q - 1 - b) % 2 === 0) return q + 1
    from = q + 1
  }
}

const isBlank = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Whether `text` holds at least `n` opening brackets (in strings or not). */
function bracketsAtLeast(text: string, n: number): boolean {
  if (text.length < 2 * n) return false
  let count = 0
  for (let k = text.indexOf('{'); k >= 0; k = text.indexOf('{', k + 1)) if (++count >= n) return true
  for (let k = text.indexOf('['); k >= 0; k = text.indexOf('[', k + 1)) if (++count >= n) return true
  return false
}

/** Candidate ends an item may be tried at before it is left to the character walk. */
const QUICK_TRIES = 2

/**
 * An object batch item read without walking its characters: the native parser is given the text
 * up to a `}` that looks like the item's end (followed by `,{` or `]`, blanks between), and the
 * first such `}` it accepts is the item's end, because JSON is read left to right: a prefix that
 * parses as one complete object ends where the item's own object ends. A `}` in a string or a
 * nested object that looks like an end fails to parse and the next is tried, a few times at most.
 * `start` is where the item's text begins (after the comma or bracket before it); the answer is
 * the parsed item and the index of the `,` or `]` after it, or undefined when the item is not an
 * object, its text would be longer than `maxChars`, or no candidate parsed (the walk then reads it,
 * and finds whatever is wrong with it).
 */
function quickItem(
  src: JsonSource,
  start: number,
  depth: number,
  maxChars: number,
): { value: unknown; end: number } | undefined {
  let at = start
  while (at < src.length && isBlank(src.at(at))) at++
  if (src.at(at) !== OPEN_BRACE) return undefined
  let from = at + 1
  for (let tries = 0; tries < QUICK_TRIES;) {
    const close = src.find(CLOSE_BRACE, from)
    if (close < 0) return undefined
    let end = close + 1
    while (end < src.length && isBlank(src.at(end))) end++
    if (src.longerThan(start, end, maxChars)) return undefined
    const c = src.at(end)
    let candidate = c === CLOSE_BRACKET
    if (c === COMMA) {
      let next = end + 1
      while (next < src.length && isBlank(src.at(next))) next++
      candidate = src.at(next) === OPEN_BRACE
    }
    from = close + 1
    if (!candidate) continue
    tries++
    const item = src.text(at, close + 1)
    let value: unknown
    try {
      value = JSON.parse(item)
    } catch {
      continue
    }
    // the walk counts the item's levels from `depth`: one with fewer brackets is not searched
    const levels = MAX_JSON_DEPTH - depth
    if (bracketsAtLeast(item, levels + 1) && nestsDeeperThan(value, levels)) throw tooDeep()
    return { value, end }
  }
  return undefined
}

function parseSpan(src: JsonSource, start: number, end: number): unknown {
  try {
    return JSON.parse(src.text(start, end))
  } catch {
    throw invalid()
  }
}

interface WalkHooks {
  /** each item's (or member value's) span */
  onMember(m: Member): void
  /** an array's object items are read by quickItem where it can, at most this long (their `value` set) */
  quickMaxChars?: number
  /**
   * Asked where an object member's value starts: the index after that value when the hook read it
   * whole (the walk goes on from there), or undefined to walk it.
   */
  readValue?(key: string, start: number): Promise<number | undefined>
}

/**
 * Walks the array or object opening at `open`, `depth` deep, to its closing bracket, telling
 * `hooks` of each member. Returns the index after the close.
 */
async function walk(
  src: JsonSource,
  open: number,
  depth: number,
  slicer: Slicer,
  hooks: WalkHooks,
): Promise<number> {
  const { onMember, quickMaxChars, readValue } = hooks
  const isObject = src.at(open) === OPEN_BRACE
  let level = depth
  let memberStart = open + 1
  let valueStart = isObject ? -1 : open + 1
  let key: string | undefined
  let count = 0
  let steps = 0
  let quick: { value: unknown; end: number } | undefined
  const flush = (end: number, closing: boolean) => {
    if (quick) {
      onMember({ key, start: valueStart, end, value: quick.value })
      quick = undefined
      count++
      return
    }
    // `[]` and `{}` have no members; any other blank member is a syntax error
    if (closing && count === 0 && src.skipSpace(open + 1, end) === end) return
    if (valueStart < 0) throw invalid()
    count++
    onMember({ key, start: valueStart, end })
  }
  for (let i = open + 1; i < src.length; i++) {
    if (quickMaxChars !== undefined && i === valueStart && !isObject) {
      quick = quickItem(src, i, depth, quickMaxChars)
      // on to the `,` or `]` after the item
      if (quick) i = quick.end
    }
    if (++steps === 65_536) {
      steps = 0
      if (slicer.due()) await slicer.pause()
    }
    const c = src.at(i)
    if (c === QUOTE) {
      i = stringEnd(src, i) - 1
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++level > MAX_JSON_DEPTH) throw tooDeep()
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (level > depth) {
        level--
        continue
      }
      if (c !== (isObject ? CLOSE_BRACE : CLOSE_BRACKET)) throw invalid()
      flush(i, true)
      return i + 1
    } else if (level === depth && c === COLON) {
      if (!isObject || valueStart >= 0) throw invalid()
      const k = parseSpan(src, memberStart, i)
      if (typeof k !== 'string') throw invalid()
      key = k
      valueStart = i + 1
      const after = readValue ? await readValue(k, valueStart) : undefined
      if (after !== undefined) i = after - 1
    } else if (level === depth && c === COMMA) {
      flush(i, false)
      // a member parsed: let other requests run if this one has had its time
      if (slicer.due()) await slicer.pause()
      memberStart = i + 1
      valueStart = isObject ? -1 : i + 1
      key = undefined
    }
  }
  throw invalid()
}

/** JSON.parse of `text`, with the nesting limit every capture body has. */
export function parseWhole(text: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw invalid()
  }
  if (nestsDeeperThan(value, MAX_JSON_DEPTH)) throw tooDeep()
  return value
}

/**
 * Parses a capture body: a small one at once, a big one member by member (an array of events, or
 * an object whose `batch` is one read item by item), giving way to other requests as it goes.
 * Items beyond `maxEvents` refuse the request before they are parsed.
 */
export function readCaptureJson(text: string, limits: ReadLimits): Promise<unknown> {
  return readSource(new StringSource(text), limits)
}

/**
 * readCaptureJson of the text of `bytes`, which must be valid UTF-8 without a byte order mark (the
 * decoder would have dropped it), read without making one string of them all.
 */
export function readCaptureBytes(bytes: Buffer, limits: ReadLimits): Promise<unknown> {
  return readSource(new ByteSource(bytes), limits)
}

/** Whether the first character of `bytes` (valid UTF-8) that is not white space to trim() is `{` or `[`. */
export function opensJson(bytes: Buffer): boolean {
  const c = bytes[new ByteSource(bytes).skipSpace(0, bytes.length)]
  return c === OPEN_BRACE || c === OPEN_BRACKET
}

async function readSource(src: JsonSource, limits: ReadLimits): Promise<unknown> {
  const first = src.skipSpace(0, src.length)
  const opener = src.at(first)
  // (shorter than incrementalFrom: incrementalFrom - 1 characters at most)
  if (
    !src.longerThan(0, src.length, limits.incrementalFrom - 1) ||
    (opener !== OPEN_BRACKET && opener !== OPEN_BRACE)
  ) {
    return parseWhole(src.text(0, src.length))
  }
  const slicer = new Slicer(limits.sliceMs ?? 10)

  const readItems = async (open: number, depth: number) => {
    const items: unknown[] = []
    const end = await walk(src, open, depth, slicer, {
      onMember(m) {
        if (items.length >= limits.maxEvents) throw new TooManyEvents(limits.maxEvents)
        if (src.longerThan(m.start, m.end, limits.maxEventChars)) items.push(OVERSIZE)
        else items.push('value' in m ? m.value : parseSpan(src, m.start, m.end))
      },
      quickMaxChars: limits.maxEventChars,
    })
    return { items, end }
  }
  const nothingAfter = (from: number, to = src.length) => {
    if (src.skipSpace(from, to) !== to) throw invalid()
  }

  if (opener === OPEN_BRACKET) {
    const { items, end } = await readItems(first, 1)
    nothingAfter(end)
    return items
  }
  const members: Member[] = []
  // A `batch` array is read while the object is walked, not walked first and read after: the walk
  // of the object would pass over every character of it once more. When reading it fails (an
  // error, or more events than allowed), the walk goes over it as before and it is read again in
  // its turn below, so that a body with several faults is refused for the same one as before.
  const batches = new Map<number, { items: unknown[]; end: number }>()
  const readValue = async (key: string, start: number) => {
    if (key !== 'batch') return undefined
    let at = start
    while (at < src.length && isBlank(src.at(at))) at++
    if (src.at(at) !== OPEN_BRACKET) return undefined
    try {
      const read = await readItems(at, 2)
      batches.set(start, read)
      return read.end
    } catch {
      return undefined
    }
  }
  nothingAfter(await walk(src, first, 1, slicer, { onMember: (m) => void members.push(m), readValue }))
  // Later duplicates win, as in JSON.parse.
  const out: Record<string, unknown> = {}
  for (const m of members) {
    // (a value of only white space is not `[`: at `m.end` is its `,` or `}`)
    const at = src.skipSpace(m.start, m.end)
    if (m.key === 'batch' && src.at(at) === OPEN_BRACKET) {
      const { items, end } = batches.get(m.start) ?? (await readItems(at, 2))
      nothingAfter(end, m.end)
      out.batch = items
      continue
    }
    if (src.longerThan(m.start, m.end, limits.maxEventChars)) throw new EventTooLarge(limits.maxEventChars)
    // an own property even for `__proto__`, as JSON.parse makes it
    Object.defineProperty(out, m.key!, {
      value: parseSpan(src, m.start, m.end),
      enumerable: true,
      writable: true,
      configurable: true,
    })
    if (slicer.due()) await slicer.pause()
  }
  return out
}

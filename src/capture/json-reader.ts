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

/** A batch item whose text alone exceeds the per-event limit: dropped unread as too large. */
export const OVERSIZE = Symbol('oversize event')

export interface ReadLimits {
  /** more items in a batch than this refuses the request (413) */
  maxEvents: number
  /** a batch item longer than this is not parsed (OVERSIZE); another member this long is a 413 */
  maxEventChars: number
  /** bodies shorter than this are parsed in one go */
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
function stringEnd(text: string, i: number): number {
  let from = i + 1
  for (;;) {
    const q = text.indexOf('"', from)
    if (q < 0) throw invalid()
    let b = q - 1
    while (b > i && text.charCodeAt(b) === BACKSLASH) b--
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
  text: string,
  start: number,
  depth: number,
  maxChars: number,
): { value: unknown; end: number } | undefined {
  let at = start
  while (at < text.length && isBlank(text.charCodeAt(at))) at++
  if (text.charCodeAt(at) !== OPEN_BRACE) return undefined
  let from = at + 1
  for (let tries = 0; tries < QUICK_TRIES;) {
    const close = text.indexOf('}', from)
    if (close < 0) return undefined
    let end = close + 1
    while (end < text.length && isBlank(text.charCodeAt(end))) end++
    if (end - start > maxChars) return undefined
    const c = text.charCodeAt(end)
    let candidate = c === CLOSE_BRACKET
    if (c === COMMA) {
      let next = end + 1
      while (next < text.length && isBlank(text.charCodeAt(next))) next++
      candidate = text.charCodeAt(next) === OPEN_BRACE
    }
    from = close + 1
    if (!candidate) continue
    tries++
    const item = text.slice(at, close + 1)
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

function parseSpan(text: string, start: number, end: number): unknown {
  try {
    return JSON.parse(text.slice(start, end))
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
  text: string,
  open: number,
  depth: number,
  slicer: Slicer,
  hooks: WalkHooks,
): Promise<number> {
  const { onMember, quickMaxChars, readValue } = hooks
  const isObject = text.charCodeAt(open) === OPEN_BRACE
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
    if (closing && count === 0 && text.slice(open + 1, end).trim() === '') return
    if (valueStart < 0) throw invalid()
    count++
    onMember({ key, start: valueStart, end })
  }
  for (let i = open + 1; i < text.length; i++) {
    if (quickMaxChars !== undefined && i === valueStart && !isObject) {
      quick = quickItem(text, i, depth, quickMaxChars)
      // on to the `,` or `]` after the item
      if (quick) i = quick.end
    }
    if (++steps === 65_536) {
      steps = 0
      if (slicer.due()) await slicer.pause()
    }
    const c = text.charCodeAt(i)
    if (c === QUOTE) {
      i = stringEnd(text, i) - 1
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
      const k = parseSpan(text, memberStart, i)
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
export async function readCaptureJson(text: string, limits: ReadLimits): Promise<unknown> {
  if (text.length < limits.incrementalFrom) return parseWhole(text)
  const first = text.search(/\S/)
  const opener = first < 0 ? -1 : text.charCodeAt(first)
  if (opener !== OPEN_BRACKET && opener !== OPEN_BRACE) return parseWhole(text)
  const slicer = new Slicer(limits.sliceMs ?? 10)

  const readItems = async (open: number, depth: number) => {
    const items: unknown[] = []
    const end = await walk(text, open, depth, slicer, {
      onMember(m) {
        if (items.length >= limits.maxEvents) throw new TooManyEvents(limits.maxEvents)
        if (m.end - m.start > limits.maxEventChars) items.push(OVERSIZE)
        else items.push('value' in m ? m.value : parseSpan(text, m.start, m.end))
      },
      quickMaxChars: limits.maxEventChars,
    })
    return { items, end }
  }
  const nothingAfter = (from: number, to = text.length) => {
    if (text.slice(from, to).trim() !== '') throw invalid()
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
    while (at < text.length && isBlank(text.charCodeAt(at))) at++
    if (text.charCodeAt(at) !== OPEN_BRACKET) return undefined
    try {
      const read = await readItems(at, 2)
      batches.set(start, read)
      return read.end
    } catch {
      return undefined
    }
  }
  nothingAfter(await walk(text, first, 1, slicer, { onMember: (m) => void members.push(m), readValue }))
  // Later duplicates win, as in JSON.parse.
  const out: Record<string, unknown> = {}
  for (const m of members) {
    const at = m.start + text.slice(m.start, m.end).search(/\S/)
    if (m.key === 'batch' && text.charCodeAt(at) === OPEN_BRACKET) {
      const { items, end } = batches.get(m.start) ?? (await readItems(at, 2))
      nothingAfter(end, m.end)
      out.batch = items
      continue
    }
    if (m.end - m.start > limits.maxEventChars) throw new EventTooLarge(limits.maxEventChars)
    // an own property even for `__proto__`, as JSON.parse makes it
    Object.defineProperty(out, m.key!, {
      value: parseSpan(text, m.start, m.end),
      enumerable: true,
      writable: true,
      configurable: true,
    })
    if (slicer.due()) await slicer.pause()
  }
  return out
}

// CSS selectors of action steps, matched against autocapture's `elements_chain` as PostHog matches
// them (posthog/models/event/event.py Selector, posthog/models/property/util.py
// build_selector_regex): the selector is read right to left, its first part is the clicked element
// (the chain's first element), a `>` parent is the next element of the chain and a plain space any
// later one. A part may name a tag, classes, an id, attributes and :nth-child / :nth-of-type, all
// of which must hold within one element of the chain:
//   a.nav-link.active                → `a.active.nav-link:…` (classes are written sorted)
//   [data-id="5"]                    → `…attr__data-id="5"…`
//   #signup, [id="signup"]           → `…attr_id="signup"…`
//   li:nth-child(2)                  → `li…:…nth-child="2"…`
// The result is one RE2 pattern (ClickHouse's `match`), checked by RE2 before an action is saved.

/** One element of a selector. */
export interface SelectorPart {
  tag?: string
  classes: string[]
  /** the attributes as the chain keys them: attr_id, nth-child, nth-of-type, or the HTML name */
  attributes: Record<string, string>
  /** this element is the parent of the previous part (`>`), not just an ancestor */
  direct: boolean
}

/** A selector that cannot be matched; the message says what is wrong. */
export class InvalidSelector extends Error {
  override name = 'InvalidSelector'
}

const ATTRIBUTE = /\[\s*([^\]\s=]+)\s*=\s*(['"])(.*?)\2\s*\]/g
const POSITIONAL = /:(nth-child|nth-of-type)\((\d+)\)/g
const TAG = /^[a-zA-Z][a-zA-Z0-9-]*$/
const ATTRIBUTE_KEY = /^[a-zA-Z_:][a-zA-Z0-9_:.-]*$/
// Pseudo-classes the chain cannot tell: written after a class they would become part of its name.
const PSEUDO_CLASSES = new Set([
  'active',
  'after',
  'before',
  'checked',
  'disabled',
  'empty',
  'enabled',
  'first-child',
  'first-of-type',
  'focus',
  'focus-visible',
  'focus-within',
  'hover',
  'invalid',
  'last-child',
  'last-of-type',
  'only-child',
  'optional',
  'required',
  'root',
  'target',
  'valid',
  'visited',
])

/** Splits on spaces outside `[…]` and quotes. */
function words(selector: string): string[] {
  const out: string[] = []
  let word = ''
  let inBrackets = false
  let quote: string | null = null
  for (const ch of selector) {
    if (quote === null && ch === '[') inBrackets = true
    if (quote === null && ch === ']') inBrackets = false
    if (ch === '"' || ch === "'") {
      if (quote === null) quote = ch
      else if (quote === ch) quote = null
    }
    if (ch === ' ' && !inBrackets && quote === null) {
      out.push(word)
      word = ''
    } else word += ch
  }
  out.push(word)
  if (quote !== null || inBrackets) throw new InvalidSelector('unbalanced quotes or brackets')
  return out
}

/** Dots that start a class: not inside `[…]` (Tailwind's arbitrary values such as w-[1.5rem]). */
function splitClasses(text: string): string[] {
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const ch of text) {
    if (ch === '[') depth++
    if (ch === ']') depth = Math.max(0, depth - 1)
    if (ch === '.' && depth === 0) {
      parts.push(current)
      current = ''
    } else current += ch
  }
  parts.push(current)
  return parts
}

function parsePart(text: string, direct: boolean): SelectorPart {
  const part: SelectorPart = { classes: [], attributes: {}, direct }
  let rest = text.replace(ATTRIBUTE, (_m, key: string, _q: string, value: string) => {
    part.attributes[key === 'id' ? 'attr_id' : key] = value
    return ''
  })
  rest = rest.replace(POSITIONAL, (_m, which: string, n: string) => {
    part.attributes[which] = n
    return ''
  })
  if (rest.includes('.')) {
    const [head, ...classes] = splitClasses(rest)
    part.classes = classes
    rest = head ?? ''
  }
  if (rest.includes('#')) {
    const [head, id] = rest.split('#')
    if (id !== undefined && id !== '') part.attributes.attr_id = id
    rest = head ?? ''
  }
  if (rest) part.tag = rest
  return part
}

function checkPart(part: SelectorPart, raw: string): void {
  if (part.tag !== undefined && part.tag !== '*' && !TAG.test(part.tag)) {
    throw new InvalidSelector(`'${raw}' is not a selector this matching supports`)
  }
  for (const key of Object.keys(part.attributes)) {
    if (!ATTRIBUTE_KEY.test(key)) throw new InvalidSelector(`unsupported attribute selector in '${raw}'`)
  }
  for (const c of part.classes) {
    if (c === '') throw new InvalidSelector(`empty class name in '${raw}'`)
    const pseudo = c.includes(':') ? c.slice(c.lastIndexOf(':') + 1) : undefined
    if (pseudo !== undefined && PSEUDO_CLASSES.has(pseudo)) {
      throw new InvalidSelector(`the pseudo-class :${pseudo} cannot be matched against autocapture elements`)
    }
  }
}

/** The selector's parts, the clicked element first; throws InvalidSelector. */
export function parseSelector(selector: string): SelectorPart[] {
  // PostHog drops a `*` between parents ("div > * > a" is "div a") and unescapes `\:`
  const text = selector.replaceAll('> * > ', '').replaceAll('> *', '').replaceAll('\\:', ':').trim()
  if (text === '') throw new InvalidSelector('the selector is empty')
  const tokens = words(text).reverse()
  const parts: SelectorPart[] = []
  tokens.forEach((token, i) => {
    if (token === '>' || token === '') return
    const part = parsePart(token, i > 0 && tokens[i - 1] === '>')
    checkPart(part, token)
    parts.push(part)
  })
  if (parts.length === 0) throw new InvalidSelector('the selector names no element')
  if (parts[0]!.direct || tokens[0] === '>') throw new InvalidSelector('the selector ends with a combinator')
  return parts
}

/** RE2 with every metacharacter of `s` escaped. */
export function escapeRegex(s: string): string {
  return s.replace(/[\\^$.|?*+()[\]{}-]/g, (c) => `\\${c}`)
}

// The chain escapes a quote inside a value as \" (src/projectors/elements.ts): a selector may write
// it escaped or bare (inside single quotes), so both become the chain's form.
const chainValue = (v: string) => v.replaceAll('\\"', '"').replaceAll('"', '\\"')

// How the chain keys a selector's attribute: the id and the positions have keys of their own, an
// HTML attribute is `attr__<name>` (posthog-js's name; `href` is also written on its own).
function chainKeys(key: string): string[] {
  if (key === 'attr_id') return ['attr_id', 'attr__id']
  if (key === 'nth-child' || key === 'nth-of-type') return [key]
  if (key === 'href') return ['attr__href', 'href']
  return [`attr__${key}`]
}

// The pieces of one element of the chain, `tag.class1.class2:key="value"key2="value2"`, read
// structurally so that a tag, a class or an attribute key is only ever matched whole:
const QUOTED = '"(?:\\\\.|[^"\\\\])*"'
/** any of the element's classes */
const SOME_CLASSES = '(?:\\.[^.;"]*)*?'
/** whole attributes (key="value") */
const SOME_ATTRIBUTES = `(?:[^;"=]*=${QUOTED})*?`
/** the rest of an element's attributes, whatever they hold */
const REST = `(?:[^;"]|${QUOTED})*`
/** any number of whole elements, each with its ';' (a descendant combinator) */
const WHOLE_ELEMENTS = `(?:(?:[^;"]|${QUOTED})*;)*`

// The chain writes an element's attributes sorted by key, but which sort depends on the writer
// (PostHog's Python sorts by code point, its ingestion compares with localeCompare): several
// attributes are matched in any order, as alternatives, up to this many.
const MAX_ORDERED_ATTRIBUTES = 4

function permutations<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs]
  return xs.flatMap((x, i) => permutations([...xs.slice(0, i), ...xs.slice(i + 1)]).map((p) => [x, ...p]))
}

function attributesRegex(attributes: Record<string, string>): string {
  const items = Object.entries(attributes).map(([k, v]) => {
    const keys = chainKeys(k).map(escapeRegex)
    const key = keys.length === 1 ? keys[0]! : `(?:${keys.join('|')})`
    return `${key}="${escapeRegex(chainValue(v))}"`
  })
  if (items.length === 0) return `(?::${REST})?`
  const inOrder = (order: string[]) => order.map((a) => SOME_ATTRIBUTES + a).join('')
  const orders = items.length > MAX_ORDERED_ATTRIBUTES ? [items.sort()] : permutations(items)
  const body = orders.length === 1 ? inOrder(orders[0]!) : `(?:${orders.map(inOrder).join('|')})`
  return `:${body}${REST}`
}

function partRegex(part: SelectorPart): string {
  const tag = part.tag !== undefined && part.tag !== '*' ? escapeRegex(part.tag) : '[^.:;"]*'
  const classes = [...part.classes]
    .sort()
    .map((c) => `${SOME_CLASSES}\\.${escapeRegex(c)}`)
    .join('')
  return `${tag}${classes}${SOME_CLASSES}${attributesRegex(part.attributes)}(?:;|$)`
}

/** The RE2 pattern that finds the selector's elements in an `elements_chain`; throws InvalidSelector. */
export function selectorRegex(selector: string): string {
  const parts = parseSelector(selector)
  // every part starts where an element does, so `a` never matches inside `abbr` or a class
  return `(^|;)${parts.map((p, i) => (i > 0 && !p.direct ? WHOLE_ELEMENTS : '') + partRegex(p)).join('')}`
}

/** The pattern for an action step's `tag_name`: an element of that tag anywhere in the chain. */
export function tagNameRegex(tag: string): string {
  return `(^|;)${escapeRegex(tag)}(\\.|$|;|:)`
}

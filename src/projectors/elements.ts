// Autocapture elements as PostHog stores them: `$elements` (the array posthog-js sends) becomes the
// `elements_chain` text, one element per ';' from the clicked element outwards, each written as
// tag.class1.class2:key="value"... with attributes sorted by name and '"' escaped. Format learned from
// PostHog's plugin-server (utils/db/elements-chain.ts: elementsToString / extractElements).

const escapeQuotes = (s: string) => s.replace(/"/g, '\\"')

interface Element {
  text?: string
  tag_name?: string
  href?: string
  attr_class?: string[]
  attr_id?: string
  nth_child?: number
  nth_of_type?: number
  attributes: Record<string, unknown>
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined
}

function toElement(raw: Record<string, unknown>): Element {
  const cls = raw.attr__class
  const classes = Array.isArray(cls) ? cls.map(String) : typeof cls === 'string' ? cls.split(' ') : undefined
  return {
    text: str(raw.$el_text)?.slice(0, 400),
    tag_name: str(raw.tag_name),
    href: str(raw.attr__href)?.slice(0, 2048),
    attr_class: classes,
    attr_id: str(raw.attr__id),
    nth_child: typeof raw.nth_child === 'number' ? raw.nth_child : undefined,
    nth_of_type: typeof raw.nth_of_type === 'number' ? raw.nth_of_type : undefined,
    attributes: Object.fromEntries(Object.entries(raw).filter(([k]) => k.startsWith('attr__'))),
  }
}

function elementText(el: Element): string {
  let out = el.tag_name ?? ''
  for (const c of [...(el.attr_class ?? [])].sort()) out += `.${c.replace(/"/g, '')}`
  const attrs: Record<string, unknown> = {
    ...(el.text ? { text: el.text } : {}),
    'nth-child': el.nth_child ?? 0,
    'nth-of-type': el.nth_of_type ?? 0,
    ...(el.href ? { href: el.href } : {}),
    ...(el.attr_id ? { attr_id: el.attr_id } : {}),
    ...el.attributes,
  }
  const parts = Object.entries(attrs)
    .filter(([, v]) => v !== null && v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${escapeQuotes(k)}="${escapeQuotes(typeof v === 'string' ? v : JSON.stringify(v))}"`)
  return `${out}:${parts.join('')}`
}

/** The elements_chain text of an `$elements` array, as PostHog writes it. */
export function elementsChainFromArray(elements: unknown[]): string {
  return elements
    .filter((e): e is Record<string, unknown> => typeof e === 'object' && e !== null && !Array.isArray(e))
    .map((e) => elementText(toElement(e)))
    .join(';')
}

/**
 * The chain for the elements_chain column, and the properties without the keys it came from (PostHog
 * keeps elements in their own column, not among the properties).
 */
export function extractElementsChain(properties: Record<string, unknown>): {
  chain: string
  properties: Record<string, unknown>
} {
  const chainProp = properties.$elements_chain
  const elements = properties.$elements
  if (chainProp === undefined && elements === undefined) return { chain: '', properties }
  const { $elements_chain: _c, $elements: _e, ...rest } = properties
  if (typeof chainProp === 'string' && chainProp !== '') return { chain: chainProp, properties: rest }
  if (Array.isArray(elements)) return { chain: elementsChainFromArray(elements), properties: rest }
  return { chain: '', properties: rest }
}

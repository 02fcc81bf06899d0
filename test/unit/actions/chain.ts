// PostHog's Element model and its elements_to_string (posthog/models/element/element.py), so that
// PostHog's selector test cases can be written as PostHog writes them: the chain of each test event
// is built the way PostHog's test helpers build it.

export interface PhElement {
  tag_name?: string
  text?: string
  href?: string
  attr_id?: string
  attr_class?: string[] | null
  nth_child?: number
  nth_of_type?: number
  attributes?: Record<string, string>
}

const escape = (s: string) => s.replaceAll('"', '\\"')
// Python's sorted() on str compares code points
const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** The `elements_chain` of `elements`, the clicked element first. */
export function elementsToString(elements: PhElement[]): string {
  return elements
    .map((el) => {
      let out = el.tag_name ?? ''
      for (const c of [...(el.attr_class ?? [])].sort(byCodePoint)) out += `.${c.replaceAll('"', '')}`
      const attributes: Record<string, string> = {
        ...(el.text ? { text: el.text } : {}),
        'nth-child': String(el.nth_child ?? 0),
        'nth-of-type': String(el.nth_of_type ?? 0),
        ...(el.href ? { href: el.href } : {}),
        ...(el.attr_id ? { attr_id: el.attr_id } : {}),
        ...el.attributes,
      }
      const pairs = Object.entries(attributes)
        .map(([k, v]) => [escape(k), escape(v)] as const)
        .sort((a, b) => byCodePoint(a[0], b[0]))
      return `${out}:${pairs.map(([k, v]) => `${k}="${v}"`).join('')}`
    })
    .join(';')
}

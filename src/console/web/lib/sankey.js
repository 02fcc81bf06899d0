// A PathsQuery answer as a Sankey diagram's geometry, laid out by d3-sankey: one column per step,
// a node per step's item, a link per edge as wide as its count. Plain data (no DOM): the component
// draws it, the unit tests read it. Imported only when paths are shown (d3 is ~120 small modules).
import { sankey, sankeyLinkHorizontal } from 'd3-sankey'

/** `2_https://shop.example/pricing` → { step: 2, item: 'https://shop.example/pricing' }. */
export function parseNodeKey(key) {
  const s = String(key)
  const cut = s.indexOf('_')
  const step = Number(s.slice(0, cut))
  return cut > 0 && Number.isInteger(step) ? { step, item: s.slice(cut + 1) } : { step: 1, item: s }
}

/** A path item as PostHog shows it: a page's URL without its origin (`/pricing`), anything else as it is. */
export function itemLabel(item) {
  if (/^https?:\/\//i.test(item)) {
    try {
      const u = new URL(item)
      return `${u.pathname}${u.search}${u.hash}` || '/'
    } catch {
      return item
    }
  }
  return item === '' ? '(empty)' : item
}

/**
 * Nodes and links of the paths' edges (`{source, target, value, average_conversion_time}`), for
 * d3-sankey: node ids are the answer's step keys, so a page seen at two steps is two nodes.
 */
export function pathsGraph(edges) {
  const nodes = new Map()
  const node = (key) => {
    if (!nodes.has(key)) nodes.set(key, { id: key, ...parseNodeKey(key) })
    return key
  }
  const links = edges
    .filter((e) => e.source !== e.target)
    .map((e) => ({
      source: node(e.source),
      target: node(e.target),
      value: Number(e.value) || 0,
      average_conversion_time: e.average_conversion_time ?? null,
    }))
  for (const n of nodes.values()) n.label = itemLabel(n.item)
  return { nodes: [...nodes.values()], links }
}

/**
 * The laid-out diagram in a `width` × `height` box: nodes with their box (x0, x1, y0, y1) and
 * `value` (the larger of what enters and what leaves), links with their stroke `width` and SVG
 * `path`, each link's `source` and `target` the node objects.
 */
export function layoutPaths(edges, width, height, nodeWidth = 14) {
  const graph = pathsGraph(edges)
  if (!graph.links.length) return { nodes: [], links: [] }
  const layout = sankey()
    .nodeId((d) => d.id)
    // the column is the step, as the answer numbers it (a path that starts late starts further right)
    .nodeAlign((d) => d.step - 1)
    .nodeWidth(nodeWidth)
    .nodePadding(18)
    .extent([
      [1, 8],
      [width - 1, height - 8],
    ])
  const { nodes, links } = layout(graph)
  const path = sankeyLinkHorizontal()
  for (const l of links) l.path = path(l)
  return { nodes, links }
}

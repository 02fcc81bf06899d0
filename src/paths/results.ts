// Edge rows -> PostHog's PathsLink list. PostHog keeps only the edges reachable from a first step
// (its validate_results): when the edge limit or the weight bounds cut every edge into a node, the
// edges out of that node would float without a source, so they are left out too.

/** One edge of the paths graph, as PostHog's PathsLink. */
export interface PathsLink {
  source: string
  target: string
  value: number
  /** milliseconds from the source step to the target step, on average */
  average_conversion_time: number
}

/** The edges reachable from the `1_` nodes, in the order given. */
export function reachableEdges<T extends { source: string; target: string }>(edges: T[]): T[] {
  const out = new Map<string, string[]>()
  const stack: string[] = []
  for (const e of edges) {
    const targets = out.get(e.source)
    if (targets) targets.push(e.target)
    else out.set(e.source, [e.target])
    if (e.source.startsWith('1_')) stack.push(e.source)
  }
  const seen = new Set<string>()
  while (stack.length) {
    const node = stack.pop()!
    if (seen.has(node)) continue
    seen.add(node)
    for (const t of out.get(node) ?? []) if (!seen.has(t)) stack.push(t)
  }
  return edges.filter((e) => seen.has(e.source))
}

/** Rows of edgesSQL (source, target, value, average ms) as PathsLinks. */
export function formatPaths(rows: unknown[][]): PathsLink[] {
  const edges = rows.map(([source, target, value, avg]) => ({
    source: String(source),
    target: String(target),
    value: Number(value),
    average_conversion_time: Number(avg),
  }))
  return reachableEdges(edges)
}

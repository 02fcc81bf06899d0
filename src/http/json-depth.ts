// JSON.parse accepts any depth, but serializing (publishing to the log, storing) recurses and a
// body nested a few thousand levels deep overflows the stack. PostHog's capture parses with
// serde_json, whose recursion limit is 128 levels; Burrow refuses the same bodies.

export const MAX_JSON_DEPTH = 128

/** True when `value` has arrays/objects nested more than `max` levels (checked without recursion). */
export function nestsDeeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: [unknown, number][] = [[value, 1]]
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (v === null || typeof v !== 'object') continue
    if (depth > max) return true
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return false
}

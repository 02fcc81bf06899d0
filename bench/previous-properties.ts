// The encoding of a property bag into parallel key/value arrays that Burrow stored until issue #39
// (events, person and groups kept them beside the JSON text; properties are now the JSON alone). Kept
// here only as bench/property-representation.ts's baseline: the layout the choice was measured against.

/** Joins the keys of a nested path: `properties.$set.email` is stored under `$set\x1Femail`. */
export const PATH_SEPARATOR = '\x1F'

/** Nested objects are expanded this many levels below the top; deeper values stay in their parent's JSON. */
export const MAX_NESTED_DEPTH = 3

/** The parallel key/value arrays of a property bag. */
export interface EncodedProperties {
  keys: string[]
  values: string[]
}

/**
 * Strings are stored as they are, every other value (numbers, booleans, arrays, objects) as JSON text;
 * keys whose value is null or undefined are left out. An object value is stored whole under its key and
 * each of its members again under the joined path, depth first, so the arrays follow the object's order.
 */
export function encodeProperties(properties: Record<string, unknown>): EncodedProperties {
  const out: PropertySink = { keys: [], values: [], n: 0 }
  encodePropertiesInto(properties, out)
  return out
}

/**
 * Where encodePropertiesInto() writes: the first `n` entries of `keys` and `values` are the bag's;
 * entries past `n` are left from an earlier bag. A writer that encodes a bag per row reuses one sink
 * (no arrays made and grown per row).
 */
export interface PropertySink extends EncodedProperties {
  n: number
}

/** encodeProperties() into a sink, from its start: sets `out.n` to the number of pairs. */
export function encodePropertiesInto(properties: Record<string, unknown>, out: PropertySink): void {
  out.n = 0
  walk(properties, '', 0, out)
}

function walk(obj: Record<string, unknown>, prefix: string, depth: number, out: PropertySink): void {
  for (const key in obj) {
    // for-in without Object.keys' array: the same own enumerable string keys in the same order, as
    // long as nothing up the prototype chain is enumerable (parsed JSON and plain objects)
    if (!Object.hasOwn(obj, key)) continue
    const value = obj[key]
    if (value === null || value === undefined) continue
    const text = scalarText(value)
    if (text === undefined) continue
    const path = prefix === '' ? key : `${prefix}${PATH_SEPARATOR}${key}`
    const i = out.n++
    out.keys[i] = path
    out.values[i] = text
    if (depth < MAX_NESTED_DEPTH && isPlainObject(value)) walk(value, path, depth + 1, out)
  }
}

/** The stored text of one value; undefined for values JSON cannot represent (functions, symbols). */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  // String() spells a finite number as JSON does.
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'bigint') return value.toString()
  return JSON.stringify(value)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

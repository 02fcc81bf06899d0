// Shallow copies of property bags (plain objects from JSON) that stay fast on V8 when keys are added
// to them afterwards, and that treat every key as data: a bag may hold a key named `__proto__` or
// `toString`, as PostHog stores any JSON key. On Node 20, adding a key to an object made by spread or
// JSON.parse costs about a microsecond (more the more keys it has), and an object of ~30 keys set
// key by key becomes a slow dictionary (docs/performance.md, "Keys added to spread copies"). Used by
// the person rules, the GeoIP plugin and flag evaluation.

/** A property bag. */
export type Bag = Record<string, unknown>

// Keys up to which copyOf uses Object.assign (see there).
const ASSIGN_MAX_KEYS = 20

/**
 * A shallow copy of `source`, the same as `{ ...source }` (own enumerable keys, same order), made so
 * that keys added to it afterwards stay cheap. On Node 20, adding a key to an object made by spread
 * costs about a microsecond (more the more keys it has): every event's $set, $set_once and $group_N
 * were added that way. Object.assign sets each key instead of defining it, which differs only for
 * an own `__proto__` key (it would set the prototype): such a source is still spread. So is a large
 * one: set key by key, an object of about 30 keys turns into a slow dictionary (measured: a spread
 * copy is then cheaper overall, reads of the copy included).
 */
export function copyOf(source: Bag): Bag {
  if (Object.hasOwn(source, '__proto__')) return { ...source }
  let keys = 0
  // (counted without making the list of keys; nothing inherited is enumerable)
  for (const _ in source) if (++keys > ASSIGN_MAX_KEYS) return { ...source }
  return Object.assign({}, source)
}

/** `o[key] = value` as an own data property, also for `__proto__` (an assignment would set the prototype). */
export function setOwn(o: Bag, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
  else o[key] = value
}

/** `{ ...target, ...source }` into `target` itself: `source`'s keys defined on it, in order. */
export function assignOwn(target: Bag, source: Bag): Bag {
  for (const key of Object.keys(source)) setOwn(target, key, source[key])
  return target
}

/**
 * `{ ...a, ...b }`, made so that b's keys are cheap to add (see copyOf): Object.assign then
 * assignOwn, or spread when `a` has an own `__proto__` key. Unlike copyOf, also for a large `a`:
 * the keys b adds to a spread copy cost more than the slow dictionary an Object.assign copy of
 * that many keys may become (measured on 30-key properties plus 10 GeoIP keys: 32 -> 6 µs, JSON
 * of the result included; plugins/geoip.ts, flags/service.ts).
 */
export function merged(a: Bag, b: Bag): Bag {
  if (Object.hasOwn(a, '__proto__')) return { ...a, ...b }
  return assignOwn(Object.assign({}, a), b)
}

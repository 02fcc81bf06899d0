import type { Properties } from './types.ts'

/** What an event changes on a person: keys to set, keys to remove. */
export interface PropertyUpdates {
  toSet: Properties
  toUnset: string[]
  hasChanges: boolean
  // Whether toSet may hold a key the person does not have (adding keys costs more, see copyOf).
  addsKeys: boolean
  // Whether every key of the event's $set holds its $set value (same JSON) once the updates are
  // applied: then the event shows the person's properties as they are (apply-event.ts).
  setShown: boolean
}

/** The value as an object, if it is a plain one. */
export function asPlainObject(value: unknown): Properties | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Properties)
    : undefined
}

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
export function copyOf(source: Properties): Properties {
  if (Object.hasOwn(source, '__proto__')) return { ...source }
  let keys = 0
  // (counted without making the list of keys; nothing inherited is enumerable)
  for (const _ in source) if (++keys > ASSIGN_MAX_KEYS) return { ...source }
  return Object.assign({}, source)
}

// PostHog compares with !==, which rewrites equal objects; comparing structurally only saves a version bump
// and never changes the resulting properties.
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  return JSON.stringify(a) === JSON.stringify(b)
}

function unsetKeys(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((key): key is string => typeof key === 'string')
  const object = asPlainObject(value)
  return object ? Object.keys(object) : []
}

// The order matters and follows PostHog: $set_once only fills keys the person does not have yet (judged
// before this event), $set then overwrites (so within one event $set beats $set_once), and $unset removes
// keys the person had before this event.
// Property names are data: a person may have a key named `__proto__` or `toString`, as PostHog stores
// any JSON key. So keys are looked up as own keys only, and written as own data properties (an
// assignment to `__proto__` would set the object's prototype instead).
const ownValue = (o: Properties, key: string): unknown => (Object.hasOwn(o, key) ? o[key] : undefined)

/** `o[key] = value` as an own data property, also for `__proto__` (an assignment would set the prototype). */
export function setOwn(o: Properties, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
  else o[key] = value
}

export function computePropertyUpdates(eventProperties: Properties, current: Properties): PropertyUpdates {
  const toSet: Properties = {}
  const toUnset: string[] = []
  let hasChanges = false
  let addsKeys = false
  let setShown = true

  const setOnce = asPlainObject(eventProperties.$set_once)
  if (setOnce) {
    for (const key of Object.keys(setOnce)) {
      if (ownValue(current, key) === undefined) {
        setOwn(toSet, key, setOnce[key])
        hasChanges = true
        addsKeys = true
      }
    }
  }
  const set = asPlainObject(eventProperties.$set)
  if (set) {
    for (const key of Object.keys(set)) {
      const value = set[key]
      // (an undefined value is never shown as a key the person has: no JSON gives one)
      if (value === undefined) setShown = false
      const had = ownValue(current, key)
      if (!sameValue(had, value)) {
        setOwn(toSet, key, value)
        hasChanges = true
        if (had === undefined) addsKeys = true
      }
    }
  }
  for (const key of unsetKeys(eventProperties.$unset)) {
    if (Object.hasOwn(current, key)) {
      toUnset.push(key)
      hasChanges = true
      if (set && Object.hasOwn(set, key)) setShown = false
    }
  }
  return { toSet, toUnset, hasChanges, addsKeys, setShown }
}

/** `{ ...target, ...source }` into `target` itself: `source`'s keys defined on it, in order. */
export function assignOwn(target: Properties, source: Properties): Properties {
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
export function merged(a: Properties, b: Properties): Properties {
  if (Object.hasOwn(a, '__proto__')) return { ...a, ...b }
  return assignOwn(Object.assign({}, a), b)
}

/** The properties after the updates. */
export function applyPropertyUpdates(current: Properties, updates: PropertyUpdates): Properties {
  const next = updates.addsKeys ? assignOwn(copyOf(current), updates.toSet) : { ...current, ...updates.toSet }
  for (const key of updates.toUnset) delete next[key]
  return next
}

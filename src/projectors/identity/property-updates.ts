import { assignOwn, copyOf, setOwn } from '../../property-bags/copies.ts'
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

/** The properties after the updates. */
export function applyPropertyUpdates(current: Properties, updates: PropertyUpdates): Properties {
  const next = updates.addsKeys ? assignOwn(copyOf(current), updates.toSet) : { ...current, ...updates.toSet }
  for (const key of updates.toUnset) delete next[key]
  return next
}

import type { Properties } from './types.ts'

/** What an event changes on a person: keys to set, keys to remove. */
export interface PropertyUpdates {
  toSet: Properties
  toUnset: string[]
  hasChanges: boolean
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

function setOwn(o: Properties, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true })
  else o[key] = value
}

export function computePropertyUpdates(eventProperties: Properties, current: Properties): PropertyUpdates {
  const toSet: Properties = {}
  const toUnset: string[] = []
  let hasChanges = false

  const setOnce = asPlainObject(eventProperties.$set_once)
  if (setOnce) {
    for (const key of Object.keys(setOnce)) {
      if (ownValue(current, key) === undefined) {
        setOwn(toSet, key, setOnce[key])
        hasChanges = true
      }
    }
  }
  const set = asPlainObject(eventProperties.$set)
  if (set) {
    for (const key of Object.keys(set)) {
      const value = set[key]
      if (!sameValue(ownValue(current, key), value)) {
        setOwn(toSet, key, value)
        hasChanges = true
      }
    }
  }
  for (const key of unsetKeys(eventProperties.$unset)) {
    if (Object.hasOwn(current, key)) {
      toUnset.push(key)
      hasChanges = true
    }
  }
  return { toSet, toUnset, hasChanges }
}

/** The properties after the updates. */
export function applyPropertyUpdates(current: Properties, updates: PropertyUpdates): Properties {
  const next: Properties = { ...current, ...updates.toSet }
  for (const key of updates.toUnset) delete next[key]
  return next
}

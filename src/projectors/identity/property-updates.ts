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

const NO_KEYS: readonly string[] = []

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

/**
 * Properties that do not make an update of the person on their own (PostHog's
 * FILTERED_PERSON_UPDATE_PROPERTIES, nodejs/src/common/persons/person-property-utils.ts): they change
 * on nearly every event (the page, the window, the browser, the finer GeoIP fields). A change of one of them
 * is kept when the same event changes anything else; alone it leaves the person as it was, and the
 * event still shows the value (apply-event.ts shownProperties).
 */
export const FILTERED_PERSON_UPDATE_PROPERTIES: ReadonlySet<string> = new Set([
  '$current_url',
  '$pathname',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$browser',
  '$browser_version',
  '$device_type',
  '$raw_user_agent',
  '$os',
  '$os_name',
  '$os_version',
  '$geoip_postal_code',
  '$geoip_time_zone',
  '$geoip_latitude',
  '$geoip_longitude',
  '$geoip_accuracy_radius',
  '$geoip_subdivision_1_code',
  '$geoip_subdivision_1_name',
  '$geoip_subdivision_2_code',
  '$geoip_subdivision_2_name',
  '$geoip_subdivision_3_code',
  '$geoip_subdivision_3_name',
  '$geoip_city_confidence',
  '$geoip_country_confidence',
  '$geoip_postal_code_confidence',
  '$geoip_subdivision_1_confidence',
  '$geoip_subdivision_2_confidence',
])

// Events that state who a person is: their updates are never filtered (PostHog's PERSON_EVENTS).
const PERSON_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$set'])

// Events PostHog processes apart from the others, with no ordering against person updates: they never
// update a person's properties (PostHog's NO_PERSON_UPDATE_EVENTS). A person they create still takes
// their $set and $set_once (persons.ts createPerson), as in PostHog.
const NO_PERSON_UPDATE_EVENTS = new Set(['$exception', '$$heatmap'])

// (shared and frozen: what changes nothing is the same for every event)
const NO_UPDATES: PropertyUpdates = Object.freeze({
  toSet: Object.freeze({}),
  toUnset: Object.freeze([]) as unknown as string[],
  hasChanges: false,
  addsKeys: false,
  setShown: false,
})
const NOTHING_SHOWN: PropertyUpdates = Object.freeze({ ...NO_UPDATES, setShown: true })

/**
 * What `eventProperties`' $set_once, $set and $unset change on a person whose properties are `current`.
 * `eventName` given: PostHog's rules for ordinary events apply — $exception and $$heatmap change
 * nothing, and changes of FILTERED_PERSON_UPDATE_PROPERTIES alone change nothing either (a key the
 * person lacks, given by $set, an $unset, or any other key counts; then every change of the event is
 * kept). PostHog decides the last part per batch of its person store, keeping such changes in memory
 * until the batch is written; here it is decided per event, so that a replay with other batch
 * boundaries builds the same persons (docs/identity.md, "Updates PostHog filters"). Without
 * `eventName` (a merge's own update) every change counts.
 */
export function computePropertyUpdates(
  eventProperties: Properties,
  current: Properties,
  eventName?: string,
): PropertyUpdates {
  if (eventName !== undefined && NO_PERSON_UPDATE_EVENTS.has(eventName)) return NO_UPDATES
  const filtered = eventName !== undefined && !PERSON_EVENTS.has(eventName)
  // made on the first change (most events change nothing on their person)
  let toSet: Properties | undefined
  let toUnset: string[] | undefined
  let hasChanges = false
  // whether a change makes an update on its own (always, unless filtered)
  let counts = !filtered
  let addsKeys = false
  let setShown = true

  const setOnce = asPlainObject(eventProperties.$set_once)
  if (setOnce) {
    // (for-in here and below: no list of keys made per event; a bag from JSON inherits no
    // enumerable key)
    for (const key in setOnce) {
      if (ownValue(current, key) === undefined) {
        setOwn((toSet ??= {}), key, setOnce[key])
        hasChanges = true
        addsKeys = true
        if (!counts && !FILTERED_PERSON_UPDATE_PROPERTIES.has(key)) counts = true
      }
    }
  }
  const set = asPlainObject(eventProperties.$set)
  if (set) {
    for (const key in set) {
      const value = set[key]
      // (an undefined value is never shown as a key the person has: no JSON gives one)
      if (value === undefined) setShown = false
      const had = ownValue(current, key)
      if (!sameValue(had, value)) {
        setOwn((toSet ??= {}), key, value)
        hasChanges = true
        if (had === undefined) addsKeys = true
        if (!counts && (had === undefined || !FILTERED_PERSON_UPDATE_PROPERTIES.has(key))) counts = true
      }
    }
  }
  const unset = eventProperties.$unset
  for (const key of unset === undefined ? NO_KEYS : unsetKeys(unset)) {
    if (Object.hasOwn(current, key)) {
      ;(toUnset ??= []).push(key)
      hasChanges = true
      counts = true
      if (set && Object.hasOwn(set, key)) setShown = false
    }
  }
  if (hasChanges && !counts) return NO_UPDATES
  if (!hasChanges) return setShown ? NOTHING_SHOWN : NO_UPDATES
  return { toSet: toSet ?? {}, toUnset: toUnset ?? [], hasChanges, addsKeys, setShown }
}

/** The properties after the updates. */
export function applyPropertyUpdates(current: Properties, updates: PropertyUpdates): Properties {
  const next = updates.addsKeys ? assignOwn(copyOf(current), updates.toSet) : { ...current, ...updates.toSet }
  for (const key of updates.toUnset) delete next[key]
  return next
}

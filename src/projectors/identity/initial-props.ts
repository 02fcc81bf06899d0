import { copyOf } from '../../property-bags/copies.ts'
import { asPlainObject } from './property-updates.ts'
import type { Properties } from './types.ts'

// Event properties PostHog copies onto the person: the latest value via $set, the first one seen via
// $set_once as $initial_<name>.
const EVENT_TO_PERSON = [
  '$app_build',
  '$app_name',
  '$app_namespace',
  '$app_version',
  '$browser',
  '$browser_version',
  '$device_type',
  '$current_url',
  '$pathname',
  '$os',
  '$os_name',
  '$os_version',
  '$referring_domain',
  '$referrer',
  '$screen_height',
  '$screen_width',
  '$viewport_height',
  '$viewport_width',
  '$raw_user_agent',
]

/** PostHog's campaign parameters (utm_*, click ids): kept with their initial values on a person. */
export const CAMPAIGN = [
  'utm_source',
  'utm_medium',
  'utm_campaign',
  'utm_content',
  'utm_name',
  'utm_term',
  'gclid',
  'gad_source',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'twclid',
  'li_fat_id',
  'mc_cid',
  'igshid',
  'ttclid',
  'rdt_cid',
  'irclid',
  '_kx',
  'epik',
  'qclid',
  'sccid',
]

/** Event properties copied to the person (and as $initial_*), in PostHog's order. */
export const PERSON_MAPPED_EVENT_PROPERTIES: readonly string[] = [...EVENT_TO_PERSON, ...CAMPAIGN]

// An event has far fewer properties than the list is long: its keys are looked up here instead, then
// put back in the list's order (the order the person's properties are written in), by rank.
const MAPPED_RANK = new Map(PERSON_MAPPED_EVENT_PROPERTIES.map((k, i) => [k, i]))

// The $initial_ names of the mapped properties by rank, made once.
const INITIAL_NAMES = PERSON_MAPPED_EVENT_PROPERTIES.map((k) => `$initial_${k.replace('$', '')}`)

function mappedRanksOf(properties: Properties): number[] {
  const found: number[] = []
  // (for-in: no list of keys made per event; a bag from JSON inherits no enumerable key)
  for (const key in properties) {
    const rank = MAPPED_RANK.get(key)
    if (rank !== undefined) found.push(rank)
  }
  // Insertion sort: a handful of keys, and Array.prototype.sort allocates work space on every call.
  for (let i = 1; i < found.length; i++) {
    const rank = found[i]!
    let j = i - 1
    for (; j >= 0 && found[j]! > rank; j--) found[j + 1] = found[j]!
    found[j + 1] = rank
  }
  return found
}

// Returns new properties with $set / $set_once extended; the input is left untouched. Explicit values in
// the event's own $set / $set_once win over the derived ones.
export function withInitialAndCampaignProperties(properties: Properties): Properties {
  // A server SDK stamps the host's OS, not the user's device; it must not become the person's OS.
  const skipHostOs = properties.$is_server === true
  // Some SDKs send $os_name instead of $os: it only feeds $initial_os and is not kept under its own
  // name (nor as $initial_os_name), so it is not added below rather than added and deleted.
  const osName = properties.$os_name
  const osNameOnlyInitial = osName !== undefined && !skipHostOs
  let set: Properties | undefined
  let setOnce: Properties | undefined

  for (const rank of mappedRanksOf(properties)) {
    const key = PERSON_MAPPED_EVENT_PROPERTIES[rank]!
    if (skipHostOs && (key === '$os' || key === '$os_version')) continue
    if (set === undefined || setOnce === undefined) {
      const ownSet = asPlainObject(properties.$set)
      const ownSetOnce = asPlainObject(properties.$set_once)
      set = ownSet ? copyOf(ownSet) : {}
      setOnce = ownSetOnce ? copyOf(ownSetOnce) : {}
    }
    if (osNameOnlyInitial && key === '$os_name') continue
    const value = properties[key]
    if (!(key in set)) set[key] = value
    // A null first-touch value would block the real one forever, since $set_once never overwrites.
    const initial = INITIAL_NAMES[rank]!
    if (value !== null && value !== undefined && !(initial in setOnce)) setOnce[initial] = value
  }
  if (set === undefined || setOnce === undefined) return properties

  if (osNameOnlyInitial) {
    if (osName !== null && !('$initial_os' in setOnce)) setOnce.$initial_os = osName
    // The event's own $set / $set_once lose them too.
    if (Object.hasOwn(set, '$os_name')) delete set.$os_name
    if (Object.hasOwn(setOnce, '$initial_os_name')) delete setOnce.$initial_os_name
  }
  const out = copyOf(properties)
  out.$set = set
  out.$set_once = setOnce
  return out
}

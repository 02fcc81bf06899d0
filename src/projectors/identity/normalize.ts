import { withInitialAndCampaignProperties } from './initial-props.ts'
import { copyOf } from '../../property-bags/copies.ts'
import { withTopLevelUpdates } from '../../jetstream/messages.ts'
import type { DropReason, IdentityEvent, IngestionWarning, Properties } from './types.ts'

// These only make sense for a person profile; PostHog drops them when person processing is off.
const PERSON_ONLY_EVENTS = new Set(['$identify', '$create_alias', '$merge_dangerously', '$groupidentify'])

// Recording payloads are never mined for person properties.
const NO_PERSON_MAPPING_EVENTS = new Set(['$snapshot', '$performance_event'])

const PERSON_KEYS = ['$set', '$set_once', '$unset']

/** An event ready for the person rules, or why it is dropped. */
export interface NormalizedEvent {
  processPerson: boolean
  properties: Properties
  warnings: IngestionWarning[]
  drop?: DropReason
}

/** PostHog's normalization before the person rules: top-level updates, person mode, initial properties. */
export function normalizeEvent(event: IdentityEvent): NormalizedEvent {
  const warnings: IngestionWarning[] = []
  // The event's own properties are never changed: copied only where something is removed or added.
  let properties: Properties = withTopLevelUpdates(event.properties, event.$set, event.$set_once)

  const flag = properties.$process_person_profile
  // Only a real boolean false turns person processing off; anything else falls back to the default.
  const processPerson = flag !== false
  if (!processPerson && PERSON_ONLY_EVENTS.has(event.event)) {
    return { processPerson, properties, warnings, drop: 'invalid_event_when_process_person_profile_is_false' }
  }
  if (flag !== undefined && typeof flag !== 'boolean') {
    warnings.push({
      type: 'invalid_process_person_profile',
      details: { eventUuid: event.uuid, event: event.event, distinctId: event.distinct_id, value: flag },
    })
  }

  if (!NO_PERSON_MAPPING_EVENTS.has(event.event)) properties = withInitialAndCampaignProperties(properties)

  // $groupidentify describes a group, so its $set must not leak onto the sender's person.
  if (!processPerson || event.event === '$groupidentify') {
    properties = copyOf(properties)
    for (const key of PERSON_KEYS) delete properties[key]
  }
  // (no closure for this: a function made per event costs more than the copy it guards)
  if (!processPerson) {
    if (properties === event.properties) properties = copyOf(properties)
    properties.$process_person_profile = false
  } else if ('$process_person_profile' in properties) {
    if (properties === event.properties) properties = copyOf(properties)
    delete properties.$process_person_profile
  }

  return { processPerson, properties, warnings }
}

/** A property bag. */
export type Properties = Record<string, unknown>

/** A person as the identity state holds it. */
export interface PersonState {
  id: string
  createdAtMs: number
  properties: Properties
  isIdentified: boolean
  version: number
  distinctIds: string[]
  // Person ids whose already-stamped events now belong to this person: persons merged into it and
  // deterministic ids of distinct ids that were used personless before joining it. Kept here so a
  // later merge of this person can re-point them all at once (overrides stay one hop deep).
  overriddenIds: string[]
}

/** Which person a distinct id points to. */
export interface DistinctIdState {
  personId: string
  version: number
}

/** A group type and its index (0-4). */
export interface GroupTypeMapping {
  groupType: string
  groupTypeIndex: number
}

/** A group as the identity state holds it. */
export interface GroupState {
  groupTypeIndex: number
  groupKey: string
  createdAtMs: number
  properties: Properties
  version: number
}

/** A value, or a promise of it: what callers `await` either way. */
export type Awaitable<T> = T | Promise<T>

// Read side of the identity state of all teams. Writes never go through here: applyEvent returns them
// as IdentityChanges and the caller applies them (cache first, KV after) before the next event.
// Reads answered from memory may return the value itself (no promise per read on the hot path).
export interface IdentityStore {
  getDistinctId(teamId: number, distinctId: string): Awaitable<DistinctIdState | undefined>
  getPerson(teamId: number, personId: string): Awaitable<PersonState | undefined>
  // True once an event with $process_person_profile=false was seen for a distinct id without a person.
  isPersonlessDistinctId(teamId: number, distinctId: string): Awaitable<boolean>
  getGroupTypes(teamId: number): Awaitable<GroupTypeMapping[]>
  getGroup(teamId: number, groupTypeIndex: number, groupKey: string): Awaitable<GroupState | undefined>
}

/** An identity store that also takes an event's changes. */
export interface WritableIdentityStore extends IdentityStore {
  /** (a promise only when applying them has to read the state) */
  applyChanges(changes: IdentityChanges): Awaitable<void>
}

/** A person_distinct_id row to write. */
export interface DistinctIdRow {
  distinctId: string
  personId: string
  version: number
  isDeleted: boolean
}

/** A person_overrides row to write. */
export interface OverrideRow {
  oldPersonId: string
  overridePersonId: string
  version: number
}

/** The delete row of a merged-away person. */
export interface DeletedPersonRow {
  id: string
  createdAtMs: number
  version: number
}

/** A group_type_mapping row to write. */
export interface GroupTypeRow extends GroupTypeMapping {
  version: number
}

/** Everything one event changes in the identity state, as rows. */
export interface IdentityChanges {
  teamId: number
  persons: PersonState[]
  deletedPersons: DeletedPersonRow[]
  distinctIds: DistinctIdRow[]
  overrides: OverrideRow[]
  personlessDistinctIds: string[]
  groupTypes: GroupTypeRow[]
  groups: GroupState[]
}

/** An event as the person rules read it. */
export interface IdentityEvent {
  uuid: string
  event: string
  distinct_id: string
  properties: Properties
  timestamp_ms: number
  // Legacy top-level fields some SDKs send; merged under properties.$set / $set_once like PostHog does.
  $set?: Properties
  $set_once?: Properties
}

/** The ingestion warnings the rules raise (PostHog's names). */
export type IngestionWarningType =
  | 'cannot_merge_already_identified'
  | 'cannot_merge_with_illegal_distinct_id'
  | 'invalid_process_person_profile'

/** An ingestion warning with its details. */
export interface IngestionWarning {
  type: IngestionWarningType
  details: Record<string, unknown>
}

/** Why the rules drop an event. */
export type DropReason =
  'invalid_event_when_process_person_profile_is_false' | 'invalid_group_set' | 'group_key_too_long'

/** How the event's person was decided (PostHog's person_mode). */
export type PersonMode = 'full' | 'propertyless' | 'force_upgrade'

/** The five $group_N values of an event. */
export type GroupColumns = [string, string, string, string, string]

/** An event the rules keep: its person, properties and changes. */
export interface StampedEvent {
  dropped: false
  personId: string
  personProperties: Properties
  // True when personProperties is the person's state object itself (immutable, and the same object for
  // the person's next events until its properties change), not a copy made for this event.
  personPropertiesShared?: boolean
  personCreatedAtMs: number
  personMode: PersonMode
  groupColumns: GroupColumns
  // The event's properties as they should be stored: person-only keys stripped where PostHog strips them,
  // $group_N added, $process_person_profile normalised. The input object is never mutated.
  eventProperties: Properties
  /** the group type index of each type its $groups names (see storedEventProperties) */
  groupIndexes?: Record<string, number | null>
  warnings: IngestionWarning[]
  changes: IdentityChanges
}

/** An event the rules drop, with the reason. */
export interface DroppedEvent {
  dropped: true
  reason: DropReason
  warnings: IngestionWarning[]
  changes: IdentityChanges
}

/** What applyEvent decided. */
export type ApplyEventResult = StampedEvent | DroppedEvent

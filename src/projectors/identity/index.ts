export { applyEvent, storedEventProperties } from './apply-event.ts'
export { MAX_GROUP_KEY_LENGTH, MAX_GROUP_TYPES_PER_TEAM } from './groups.ts'
export { isDistinctIdIllegal } from './illegal-ids.ts'
export { changesNothing } from './session.ts'
export { MemoryIdentityStore } from './memory-store.ts'
export { PERSON_UUIDV5_NAMESPACE, PERSONLESS_CREATED_AT_MS, uuidFromDistinctId } from './person-uuid.ts'
export type {
  ApplyEventResult,
  Awaitable,
  DeletedPersonRow,
  DistinctIdRow,
  DistinctIdState,
  DroppedEvent,
  DropReason,
  GroupColumns,
  GroupState,
  GroupTypeMapping,
  GroupTypeRow,
  IdentityChanges,
  IdentityEvent,
  IdentityStore,
  IngestionWarning,
  IngestionWarningType,
  OverrideRow,
  PersonMode,
  PersonState,
  Properties,
  StampedEvent,
  WritableIdentityStore,
} from './types.ts'

import type {
  Awaitable,
  DistinctIdState,
  GroupState,
  GroupTypeMapping,
  IdentityStore,
  PersonState,
} from '../identity/index.ts'
import {
  distinctIdKeyRef,
  groupKey,
  groupTypesKey,
  type KeyRef,
  personKeyRef,
  personlessKeyRef,
} from '../identity-keys.ts'

/** A JSON value of the identity state (null: absent or removed). */
export type StateValue = unknown

// The raw value as the typed one: null (absent) becomes undefined, or `absent`.
function then<T>(v: Awaitable<StateValue | null>, absent?: T): Awaitable<T> {
  if (v instanceof Promise) return v.then((x) => (x ?? absent) as T)
  return (v ?? absent) as T
}

/**
 * The IdentityStore reads, typed, over one raw lookup by key: the committed store and a batch's
 * overlay differ only in that lookup. A lookup answered from memory is passed on as it is, not
 * wrapped in a promise.
 */
export abstract class IdentityReads implements IdentityStore {
  /** The value of a relative key of `team`; null when absent. `ref`: the key's KeyRef, when it has one. */
  protected abstract readKey(team: number, rel: string, ref?: KeyRef): Awaitable<StateValue | null>

  private readRef(team: number, ref: KeyRef): Awaitable<StateValue | null> {
    return this.readKey(team, ref.rel, ref)
  }

  /** The person a distinct id points to, if any. */
  getDistinctId(team: number, distinctId: string): Awaitable<DistinctIdState | undefined> {
    return then(this.readRef(team, distinctIdKeyRef(team, distinctId)))
  }
  /** A person by id, if it exists. */
  getPerson(team: number, id: string): Awaitable<PersonState | undefined> {
    return then(this.readRef(team, personKeyRef(team, id)))
  }
  /** Whether events of this distinct id were already stamped with its personless person id. */
  isPersonlessDistinctId(team: number, distinctId: string): Awaitable<boolean> {
    const v = this.readRef(team, personlessKeyRef(team, distinctId))
    return v instanceof Promise ? v.then((x) => x === true) : v === true
  }
  /** The team's group types in index order; empty when none. */
  getGroupTypes(team: number): Awaitable<GroupTypeMapping[]> {
    return then(this.readKey(team, groupTypesKey(team)), [] as GroupTypeMapping[])
  }
  /** A group by type index and key, if it exists. */
  getGroup(team: number, index: number, key: string): Awaitable<GroupState | undefined> {
    return then(this.readKey(team, groupKey(team, index, key)))
  }
}

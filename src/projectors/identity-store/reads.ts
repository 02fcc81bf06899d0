import type {
  DistinctIdState,
  GroupState,
  GroupTypeMapping,
  IdentityStore,
  PersonState,
} from '../identity/index.ts'
import { distinctIdKey, groupKey, groupTypesKey, personKey, personlessKey } from '../identity-keys.ts'

/** A JSON value of the identity state (null: absent or removed). */
export type StateValue = unknown

/**
 * The IdentityStore reads, typed, over one raw lookup by key: the committed store and a batch's
 * overlay differ only in that lookup.
 */
export abstract class IdentityReads implements IdentityStore {
  /** The value of a relative key of `team`; null when absent. */
  protected abstract readKey(team: number, rel: string): Promise<StateValue | null>

  /** The person a distinct id points to, if any. */
  async getDistinctId(team: number, distinctId: string) {
    return ((await this.readKey(team, distinctIdKey(team, distinctId))) ?? undefined) as
      DistinctIdState | undefined
  }
  /** A person by id, if it exists. */
  async getPerson(team: number, id: string) {
    return ((await this.readKey(team, personKey(team, id))) ?? undefined) as PersonState | undefined
  }
  /** Whether events of this distinct id were already stamped with its personless person id. */
  async isPersonlessDistinctId(team: number, distinctId: string) {
    return (await this.readKey(team, personlessKey(team, distinctId))) === true
  }
  /** The team's group types in index order; empty when none. */
  async getGroupTypes(team: number) {
    return ((await this.readKey(team, groupTypesKey(team))) ?? []) as GroupTypeMapping[]
  }
  /** A group by type index and key, if it exists. */
  async getGroup(team: number, index: number, key: string) {
    return ((await this.readKey(team, groupKey(team, index, key))) ?? undefined) as GroupState | undefined
  }
}

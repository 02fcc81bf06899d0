import type {
  DistinctIdState,
  GroupState,
  GroupTypeMapping,
  IdentityChanges,
  OverrideRow,
  PersonState,
  WritableIdentityStore,
} from './types.ts'

function clone<T>(value: T): T {
  return structuredClone(value)
}

// Identity state held in process memory: for tests, and the shape a cache in front of the KV bucket takes.
export class MemoryIdentityStore implements WritableIdentityStore {
  readonly persons = new Map<string, PersonState>()
  readonly distinctIds = new Map<string, DistinctIdState>()
  readonly personless = new Set<string>()
  readonly groupTypes = new Map<number, GroupTypeMapping[]>()
  readonly groups = new Map<string, GroupState>()
  readonly overrides = new Map<string, OverrideRow>()

  private key(teamId: number, ...parts: (string | number)[]): string {
    return [teamId, ...parts].join('\u0000')
  }

  async getDistinctId(teamId: number, distinctId: string): Promise<DistinctIdState | undefined> {
    const row = this.distinctIds.get(this.key(teamId, distinctId))
    return row && clone(row)
  }

  async getPerson(teamId: number, personId: string): Promise<PersonState | undefined> {
    const person = this.persons.get(this.key(teamId, personId))
    return person && clone(person)
  }

  async isPersonlessDistinctId(teamId: number, distinctId: string): Promise<boolean> {
    return this.personless.has(this.key(teamId, distinctId))
  }

  async getGroupTypes(teamId: number): Promise<GroupTypeMapping[]> {
    return clone(this.groupTypes.get(teamId) ?? [])
  }

  async getGroup(teamId: number, groupTypeIndex: number, groupKey: string): Promise<GroupState | undefined> {
    const group = this.groups.get(this.key(teamId, groupTypeIndex, groupKey))
    return group && clone(group)
  }

  async applyChanges(changes: IdentityChanges): Promise<void> {
    const { teamId } = changes
    for (const person of changes.persons) this.persons.set(this.key(teamId, person.id), clone(person))
    for (const deleted of changes.deletedPersons) this.persons.delete(this.key(teamId, deleted.id))
    for (const row of changes.distinctIds) {
      const key = this.key(teamId, row.distinctId)
      if (row.isDeleted) this.distinctIds.delete(key)
      else this.distinctIds.set(key, { personId: row.personId, version: row.version })
    }
    for (const row of changes.overrides) this.overrides.set(this.key(teamId, row.oldPersonId), { ...row })
    for (const distinctId of changes.personlessDistinctIds) this.personless.add(this.key(teamId, distinctId))
    if (changes.groupTypes.length > 0) {
      const types = this.groupTypes.get(teamId) ?? []
      for (const row of changes.groupTypes) {
        if (!types.some((known) => known.groupType === row.groupType)) {
          types.push({ groupType: row.groupType, groupTypeIndex: row.groupTypeIndex })
        }
      }
      this.groupTypes.set(teamId, types)
    }
    for (const group of changes.groups) {
      this.groups.set(this.key(teamId, group.groupTypeIndex, group.groupKey), clone(group))
    }
  }

  // The person an already-stored event stamped with `personId` belongs to now.
  resolvePersonId(teamId: number, personId: string): string {
    return this.overrides.get(this.key(teamId, personId))?.overridePersonId ?? personId
  }
}

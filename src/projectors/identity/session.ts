import type {
  DeletedPersonRow,
  DistinctIdRow,
  DistinctIdState,
  GroupState,
  GroupTypeMapping,
  GroupTypeRow,
  IdentityChanges,
  IdentityStore,
  OverrideRow,
  PersonState,
} from './types.ts'

function groupId(groupTypeIndex: number, groupKey: string): string {
  return `${groupTypeIndex}\u0000${groupKey}`
}

// One event's view of the identity state: reads fall through to the store, writes stay here so later steps
// of the same event see them, and become the event's IdentityChanges.
export class IdentitySession {
  private readonly persons = new Map<string, PersonState | null>()
  private readonly distinctIds = new Map<string, DistinctIdState>()
  private readonly personless = new Set<string>()
  private readonly groups = new Map<string, GroupState>()
  private groupTypes: GroupTypeMapping[] | undefined
  private readonly touchedPersons = new Set<string>()
  private readonly distinctIdRows: DistinctIdRow[] = []
  private readonly deletedPersons: DeletedPersonRow[] = []
  private readonly overrides: OverrideRow[] = []
  private readonly newPersonless: string[] = []
  private readonly groupTypeRows: GroupTypeRow[] = []
  private readonly touchedGroups = new Set<string>()

  constructor(
    private readonly store: IdentityStore,
    readonly teamId: number,
  ) {}

  async getDistinctId(distinctId: string): Promise<DistinctIdState | undefined> {
    return this.distinctIds.get(distinctId) ?? (await this.store.getDistinctId(this.teamId, distinctId))
  }

  async getPerson(personId: string): Promise<PersonState | undefined> {
    const local = this.persons.get(personId)
    if (local !== undefined) return local ?? undefined
    return this.store.getPerson(this.teamId, personId)
  }

  async getPersonByDistinctId(distinctId: string): Promise<PersonState | undefined> {
    const row = await this.getDistinctId(distinctId)
    if (!row) return undefined
    const person = await this.getPerson(row.personId)
    if (!person) throw new Error(`identity state broken: distinct id ${distinctId} points at missing person`)
    return person
  }

  async isPersonless(distinctId: string): Promise<boolean> {
    return (
      this.personless.has(distinctId) || (await this.store.isPersonlessDistinctId(this.teamId, distinctId))
    )
  }

  markPersonless(distinctId: string): void {
    this.personless.add(distinctId)
    this.newPersonless.push(distinctId)
  }

  putPerson(person: PersonState): void {
    this.persons.set(person.id, person)
    this.touchedPersons.add(person.id)
  }

  deletePerson(person: PersonState, version: number): void {
    this.persons.set(person.id, null)
    this.touchedPersons.delete(person.id)
    this.deletedPersons.push({ id: person.id, createdAtMs: person.createdAtMs, version })
  }

  setDistinctId(distinctId: string, personId: string, version: number): void {
    this.distinctIds.set(distinctId, { personId, version })
    this.distinctIdRows.push({ distinctId, personId, version, isDeleted: false })
  }

  addOverride(oldPersonId: string, overridePersonId: string, version: number): void {
    this.overrides.push({ oldPersonId, overridePersonId, version })
  }

  async getGroupTypes(): Promise<GroupTypeMapping[]> {
    if (!this.groupTypes) this.groupTypes = [...(await this.store.getGroupTypes(this.teamId))]
    return this.groupTypes
  }

  async addGroupType(mapping: GroupTypeMapping): Promise<void> {
    ;(await this.getGroupTypes()).push(mapping)
    this.groupTypeRows.push({ ...mapping, version: 1 })
  }

  async getGroup(groupTypeIndex: number, groupKey: string): Promise<GroupState | undefined> {
    return (
      this.groups.get(groupId(groupTypeIndex, groupKey)) ??
      (await this.store.getGroup(this.teamId, groupTypeIndex, groupKey))
    )
  }

  putGroup(group: GroupState): void {
    const id = groupId(group.groupTypeIndex, group.groupKey)
    this.groups.set(id, group)
    this.touchedGroups.add(id)
  }

  toChanges(): IdentityChanges {
    const persons: PersonState[] = []
    for (const id of this.touchedPersons) {
      const person = this.persons.get(id)
      if (person) persons.push(person)
    }
    const groups: GroupState[] = []
    for (const id of this.touchedGroups) {
      const group = this.groups.get(id)
      if (group) groups.push(group)
    }
    return {
      teamId: this.teamId,
      persons,
      deletedPersons: this.deletedPersons,
      distinctIds: this.distinctIdRows,
      overrides: this.overrides,
      personlessDistinctIds: this.newPersonless,
      groupTypes: this.groupTypeRows,
      groups,
    }
  }
}

/** Changes that change nothing. */
export function emptyChanges(teamId: number): IdentityChanges {
  return {
    teamId,
    persons: [],
    deletedPersons: [],
    distinctIds: [],
    overrides: [],
    personlessDistinctIds: [],
    groupTypes: [],
    groups: [],
  }
}

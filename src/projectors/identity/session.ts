import type {
  Awaitable,
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

// The shared empty list of a session that added nothing, frozen: whoever pushes to it fails loudly
// (the session replaces it with a list of its own first, see `own`).
const NONE = Object.freeze([]) as never[]

/** `list`, or a new list of its own when it is the shared empty one. */
function own<T>(list: T[]): T[] {
  return list === NONE ? [] : list
}

/** The values of the touched ids that still have one; the shared empty list when none was touched. */
function touched<T>(ids: Set<string> | undefined, values: Map<string, T | null> | undefined): T[] {
  if (!ids) return NONE
  const out: T[] = []
  for (const id of ids) {
    const value = values?.get(id)
    if (value) out.push(value)
  }
  return out
}

function existingPerson(distinctId: string, person: PersonState | undefined): PersonState {
  if (!person) throw new Error(`identity state broken: distinct id ${distinctId} points at missing person`)
  return person
}

function groupId(groupTypeIndex: number, groupKey: string): string {
  return `${groupTypeIndex}\u0000${groupKey}`
}

// One event's view of the identity state: reads fall through to the store, writes stay here so later steps
// of the same event see them, and become the event's IdentityChanges. Most events read and write little:
// each collection is made on first use (a session per event, so every one made is garbage soon after).
export class IdentitySession {
  private persons?: Map<string, PersonState | null>
  private distinctIds?: Map<string, DistinctIdState>
  private personless?: Set<string>
  private groups?: Map<string, GroupState>
  private groupTypes: GroupTypeMapping[] | undefined
  private touchedPersons?: Set<string>
  private distinctIdRows: DistinctIdRow[] = NONE
  private deletedPersons: DeletedPersonRow[] = NONE
  private overrides: OverrideRow[] = NONE
  private newPersonless: string[] = NONE
  private groupTypeRows: GroupTypeRow[] = NONE
  private touchedGroups?: Set<string>

  constructor(
    private readonly store: IdentityStore,
    readonly teamId: number,
  ) {}

  getDistinctId(distinctId: string): Awaitable<DistinctIdState | undefined> {
    return this.distinctIds?.get(distinctId) ?? this.store.getDistinctId(this.teamId, distinctId)
  }

  getPerson(personId: string): Awaitable<PersonState | undefined> {
    const local = this.persons?.get(personId)
    if (local !== undefined) return local ?? undefined
    return this.store.getPerson(this.teamId, personId)
  }

  // Answered without a promise when both reads are (the usual case: the state is in memory).
  getPersonByDistinctId(distinctId: string): Awaitable<PersonState | undefined> {
    const row = this.getDistinctId(distinctId)
    if (row instanceof Promise) return row.then((r) => this.personOfRow(distinctId, r))
    return this.personOfRow(distinctId, row)
  }

  private personOfRow(
    distinctId: string,
    row: DistinctIdState | undefined,
  ): Awaitable<PersonState | undefined> {
    if (!row) return undefined
    const person = this.getPerson(row.personId)
    if (person instanceof Promise) return person.then((p) => existingPerson(distinctId, p))
    return existingPerson(distinctId, person)
  }

  isPersonless(distinctId: string): Awaitable<boolean> {
    return (
      this.personless?.has(distinctId) === true || this.store.isPersonlessDistinctId(this.teamId, distinctId)
    )
  }

  markPersonless(distinctId: string): void {
    ;(this.personless ??= new Set()).add(distinctId)
    ;(this.newPersonless = own(this.newPersonless)).push(distinctId)
  }

  putPerson(person: PersonState): void {
    ;(this.persons ??= new Map()).set(person.id, person)
    ;(this.touchedPersons ??= new Set()).add(person.id)
  }

  deletePerson(person: PersonState, version: number): void {
    ;(this.persons ??= new Map()).set(person.id, null)
    this.touchedPersons?.delete(person.id)
    ;(this.deletedPersons = own(this.deletedPersons)).push({
      id: person.id,
      createdAtMs: person.createdAtMs,
      version,
    })
  }

  setDistinctId(distinctId: string, personId: string, version: number): void {
    ;(this.distinctIds ??= new Map()).set(distinctId, { personId, version })
    ;(this.distinctIdRows = own(this.distinctIdRows)).push({
      distinctId,
      personId,
      version,
      isDeleted: false,
    })
  }

  addOverride(oldPersonId: string, overridePersonId: string, version: number): void {
    ;(this.overrides = own(this.overrides)).push({ oldPersonId, overridePersonId, version })
  }

  async getGroupTypes(): Promise<GroupTypeMapping[]> {
    if (!this.groupTypes) this.groupTypes = [...(await this.store.getGroupTypes(this.teamId))]
    return this.groupTypes
  }

  async addGroupType(mapping: GroupTypeMapping): Promise<void> {
    ;(await this.getGroupTypes()).push(mapping)
    ;(this.groupTypeRows = own(this.groupTypeRows)).push({ ...mapping, version: 1 })
  }

  getGroup(groupTypeIndex: number, groupKey: string): Awaitable<GroupState | undefined> {
    return (
      this.groups?.get(groupId(groupTypeIndex, groupKey)) ??
      this.store.getGroup(this.teamId, groupTypeIndex, groupKey)
    )
  }

  putGroup(group: GroupState): void {
    const id = groupId(group.groupTypeIndex, group.groupKey)
    ;(this.groups ??= new Map()).set(id, group)
    ;(this.touchedGroups ??= new Set()).add(id)
  }

  toChanges(): IdentityChanges {
    const persons = touched(this.touchedPersons, this.persons)
    const groups = touched(this.touchedGroups, this.groups)
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

/** Whether the changes change nothing (most events': their rows and overlay are then left alone). */
export function changesNothing(c: IdentityChanges): boolean {
  return (
    c.persons.length === 0 &&
    c.deletedPersons.length === 0 &&
    c.distinctIds.length === 0 &&
    c.overrides.length === 0 &&
    c.personlessDistinctIds.length === 0 &&
    c.groupTypes.length === 0 &&
    c.groups.length === 0
  )
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

import type { Awaitable, IdentityChanges, WritableIdentityStore } from '../identity/index.ts'
import {
  distinctIdKey,
  groupKey,
  groupTypesKey,
  type KeyRef,
  personKey,
  personlessKey,
} from '../identity-keys.ts'
import { io } from '../errors.ts'
import { IdentityReads, type StateValue } from './reads.ts'
import type { CommitValue, KvIdentityStore } from './store.ts'

/**
 * One batch's uncommitted identity state over the committed store: applyEvent reads through it, its
 * changes land here, and at the end `values()` is what the batch commits. Dropping it undoes the batch.
 */
export class IdentityOverlay extends IdentityReads implements WritableIdentityStore {
  private readonly local = new Map<string, CommitValue>()

  /**
   * `parent`: the overlay of the previous batch while its commit is still in flight (pipelining); it
   * is detached once that commit is done, when the store holds the same values.
   */
  constructor(
    private readonly base: KvIdentityStore,
    private parent?: IdentityOverlay,
  ) {
    super()
  }

  /** Stops reading through the parent (its commit is done). */
  detach(): void {
    this.parent = undefined
  }

  private lookup(rel: string): CommitValue | undefined {
    return this.local.get(rel) ?? this.parent?.lookup(rel)
  }

  // The identity state is immutable (docs/projectors.md, "Identity state"): the rules never change a
  // value they read, they build a new one and set that, and nothing changes a value once set. So values
  // are handed out and taken as they are, shared between the committed cache, the overlays, the
  // batch's rows and the next events, never copied.
  private get(team: number, rel: string, ref?: KeyRef): Awaitable<StateValue | null> {
    const hit = this.lookup(rel)
    if (hit) return hit.value
    // Most reads are answered from memory: no round trip, no promise, no wrapping for I/O errors.
    const known = this.base.peek(team, rel, ref)
    if (known !== undefined) return known
    return io(() => this.base.read(team, rel))
  }

  private set(team: number, rel: string, value: StateValue | null): void {
    this.local.set(rel, { team, value })
  }

  /** The batch's final values by relative key: what it commits. */
  values(): Map<string, CommitValue> {
    return this.local
  }

  protected readKey(team: number, rel: string, ref?: KeyRef): Awaitable<StateValue | null> {
    return this.get(team, rel, ref)
  }

  /**
   * Applies one event's changes, in event order. Without a promise unless the event added group
   * types (their list is read first): most events change nothing, and the projection awaits per event.
   */
  applyChanges(c: IdentityChanges): Awaitable<void> {
    const team = c.teamId
    for (const p of c.persons) this.set(team, personKey(team, p.id), p)
    for (const d of c.deletedPersons) this.set(team, personKey(team, d.id), null)
    for (const r of c.distinctIds) {
      this.set(
        team,
        distinctIdKey(team, r.distinctId),
        r.isDeleted ? null : { personId: r.personId, version: r.version },
      )
    }
    for (const id of c.personlessDistinctIds) this.set(team, personlessKey(team, id), true)
    if (c.groupTypes.length > 0) return this.applyGroupChanges(c)
    for (const g of c.groups) this.set(team, groupKey(team, g.groupTypeIndex, g.groupKey), g)
  }

  private async applyGroupChanges(c: IdentityChanges): Promise<void> {
    const team = c.teamId
    // A new list: the one read is shared with the cache and earlier overlays.
    const types = [...(await this.getGroupTypes(team))]
    for (const row of c.groupTypes) {
      if (!types.some((t) => t.groupType === row.groupType)) {
        types.push({ groupType: row.groupType, groupTypeIndex: row.groupTypeIndex })
      }
    }
    this.set(team, groupTypesKey(team), types)
    for (const g of c.groups) this.set(team, groupKey(team, g.groupTypeIndex, g.groupKey), g)
  }
}

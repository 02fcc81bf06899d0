import type { DistinctIdChange, PersonChange, PersonChanges } from '../persons/change-feed.ts'
import type { TableLines } from './batch.ts'
import type { IdentityChanges } from './identity/index.ts'
import {
  DISTINCT_ID_COLUMNS,
  deletedPersonLine,
  distinctIdLine,
  GROUP_COLUMNS,
  GROUP_TYPE_COLUMNS,
  groupLine,
  groupTypeLine,
  OVERRIDE_COLUMNS,
  overrideLine,
  PERSON_COLUMNS,
  personLine,
} from './rows.ts'

/** The identity rows of a batch, one per key: the last state wins (the tables are versioned). */
export class IdentityRows {
  private readonly persons = new Map<string, string>()
  private readonly distinctIds = new Map<string, string>()
  private readonly overrides = new Map<string, string>()
  private readonly groups = new Map<string, string>()
  private readonly groupTypes = new Map<string, string>()
  // What the person change feed says about the batch (src/persons/change-feed.ts), last state per key.
  private readonly personFeed = new Map<
    number,
    { persons: Map<string, PersonChange>; ids: Map<string, DistinctIdChange> }
  >()

  private feedOf(team: number) {
    let f = this.personFeed.get(team)
    if (!f) this.personFeed.set(team, (f = { persons: new Map(), ids: new Map() }))
    return f
  }

  /** Adds one event's changes (in event order). */
  add(c: IdentityChanges): void {
    const t = c.teamId
    for (const p of c.persons) this.persons.set(`${t}|${p.id}`, personLine(t, p))
    for (const p of c.deletedPersons) this.persons.set(`${t}|${p.id}`, deletedPersonLine(t, p))
    for (const r of c.distinctIds) this.distinctIds.set(`${t}|${r.distinctId}`, distinctIdLine(t, r))
    if (c.persons.length || c.deletedPersons.length || c.distinctIds.length) {
      const f = this.feedOf(t)
      for (const p of c.persons)
        f.persons.set(p.id, { id: p.id, version: p.version, deleted: false, properties: p.properties })
      for (const p of c.deletedPersons) f.persons.set(p.id, { id: p.id, version: p.version, deleted: true })
      for (const r of c.distinctIds) {
        f.ids.set(r.distinctId, {
          distinct_id: r.distinctId,
          person_id: r.personId,
          version: r.version,
          deleted: r.isDeleted,
        })
      }
    }
    for (const r of c.overrides) this.overrides.set(`${t}|${r.oldPersonId}`, overrideLine(t, r))
    for (const g of c.groups) this.groups.set(`${t}|${g.groupTypeIndex}|${g.groupKey}`, groupLine(t, g))
    for (const r of c.groupTypes) this.groupTypes.set(`${t}|${r.groupType}`, groupTypeLine(t, r))
  }

  /** The batch's person changes per team, for the change feed once the rows are written. */
  personChanges(): PersonChanges[] {
    return [...this.personFeed].map(([team, f]) => ({
      team_id: team,
      persons: [...f.persons.values()],
      distinct_ids: [...f.ids.values()],
    }))
  }

  /** The rows per table, in the order they are written. */
  tables(): TableLines[] {
    return [
      { table: 'person', columns: PERSON_COLUMNS, lines: [...this.persons.values()] },
      { table: 'person_distinct_id', columns: DISTINCT_ID_COLUMNS, lines: [...this.distinctIds.values()] },
      { table: 'person_overrides', columns: OVERRIDE_COLUMNS, lines: [...this.overrides.values()] },
      { table: 'groups', columns: GROUP_COLUMNS, lines: [...this.groups.values()] },
      { table: 'group_type_mapping', columns: GROUP_TYPE_COLUMNS, lines: [...this.groupTypes.values()] },
    ]
  }
}

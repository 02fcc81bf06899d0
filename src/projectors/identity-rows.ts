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

  /** Adds one event's changes (in event order). */
  add(c: IdentityChanges): void {
    const t = c.teamId
    for (const p of c.persons) this.persons.set(`${t}|${p.id}`, personLine(t, p))
    for (const p of c.deletedPersons) this.persons.set(`${t}|${p.id}`, deletedPersonLine(t, p))
    for (const r of c.distinctIds) this.distinctIds.set(`${t}|${r.distinctId}`, distinctIdLine(t, r))
    for (const r of c.overrides) this.overrides.set(`${t}|${r.oldPersonId}`, overrideLine(t, r))
    for (const g of c.groups) this.groups.set(`${t}|${g.groupTypeIndex}|${g.groupKey}`, groupLine(t, g))
    for (const r of c.groupTypes) this.groupTypes.set(`${t}|${r.groupType}`, groupTypeLine(t, r))
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

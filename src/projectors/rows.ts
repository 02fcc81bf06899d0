// TabSeparated lines for each projected table, in the column order of the lists beside them.
import type {
  DeletedPersonRow,
  DistinctIdRow,
  GroupState,
  GroupTypeRow,
  OverrideRow,
  PersonState,
} from './identity/index.ts'
import { encodeProperties } from './properties.ts'
import { tsvArray, tsvDateTime, tsvString } from './tsv.ts'

/** The fields of one events row. */
export interface EventRow {
  teamId: number
  uuid: string
  event: string
  distinctId: string
  personId: string
  timestampMs: number
  properties: Record<string, unknown>
  personProperties: Record<string, unknown>
  elementsChain: string
  sessionId: string
  groups: readonly string[]
  createdAtMs: number
  seq: number
  offset: number
}

/** An events row as a TabSeparated line, in EVENT_COLUMNS order. */
export function eventLine(r: EventRow): string {
  const { keys, values } = encodeProperties(r.properties)
  return `${[
    String(r.teamId),
    r.uuid,
    tsvString(r.event),
    tsvString(r.distinctId),
    r.personId,
    tsvDateTime(r.timestampMs),
    String(r.timestampMs),
    tsvString(JSON.stringify(r.properties)),
    tsvArray(keys),
    tsvArray(values),
    tsvString(JSON.stringify(r.personProperties)),
    tsvString(r.elementsChain),
    tsvString(r.sessionId),
    tsvString(r.groups[0] ?? ''),
    tsvString(r.groups[1] ?? ''),
    tsvString(r.groups[2] ?? ''),
    tsvString(r.groups[3] ?? ''),
    tsvString(r.groups[4] ?? ''),
    tsvDateTime(r.createdAtMs),
    String(r.seq),
    String(r.offset),
  ].join('\t')}\n`
}

/** Columns of person rows, in line order. */
export const PERSON_COLUMNS = [
  'team_id',
  'id',
  'created_at',
  'created_at_ms',
  'properties',
  'prop_keys',
  'prop_values',
  'is_identified',
  'is_deleted',
  'version',
]

function propertyFields(properties: Record<string, unknown>): string[] {
  const { keys, values } = encodeProperties(properties)
  return [tsvString(JSON.stringify(properties)), tsvArray(keys), tsvArray(values)]
}

/** A person row as a TabSeparated line. */
export function personLine(teamId: number, p: PersonState): string {
  return `${[
    String(teamId),
    p.id,
    tsvDateTime(p.createdAtMs),
    String(p.createdAtMs),
    ...propertyFields(p.properties),
    p.isIdentified ? '1' : '0',
    '0',
    String(p.version),
  ].join('\t')}\n`
}

/** The delete row of a person as a TabSeparated line. */
export function deletedPersonLine(teamId: number, p: DeletedPersonRow): string {
  return `${[
    String(teamId),
    p.id,
    tsvDateTime(p.createdAtMs),
    String(p.createdAtMs),
    ...propertyFields({}),
    '0',
    '1',
    String(p.version),
  ].join('\t')}\n`
}

/** Columns of person_distinct_id rows, in line order. */
export const DISTINCT_ID_COLUMNS = ['team_id', 'distinct_id', 'person_id', 'is_deleted', 'version']

/** A person_distinct_id row as a TabSeparated line. */
export function distinctIdLine(teamId: number, r: DistinctIdRow): string {
  const deleted = r.isDeleted ? '1' : '0'
  const fields = [String(teamId), tsvString(r.distinctId), r.personId, deleted, String(r.version)]
  return `${fields.join('\t')}\n`
}

/** Columns of person_overrides rows, in line order. */
export const OVERRIDE_COLUMNS = ['team_id', 'old_person_id', 'override_person_id', 'version']

/** A person_overrides row as a TabSeparated line. */
export function overrideLine(teamId: number, r: OverrideRow): string {
  return `${[String(teamId), r.oldPersonId, r.overridePersonId, String(r.version)].join('\t')}\n`
}

/** Columns of groups rows, in line order. */
export const GROUP_COLUMNS = [
  'team_id',
  'group_type_index',
  'group_key',
  'created_at',
  'properties',
  'prop_keys',
  'prop_values',
  'version',
]

/** A groups row as a TabSeparated line. */
export function groupLine(teamId: number, g: GroupState): string {
  return `${[
    String(teamId),
    String(g.groupTypeIndex),
    tsvString(g.groupKey),
    tsvDateTime(g.createdAtMs),
    ...propertyFields(g.properties),
    String(g.version),
  ].join('\t')}\n`
}

/** Columns of group_type_mapping rows, in line order. */
export const GROUP_TYPE_COLUMNS = ['team_id', 'group_type', 'group_type_index', 'version']

/** A group_type_mapping row as a TabSeparated line. */
export function groupTypeLine(teamId: number, r: GroupTypeRow): string {
  const fields = [String(teamId), tsvString(r.groupType), String(r.groupTypeIndex), String(r.version)]
  return `${fields.join('\t')}\n`
}

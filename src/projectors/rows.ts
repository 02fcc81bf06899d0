// TabSeparated lines for each projected table, in the column order of the lists beside them.
import type {
  DeletedPersonRow,
  DistinctIdRow,
  GroupState,
  GroupTypeRow,
  OverrideRow,
  PersonState,
} from './identity/index.ts'
import { jsonNeedsEscape, tsvDateTime, tsvDateTime64, tsvString } from './tsv.ts'

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
  /**
   * personProperties is identity state: immutable, and met again by the person's later events (its
   * text is then kept per object).
   */
  personPropertiesShared?: boolean
  elementsChain: string
  sessionId: string
  groups: readonly string[]
  createdAtMs: number
  seq: number
  offset: number
}

// Lines are built as one array joined once: the line is a single flat string from the start (a
// batch's lines live until it is written, and a string concatenated piece by piece is a tree of
// pieces the garbage collector copies at every young-generation pass until then). An events line's
// array is one literal of its fields (made at its size, not grown).

/** An events row as a TabSeparated line, in EVENT_COLUMNS order. */
export function eventLine(r: EventRow): string {
  const g = r.groups
  const event = tsvString(r.event)
  const distinctId = tsvString(r.distinctId)
  const timestamp = tsvDateTime64(r.timestampMs)
  return [
    r.teamId,
    r.uuid,
    event,
    distinctId,
    r.personId,
    timestamp,
    bagField(r.properties),
    personPropertiesField(r.personProperties, r.personPropertiesShared === true),
    tsvString(r.elementsChain),
    tsvString(r.sessionId),
    tsvString(g[0] ?? ''),
    tsvString(g[1] ?? ''),
    tsvString(g[2] ?? ''),
    tsvString(g[3] ?? ''),
    tsvString(g[4] ?? ''),
    tsvDateTime(r.createdAtMs),
    r.seq,
    `${r.offset}\n`,
  ].join('\t')
}

// The person_properties field of identity state objects, by object. Safe because the identity state
// is immutable (docs/projectors.md, "Identity state"): an object's text never changes; an object no
// longer in the state nor in a batch is collected with its entry.
const personPropertiesText = new WeakMap<object, string>()

function personPropertiesField(properties: Record<string, unknown>, shared: boolean): string {
  if (!shared) return bagField(properties)
  let text = personPropertiesText.get(properties)
  if (text === undefined) {
    text = bagField(properties)
    personPropertiesText.set(properties, text)
  }
  return text
}

// JSON.stringify writes integers from 1e19 up to 1e21 in plain digits. Beyond 64 bits ClickHouse's
// JSON parser (simdjson) refuses the whole document, so every property of such a bag would read NULL;
// the same number in exponent form is the same double and parses. A double has at most 17
// significant digits, so such a number ends in "00": the pattern runs only on a bag holding that
// (the pattern over every bag cost about as much as JSON.stringify itself; the search 1/20 of it).
const LONG_DIGITS = /\d{19}/
const JSON_TOKEN = /"(?:[^"\\]|\\.)*"|-?\d{19,}(?![\d.eE])/g

// (what simdjson holds: Int64 or UInt64)
const fits64 = (n: number) => n >= -(2 ** 63) && n < 2 ** 64

function wideIntegersAsExponents(json: string): string {
  return json.replace(JSON_TOKEN, (t) =>
    t.charCodeAt(0) === 34 || fits64(Number(t)) ? t : Number(t).toExponential(),
  )
}

/** A bag's `properties` field: its JSON text, TSV-escaped ('' when a toJSON says undefined). */
function bagField(properties: Record<string, unknown>): string {
  let json = (JSON.stringify(properties) as string | undefined) ?? ''
  if (json.indexOf('00') !== -1 && LONG_DIGITS.test(json)) json = wideIntegersAsExponents(json)
  // JSON text writes every character TSV escapes as a backslash sequence but the backslash and the
  // quote themselves: only those two need looking for.
  return jsonNeedsEscape(json) ? tsvString(json) : json
}

/** Columns of person rows, in line order. */
export const PERSON_COLUMNS = [
  'team_id',
  'id',
  'created_at',
  'properties',
  'is_identified',
  'is_deleted',
  'version',
]

/** A person row as a TabSeparated line. */
export function personLine(teamId: number, p: PersonState): string {
  const fields = [teamId, p.id, tsvDateTime64(p.createdAtMs), bagField(p.properties)]
  fields.push(p.isIdentified ? '1' : '0', '0', `${p.version}\n`)
  return fields.join('\t')
}

/** The delete row of a person as a TabSeparated line. */
export function deletedPersonLine(teamId: number, p: DeletedPersonRow): string {
  return `${[String(teamId), p.id, tsvDateTime64(p.createdAtMs), '{}', '0', '1', String(p.version)].join(
    '\t',
  )}\n`
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
  'version',
]

/** A groups row as a TabSeparated line. */
export function groupLine(teamId: number, g: GroupState): string {
  const fields: (string | number)[] = [
    teamId,
    g.groupTypeIndex,
    tsvString(g.groupKey),
    tsvDateTime(g.createdAtMs),
    bagField(g.properties),
    `${g.version}\n`,
  ]
  return fields.join('\t')
}

/** Columns of group_type_mapping rows, in line order. */
export const GROUP_TYPE_COLUMNS = ['team_id', 'group_type', 'group_type_index', 'version']

/** A group_type_mapping row as a TabSeparated line. */
export function groupTypeLine(teamId: number, r: GroupTypeRow): string {
  const fields = [String(teamId), tsvString(r.groupType), String(r.groupTypeIndex), String(r.version)]
  return `${fields.join('\t')}\n`
}

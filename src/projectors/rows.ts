// TabSeparated lines for each projected table, in the column order of the lists beside them.
import type {
  DeletedPersonRow,
  DistinctIdRow,
  GroupState,
  GroupTypeRow,
  OverrideRow,
  PersonState,
} from './identity/index.ts'
import { encodePropertiesInto, type PropertySink } from './properties.ts'
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
// array is one literal of its fields (made at its size, not grown); a bag's keys and values go into
// arrays kept for all bags (filled from their start, then joined: bags are encoded one at a time).
const sink: PropertySink = { keys: [], values: [], n: 0 }
// The three fields of the last bag encoded (encodeBag).
let bagJson = ''
let bagKeys = ''
let bagValues = ''

/** An events row as a TabSeparated line, in EVENT_COLUMNS order. */
export function eventLine(r: EventRow): string {
  const g = r.groups
  const event = tsvString(r.event)
  const distinctId = tsvString(r.distinctId)
  const timestamp = tsvDateTime64(r.timestampMs)
  encodeBag(r.properties)
  return [
    r.teamId,
    r.uuid,
    event,
    distinctId,
    r.personId,
    timestamp,
    bagJson,
    bagKeys,
    bagValues,
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
  if (!shared) return tsvString(JSON.stringify(properties))
  let text = personPropertiesText.get(properties)
  if (text === undefined) {
    text = tsvString(JSON.stringify(properties))
    personPropertiesText.set(properties, text)
  }
  return text
}

/** An Array(String) literal of the first `count` strings of `items`, escaped when `escape`. */
function arrayLiteral(items: string[], count: number, escape: boolean): string {
  if (count === 0) return '[]'
  // Shrinking keeps the array's storage unless a much larger bag grew it.
  if (items.length !== count) items.length = count
  if (escape) for (let i = 0; i < count; i++) items[i] = tsvString(items[i]!)
  return `['${items.join("','")}']`
}

/** The properties, prop_keys and prop_values fields of a bag, into bagJson, bagKeys and bagValues. */
function encodeBag(properties: Record<string, unknown>): void {
  // (undefined only when a toJSON says so: then the field is empty, as it always was)
  const json = JSON.stringify(properties) as string | undefined
  encodePropertiesInto(properties, sink)
  // JSON text writes every character TSV escapes (and the backslash itself) as a backslash sequence;
  // so when the bag's JSON has neither a backslash nor a quote, none of its keys and strings (all of
  // which it spells out) needs escaping.
  const escape = json !== undefined && jsonNeedsEscape(json)
  bagJson = escape ? tsvString(json) : (json ?? '')
  bagKeys = arrayLiteral(sink.keys, sink.n, escape)
  bagValues = arrayLiteral(sink.values, sink.n, escape)
}

/** Appends the properties, prop_keys and prop_values fields of a bag. */
function pushPropertyFields(fields: (string | number)[], properties: Record<string, unknown>): void {
  encodeBag(properties)
  fields.push(bagJson, bagKeys, bagValues)
}

/** Columns of person rows, in line order. */
export const PERSON_COLUMNS = [
  'team_id',
  'id',
  'created_at',
  'properties',
  'prop_keys',
  'prop_values',
  'is_identified',
  'is_deleted',
  'version',
]

/** A person row as a TabSeparated line. */
export function personLine(teamId: number, p: PersonState): string {
  const fields: (string | number)[] = [teamId, p.id, tsvDateTime64(p.createdAtMs)]
  pushPropertyFields(fields, p.properties)
  fields.push(p.isIdentified ? '1' : '0', '0', `${p.version}\n`)
  return fields.join('\t')
}

/** The delete row of a person as a TabSeparated line. */
export function deletedPersonLine(teamId: number, p: DeletedPersonRow): string {
  return `${[
    String(teamId),
    p.id,
    tsvDateTime64(p.createdAtMs),
    '{}\t[]\t[]',
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
  const fields: (string | number)[] = [
    teamId,
    g.groupTypeIndex,
    tsvString(g.groupKey),
    tsvDateTime(g.createdAtMs),
  ]
  pushPropertyFields(fields, g.properties)
  fields.push(`${g.version}\n`)
  return fields.join('\t')
}

/** Columns of group_type_mapping rows, in line order. */
export const GROUP_TYPE_COLUMNS = ['team_id', 'group_type', 'group_type_index', 'version']

/** A group_type_mapping row as a TabSeparated line. */
export function groupTypeLine(teamId: number, r: GroupTypeRow): string {
  const fields = [String(teamId), tsvString(r.groupType), String(r.groupTypeIndex), String(r.version)]
  return `${fields.join('\t')}\n`
}

// The ClickHouse tables a projection writes. Replay builds the same set under a suffix and swaps it in.

/** The table names a projection writes, by kind. */
export interface ProjectionTables {
  events: string
  person: string
  person_distinct_id: string
  person_overrides: string
  groups: string
  group_type_mapping: string
}

/** Every kind of projected table. */
export const TABLE_KINDS = [
  'events',
  'person',
  'person_distinct_id',
  'person_overrides',
  'groups',
  'group_type_mapping',
] as const satisfies readonly (keyof ProjectionTables)[]

/** The tables queries read. */
export const LIVE_TABLES: ProjectionTables = {
  events: 'events',
  person: 'person',
  person_distinct_id: 'person_distinct_id',
  person_overrides: 'person_overrides',
  groups: 'groups',
  group_type_mapping: 'group_type_mapping',
}

/** The same set of tables under a suffix (replay builds into these). */
export function suffixedTables(suffix: string): ProjectionTables {
  const out = {} as ProjectionTables
  for (const k of TABLE_KINDS) out[k] = `${LIVE_TABLES[k]}${suffix}`
  return out
}

/** Columns of events rows, in line order (rows.ts eventLine). */
export const EVENT_COLUMNS = [
  'team_id',
  'uuid',
  'event',
  'distinct_id',
  'person_id',
  'timestamp',
  'properties',
  'person_properties',
  'elements_chain',
  'session_id',
  '$group_0',
  '$group_1',
  '$group_2',
  '$group_3',
  '$group_4',
  'created_at',
  '_seq',
  '_offset',
]

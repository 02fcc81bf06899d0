import { flagUsageSQL } from './flag-usage.ts'
import { SESSION_COLUMN_TYPES, SESSION_COLUMNS, sessionsSQL } from '../sessions/sql.ts'
import { virtualPersonFields } from '../sessions/virtual.ts'

// Burrow's virtual schema: what HogQL users see, and how each name reaches the physical tables in
// schema/clickhouse/. Adding a table (e.g. feature-flag usage) is an entry here, not a printer change.

// How a virtual table is read. Every relation is printed with the team guard by the printer.
/** How a virtual table is read from the physical tables (always through the team guard, guard.ts). */
export type RelationDef =
  // The rows of one table (events: the hot path; comparisons of its columns with constants go
  // inside the guarded read, where they reach the partition key and the primary index).
  | { kind: 'physical'; table: string }
  // Versioned rows: the newest version of each key wins, optionally hiding deleted keys. Printed as a
  // GROUP BY key subquery with argMax(column, version) for each column the query uses.
  | { kind: 'latest'; table: string; key: string[]; version: string; deleted?: string }
  // Rows computed by Burrow's own SQL for one project (every table it reads guarded, ending with the
  // guard's LIMIT barrier), e.g. flag usage aggregated from events.
  // `printed` are the source's table-function arguments as printed SQL (constants only). `pushable`
  // names the output columns whose comparisons with constants the query's WHERE may hand to `sql`
  // (`pushed`): each is a column the derived rows group by, so filtering the rows it is computed
  // from keeps exactly the groups the WHERE would keep.
  | {
      kind: 'derived'
      sql: (teamId: number, printed: string[], pushed: PushedConditions) => string
      pushable?: readonly string[]
    }

/**
 * The WHERE conditions handed to a derived relation, printed with each pushable column replaced by
 * the SQL it has where the relation places them (a column name, an expression, a branch's constant).
 * Empty when nothing was handed over.
 */
export type PushedConditions = (columns: Readonly<Record<string, string>>) => string[]

/** What a field of a virtual table reads. */
export type FieldDef =
  // A column of the relation. A DateTime or DateTime64(p) type without a zone is stored in UTC and
  // read in the project's zone.
  | { kind: 'column'; column: string; type: string }
  // A property bag stored as its JSON text; `properties.a.b` reads the value at that path.
  | { kind: 'properties'; raw: string }
  // A HogQL expression over the table's own fields (hidden fields included). `plain`: the same value
  // when the project has no person overrides (CompileOptions.personOverrides false), without a join.
  | { kind: 'expression'; expr: string; type: string; plain?: string }
  // A lazy join: `person.x` on events joins persons only when used. `from` is a HogQL expression
  // on this table, `to` a field of the joined table; they must be equal.
  | { kind: 'join'; table: string; from: string; to: string }
  // Fields of the same row grouped under one name (PostHog's events.poe: poe.id, poe.properties.x).
  | { kind: 'namespace'; fields: Record<string, FieldDef> }

/** One virtual table: its relation, its fields and what `*` shows. */
export interface TableDef {
  name: string
  relation: RelationDef
  fields: Record<string, FieldDef>
  // Fields users cannot name directly; they serve expression fields and lazy joins.
  hidden?: Record<string, FieldDef>
  // What `*` expands to, in order.
  asterisk: string[]
}

const ZERO_UUID = "toUUID('00000000-0000-0000-0000-000000000000')"

const groupColumns: Record<string, FieldDef> = Object.fromEntries(
  [0, 1, 2, 3, 4].map((i) => [`$group_${i}`, { kind: 'column', column: `$group_${i}`, type: 'String' }]),
)

/** Every virtual table by name (internal ones start with `__`). */
export const TABLES: Record<string, TableDef> = {
  events: {
    name: 'events',
    relation: { kind: 'physical', table: 'events' },
    fields: {
      uuid: { kind: 'column', column: 'uuid', type: 'UUID' },
      event: { kind: 'column', column: 'event', type: 'String' },
      timestamp: { kind: 'column', column: 'timestamp', type: 'DateTime64(6)' },
      distinct_id: { kind: 'column', column: 'distinct_id', type: 'String' },
      properties: { kind: 'properties', raw: 'properties' },
      elements_chain: { kind: 'column', column: 'elements_chain', type: 'String' },
      // PostHog's columns derived from the chain (its events table materializes them; these compute
      // them from the chain where they are read): the clicked link's href, every element's text and
      // id, and which of the tags actions care about occur.
      elements_chain_href: {
        kind: 'expression',
        expr: `extract(elements_chain, '(?::|")href="(.*?)"')`,
        type: 'String',
      },
      elements_chain_texts: {
        kind: 'expression',
        expr: `arrayDistinct(extractAll(elements_chain, '(?::|")text="(.*?)"'))`,
        type: 'Array(String)',
      },
      elements_chain_ids: {
        kind: 'expression',
        expr: `arrayDistinct(extractAll(elements_chain, '(?::|")attr_id="(.*?)"'))`,
        type: 'Array(String)',
      },
      elements_chain_elements: {
        kind: 'expression',
        expr: `arrayDistinct(extractAll(elements_chain, '(?:^|;)(a|button|form|input|select|textarea|label)(?:\\\\.|$|:)'))`,
        type: 'Array(String)',
      },
      $session_id: { kind: 'column', column: 'session_id', type: 'String' },
      ...groupColumns,
      created_at: { kind: 'column', column: 'created_at', type: 'DateTime' },
      // Events keep the person id they were stamped with; a later merge is recorded as an override,
      // so the id users see goes through it.
      person_id: {
        kind: 'expression',
        expr: `if(__override.override_person_id = ${ZERO_UUID}, __stamped_person_id, __override.override_person_id)`,
        type: 'UUID',
        plain: '__stamped_person_id',
      },
      person: { kind: 'join', table: 'persons', from: 'person_id', to: 'id' },
      // PostHog's events.pdi: the distinct id's current row (its person_id is the newest
      // assignment, which can differ from the id the event was stamped with).
      pdi: { kind: 'join', table: 'person_distinct_ids', from: 'distinct_id', to: 'distinct_id' },
      // PostHog's events.session: the event's session (docs/sessions.md), joined on $session_id.
      session: { kind: 'join', table: 'sessions', from: '$session_id', to: 'session_id' },
      // PostHog's events.poe ("person on events"): the person as the event was stamped with it,
      // its id before any later merge and its properties as they were when the event arrived.
      poe: {
        kind: 'namespace',
        fields: {
          id: { kind: 'column', column: 'person_id', type: 'UUID' },
          properties: { kind: 'properties', raw: 'person_properties' },
          // the $virt_* fields from the person properties stamped on the event (src/sessions/virtual.ts)
          ...virtualPersonFields('poe.properties'),
        },
      },
    },
    hidden: {
      __stamped_person_id: { kind: 'column', column: 'person_id', type: 'UUID' },
      __override: {
        kind: 'join',
        table: '__person_overrides',
        from: '__stamped_person_id',
        to: 'old_person_id',
      },
    },
    asterisk: [
      'uuid',
      'event',
      'properties',
      'timestamp',
      'distinct_id',
      'elements_chain',
      'created_at',
      '$session_id',
      '$group_0',
      '$group_1',
      '$group_2',
      '$group_3',
      '$group_4',
    ],
  },
  persons: {
    name: 'persons',
    relation: { kind: 'latest', table: 'person', key: ['id'], version: 'version', deleted: 'is_deleted' },
    fields: {
      id: { kind: 'column', column: 'id', type: 'UUID' },
      created_at: { kind: 'column', column: 'created_at', type: 'DateTime64(3)' },
      properties: { kind: 'properties', raw: 'properties' },
      is_identified: { kind: 'column', column: 'is_identified', type: 'UInt8' },
      // PostHog's $virt_* fields: the channel of the person's first visit (src/sessions/virtual.ts)
      ...virtualPersonFields(),
    },
    asterisk: ['id', 'created_at', 'properties', 'is_identified'],
  },
  person_distinct_ids: {
    name: 'person_distinct_ids',
    relation: {
      kind: 'latest',
      table: 'person_distinct_id',
      key: ['distinct_id'],
      version: 'version',
      deleted: 'is_deleted',
    },
    fields: {
      distinct_id: { kind: 'column', column: 'distinct_id', type: 'String' },
      person_id: { kind: 'column', column: 'person_id', type: 'UUID' },
      person: { kind: 'join', table: 'persons', from: 'person_id', to: 'id' },
    },
    asterisk: ['distinct_id', 'person_id'],
  },
  groups: {
    name: 'groups',
    relation: { kind: 'latest', table: 'groups', key: ['group_type_index', 'group_key'], version: 'version' },
    fields: {
      index: { kind: 'column', column: 'group_type_index', type: 'UInt8' },
      key: { kind: 'column', column: 'group_key', type: 'String' },
      created_at: { kind: 'column', column: 'created_at', type: 'DateTime' },
      properties: { kind: 'properties', raw: 'properties' },
    },
    asterisk: ['index', 'key', 'created_at', 'properties'],
  },
  // Flag usage per flag, variant, day and source, computed from the project's own events (flag-usage.ts;
  // the same rows as the 0005 view, without reading other projects').
  feature_flag_usage: {
    name: 'feature_flag_usage',
    relation: { kind: 'derived', sql: flagUsageSQL, pushable: ['day', 'source'] },
    fields: {
      flag: { kind: 'column', column: 'flag', type: 'String' },
      variant: { kind: 'column', column: 'variant', type: 'String' },
      day: { kind: 'column', column: 'day', type: 'Date' },
      source: { kind: 'column', column: 'source', type: 'String' },
      calls: { kind: 'column', column: 'calls', type: 'UInt64' },
      unique_persons: { kind: 'column', column: 'unique_persons', type: 'UInt64' },
    },
    asterisk: ['flag', 'variant', 'day', 'source', 'calls', 'unique_persons'],
  },
  // PostHog's sessions table: one row per session of the project, merged from raw_sessions
  // (schema/clickhouse/0120, src/sessions/sql.ts); conditions on session_id reach the guarded read.
  sessions: {
    name: 'sessions',
    relation: { kind: 'derived', sql: sessionsSQL, pushable: ['session_id'] },
    fields: Object.fromEntries(
      SESSION_COLUMNS.map((c): [string, FieldDef] => [
        c,
        { kind: 'column', column: c, type: SESSION_COLUMN_TYPES[c] ?? 'Nullable(String)' },
      ]),
    ),
    asterisk: SESSION_COLUMNS.filter((c) => c !== 'id' && c !== 'duration'),
  },
  // Members of dynamic cohorts, every calculated version (schema/clickhouse/0100): `IN COHORT` reads
  // the version the cohort calls current.
  cohort_people: {
    name: 'cohort_people',
    relation: { kind: 'physical', table: 'cohortpeople' },
    fields: {
      person_id: { kind: 'column', column: 'person_id', type: 'UUID' },
      cohort_id: { kind: 'column', column: 'cohort_id', type: 'Int64' },
      version: { kind: 'column', column: 'version', type: 'UInt64' },
    },
    asterisk: ['person_id', 'cohort_id', 'version'],
  },
  // Members of static cohorts (schema/clickhouse/0101), removals left out.
  static_cohort_people: {
    name: 'static_cohort_people',
    relation: {
      kind: 'latest',
      table: 'person_static_cohort',
      key: ['cohort_id', 'person_id'],
      version: 'version',
      deleted: 'is_deleted',
    },
    fields: {
      person_id: { kind: 'column', column: 'person_id', type: 'UUID' },
      cohort_id: { kind: 'column', column: 'cohort_id', type: 'Int64' },
    },
    asterisk: ['person_id', 'cohort_id'],
  },
  // Internal: the newest override of each old person id. Not reachable from user queries.
  __person_overrides: {
    name: '__person_overrides',
    relation: { kind: 'latest', table: 'person_overrides', key: ['old_person_id'], version: 'version' },
    fields: {
      old_person_id: { kind: 'column', column: 'old_person_id', type: 'UUID' },
      override_person_id: { kind: 'column', column: 'override_person_id', type: 'UUID' },
    },
    asterisk: [],
  },
}

/** Tables a user may name in FROM / JOIN. */
export function userTable(name: string): TableDef | undefined {
  if (name.startsWith('__')) return undefined
  return Object.hasOwn(TABLES, name) ? TABLES[name] : undefined
}

/** A field of `table`; `internal` also finds hidden ones. */
export function lookupField(table: TableDef, name: string, internal: boolean): FieldDef | undefined {
  if (Object.hasOwn(table.fields, name)) return table.fields[name]
  if (internal && table.hidden && Object.hasOwn(table.hidden, name)) return table.hidden[name]
  return undefined
}

/** Every physical table the schema reads directly; the unit tests check each read is guarded. */
export function physicalTables(): string[] {
  return [
    ...new Set(
      Object.values(TABLES).flatMap((t) => (t.relation.kind === 'derived' ? [] : [t.relation.table])),
    ),
  ]
}

import { v5 as uuidv5 } from 'uuid'
import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'
import { sqlNumber, sqlString } from '../clickhouse/sql.ts'
import type { PropertyType } from './infer.ts'
import { TAXONOMY_TABLES as T } from './write.ts'

// Reads of the taxonomy tables (schema/clickhouse/0110_taxonomy.sql), every one guarded by
// `team_id = <project>`: the one file where Burrow prints SQL over them by hand (they are no HogQL
// table, so no user query reaches them). Rows of a name are folded here as the merges fold them.

/** Ids are derived from the project and the name (uuid v5), so every process gives the same id. */
const NAMESPACE = 'a9b7f3c4-1d2e-5f60-8a9b-0c1d2e3f4a5b'

export const eventDefinitionId = (team: number, name: string) => uuidv5(`${team}:event:${name}`, NAMESPACE)
export const propertyDefinitionId = (team: number, type: number, groupTypeIndex: number, name: string) =>
  uuidv5(`${team}:property:${type}:${groupTypeIndex}:${name}`, NAMESPACE)

const ms = (ch: string) => `toUnixTimestamp64Milli(${ch})`

export interface EventDefinition {
  name: string
  created_at: number
  last_seen_at: number
}

export interface EventDefinitionQuery {
  search?: string
  /** `$` names only (true), none of them (false), or all */
  posthog?: boolean
  names?: string[]
  excluded?: string[]
  /** [expression, direction] pairs over name, created_at, last_seen_at (and their ::date) */
  order: [string, 'ASC' | 'DESC'][]
  limit: number
  offset: number
}

/** PostHog's term search: every whitespace-separated term occurs in the name, case-insensitively. */
function termConditions(search: string | undefined): string[] {
  const terms = (search ?? '').replaceAll('\u0000', '').split(/\s+/).filter(Boolean)
  return terms.map((t) => `positionCaseInsensitiveUTF8(name, ${sqlString(t)}) > 0`)
}

const inList = (values: string[]) => `(${values.map(sqlString).join(', ')})`

const ORDER_EXPRESSIONS: Record<string, string> = {
  name: 'name',
  'length(name)': 'lengthUTF8(name)',
  created_at: 'created_at',
  'created_at::date': 'toDate(created_at)',
  last_seen_at: 'last_seen_at',
  'last_seen_at::date': 'toDate(last_seen_at)',
}

export class TaxonomyStore {
  constructor(private readonly ch: ClickHouseClient) {}

  /** One page of the project's event definitions and how many match. */
  async eventDefinitions(
    team: number,
    q: EventDefinitionQuery,
  ): Promise<{ count: number; results: EventDefinition[] }> {
    const where = [
      ...termConditions(q.search),
      q.posthog === true ? "startsWith(name, '$')" : undefined,
      q.posthog === false ? "NOT startsWith(name, '$')" : undefined,
      q.names?.length ? `name IN ${inList(q.names)}` : undefined,
      q.excluded?.length ? `name NOT IN ${inList(q.excluded)}` : undefined,
    ].filter((c): c is string => c !== undefined)
    const order = q.order.map(([e, d]) => `${ORDER_EXPRESSIONS[e] ?? 'name'} ${d}`).join(', ')
    const rows = await selectRows<{ name: string; c: string; l: string; n: string }>(
      this.ch,
      `SELECT name, ${ms('created_at')} AS c, ${ms('last_seen_at')} AS l, count() OVER () AS n FROM (
        SELECT name, min(created_at) AS created_at, max(last_seen_at) AS last_seen_at
        FROM ${T.events} WHERE team_id = ${sqlNumber(team)} GROUP BY name
      ) ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY ${order || 'name'} LIMIT ${sqlNumber(q.limit)} OFFSET ${sqlNumber(q.offset)}`,
    )
    const count = rows.length ? Number(rows[0]!.n) : await this.countEvents(team, where)
    return {
      count,
      results: rows.map((r) => ({ name: r.name, created_at: Number(r.c), last_seen_at: Number(r.l) })),
    }
  }

  // a page past the end still says how many there are
  private async countEvents(team: number, where: string[]): Promise<number> {
    const [row] = await selectRows<{ n: string }>(
      this.ch,
      `SELECT count() AS n FROM (SELECT name FROM ${T.events} WHERE team_id = ${sqlNumber(team)} GROUP BY name
      ) ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`,
    )
    return Number(row?.n ?? 0)
  }

  /** The event definition with this id, if the project has it. */
  async eventDefinition(team: number, id: string): Promise<EventDefinition | undefined> {
    const names = await selectRows<{ name: string }>(
      this.ch,
      `SELECT DISTINCT name FROM ${T.events} WHERE team_id = ${sqlNumber(team)}`,
    )
    const name = names.find((r) => eventDefinitionId(team, r.name) === id)?.name
    if (name === undefined) return undefined
    return (await this.eventDefinitions(team, { names: [name], order: [], limit: 1, offset: 0 })).results[0]
  }

  /** One page of the project's property definitions of one kind, and how many match. */
  async propertyDefinitions(team: number, q: PropertyDefinitionQuery): Promise<PropertyDefinitionPage> {
    const seen = q.eventNames?.length
      ? `name IN (SELECT property FROM ${T.eventProperties} WHERE team_id = ${sqlNumber(team)} AND event IN ${inList(q.eventNames)})`
      : 'NULL'
    const where = [
      ...termConditions(q.search),
      q.names?.length ? `name IN ${inList(q.names)}` : undefined,
      q.excluded.length ? `name NOT IN ${inList(q.excluded)}` : undefined,
      q.excludedPrefixes.length
        ? `NOT (${q.excludedPrefixes.map((p) => `startsWith(name, ${sqlString(p)})`).join(' OR ')})`
        : undefined,
      q.numerical ? "property_type = 'Numeric' AND name NOT IN ('distinct_id', 'timestamp')" : undefined,
      q.featureFlag === true ? "startsWith(name, '$feature/')" : undefined,
      q.featureFlag === false ? "NOT startsWith(name, '$feature/')" : undefined,
      q.onlySeen && q.eventNames?.length ? 'seen = 1' : undefined,
    ].filter((c): c is string => c !== undefined)
    const rows = await selectRows<{ name: string; property_type: string; seen: number | null; n: string }>(
      this.ch,
      `SELECT name, property_type, seen, count() OVER () AS n FROM (
        SELECT name, if(tupleElement(max(set_type), 2) != '', tupleElement(max(set_type), 2),
          tupleElement(min(typed), 2)) AS property_type, ${seen} AS seen
        FROM ${T.properties}
        WHERE team_id = ${sqlNumber(team)} AND type = ${sqlNumber(q.type)}
          AND group_type_index = ${sqlNumber(q.groupTypeIndex)}
        GROUP BY name
      ) ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY seen DESC NULLS LAST, name ASC LIMIT ${sqlNumber(q.limit)} OFFSET ${sqlNumber(q.offset)}`,
    )
    let count = rows.length ? Number(rows[0]!.n) : 0
    if (!rows.length && q.offset > 0)
      count = (await this.propertyDefinitions(team, { ...q, offset: 0, limit: 1 })).count
    return {
      count,
      results: rows.map((r) => ({
        id: propertyDefinitionId(team, q.type, q.groupTypeIndex, r.name),
        name: r.name,
        property_type: (r.property_type || null) as PropertyType | null,
        is_seen_on_filtered_events: r.seen === null ? null : Boolean(Number(r.seen)),
      })),
    }
  }

  /** The property definition with this id, if the project has it. */
  async propertyDefinition(team: number, id: string): Promise<StoredPropertyDefinition | undefined> {
    const keys = await selectRows<{ type: number; group_type_index: number; name: string }>(
      this.ch,
      `SELECT DISTINCT type, group_type_index, name FROM ${T.properties} WHERE team_id = ${sqlNumber(team)}`,
    )
    const key = keys.find(
      (k) => propertyDefinitionId(team, Number(k.type), Number(k.group_type_index), k.name) === id,
    )
    if (!key) return undefined
    const type = Number(key.type)
    const groupTypeIndex = Number(key.group_type_index)
    const page = await this.propertyDefinitions(team, {
      type,
      groupTypeIndex,
      names: [key.name],
      excluded: [],
      excludedPrefixes: [],
      limit: 1,
      offset: 0,
    })
    const found = page.results[0]
    return found && { ...found, type, group_type_index: groupTypeIndex }
  }

  /** Sets the type of a property definition (PATCH): the latest type set wins over the inferred one. */
  async setPropertyType(
    team: number,
    def: StoredPropertyDefinition,
    propertyType: PropertyType,
    atMs = Date.now(),
  ): Promise<void> {
    await this.ch.insert({
      table: T.properties,
      format: 'JSONEachRow',
      values: [
        {
          team_id: team,
          type: def.type,
          group_type_index: def.group_type_index,
          name: def.name,
          created_at: atMs,
          typed: [Date.UTC(2105, 0, 1), ''],
          set_type: [atMs, propertyType],
        },
      ],
    })
  }

  /** Whether each event has been seen with property `name` (PostHog's seen_together). */
  async seenTogether(team: number, events: string[], name: string): Promise<Record<string, boolean>> {
    const rows = events.length
      ? await selectRows<{ event: string }>(
          this.ch,
          `SELECT DISTINCT event FROM ${T.eventProperties} WHERE team_id = ${sqlNumber(team)}
          AND property = ${sqlString(name)} AND event IN ${inList(events)}`,
        )
      : []
    const seen = new Set(rows.map((r) => r.event))
    return Object.fromEntries(events.map((e) => [e, seen.has(e)]))
  }
}

export interface PropertyDefinitionQuery {
  type: number
  groupTypeIndex: number
  search?: string
  names?: string[]
  excluded: string[]
  excludedPrefixes: string[]
  numerical?: boolean
  featureFlag?: boolean
  eventNames?: string[]
  onlySeen?: boolean
  limit: number
  offset: number
}

export interface PropertyDefinition {
  id: string
  name: string
  property_type: PropertyType | null
  is_seen_on_filtered_events: boolean | null
}

export interface StoredPropertyDefinition extends PropertyDefinition {
  type: number
  group_type_index: number
}

export interface PropertyDefinitionPage {
  count: number
  results: PropertyDefinition[]
}

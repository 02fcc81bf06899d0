// Persons as PostHog's API shows them, read through HogQL (latest version, deleted hidden, team guard).
import type { ClickHouseClient } from '@clickhouse/client'
import { instantOf, parseWall, str } from '../common/index.ts'
import { compile, runHogQL, runSQL } from './hogql.ts'

export interface PersonResponse {
  id: string
  uuid: string
  name: string
  distinct_ids: string[]
  properties: Record<string, unknown>
  created_at: string
  is_identified: boolean
}

// PostHog's rule (posthog/utils.py is_anonymous_id): ids shaped like generated uuids are anonymous.
const ANONYMOUS = /^([a-z0-9]+-){4}([a-z0-9]+)$/

/** Identified-looking ids first (stable otherwise), as PostHog's person serializer orders them. */
export function sortDistinctIds(ids: string[]): string[] {
  return [...ids].sort((a, b) => Number(ANONYMOUS.test(a)) - Number(ANONYMOUS.test(b)) || a.localeCompare(b))
}

export function personName(p: { id: string; properties: Record<string, unknown>; distinct_ids: string[] }) {
  const email = p.properties.email
  if (email !== undefined && email !== null && email !== '') return String(email)
  return p.distinct_ids[0] ?? p.id
}

// '2024-03-01 10:00:00.123' as printed in the query's time zone -> ISO 8601 in UTC
function iso(s: string, tz: string): string {
  const m = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.(\d{1,3}))?/.exec(s)
  if (!m) return s
  return new Date(instantOf(parseWall(s), tz) + Number((m[1] ?? '0').padEnd(3, '0'))).toISOString()
}

/** The select list and join that give one row per person: id, created_at, properties, identified, ids. */
export function personsSelect(where: string, tail = ''): string {
  return `SELECT p.id, p.created_at, p.properties, p.is_identified, d.ids
FROM persons AS p
LEFT JOIN (SELECT person_id, groupArray(distinct_id) AS ids FROM person_distinct_ids GROUP BY person_id) AS d
  ON d.person_id = p.id
WHERE ${where}
${tail}`
}

export function personFromRow(row: unknown[], tz = 'UTC'): PersonResponse {
  const [id, createdAt, props, identified, ids] = row as [string, string, string, number, string[] | null]
  let properties: Record<string, unknown>
  try {
    properties = props ? (JSON.parse(props) as Record<string, unknown>) : {}
  } catch {
    properties = {}
  }
  const distinct_ids = sortDistinctIds(ids ?? [])
  return {
    id,
    uuid: id,
    name: personName({ id, properties, distinct_ids }),
    distinct_ids,
    properties,
    created_at: iso(createdAt, tz),
    is_identified: Number(identified) === 1,
  }
}

export async function queryPersons(
  ch: ClickHouseClient,
  teamId: number,
  where: string,
  tail: string,
  limit = 50_000,
): Promise<PersonResponse[]> {
  const rows = await runHogQL(ch, personsSelect(where, tail), { teamId, timezone: 'UTC', limit })
  return rows.map((r) => personFromRow(r))
}

/** Persons by id, in the order of `ids` (unknown or deleted ids are left out). */
export async function loadPersons(ch: ClickHouseClient, teamId: number, ids: string[]) {
  const out: PersonResponse[] = []
  const CHUNK = 5000
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK)
    const where = `p.id IN (${chunk.map((id) => `toUUID(${str(id)})`).join(', ')})`
    out.push(...(await queryPersons(ch, teamId, where, `LIMIT ${chunk.length}`, chunk.length)))
  }
  const byId = new Map(out.map((p) => [p.id, p]))
  return ids.map((id) => byId.get(id)).filter((p): p is PersonResponse => p !== undefined)
}

// Persons of an id subquery that is already ClickHouse SQL (e.g. a funnel's): the persons part is
// compiled from HogQL around a sentinel subquery, which is then swapped for the ids query.
const SENTINEL = 'ffffffff-ffff-4fff-bfff-ffffffffffff'
const SENTINEL_PRINTED = /\(SELECT toUUID\('ffffffff-ffff-4fff-bfff-ffffffffffff'\) AS `[^`]+`\)/

export async function personsOfIdsSQL(
  idsSql: string,
  opts: { teamId: number; timezone: string; limit: number },
  tail: string,
  idsOnly = false,
): Promise<string> {
  const where = `p.id IN (SELECT toUUID('${SENTINEL}'))`
  const hogql = idsOnly ? `SELECT p.id FROM persons AS p WHERE ${where} ${tail}` : personsSelect(where, tail)
  const compiled = await compile(hogql, opts)
  if (!SENTINEL_PRINTED.test(compiled.clickhouse))
    throw new Error('person id sentinel not found in printed SQL')
  return compiled.clickhouse.replace(SENTINEL_PRINTED, () => `(${idsSql})`)
}

/** The persons behind an id query (ClickHouse SQL), newest first. */
export async function personsOfIds(
  ch: ClickHouseClient,
  idsSql: string,
  opts: { teamId: number; timezone: string },
  limit: number,
  offset: number,
): Promise<unknown[][]> {
  const tail = `ORDER BY p.created_at DESC, p.id DESC LIMIT ${limit} OFFSET ${offset}`
  return runSQL(ch, await personsOfIdsSQL(idsSql, { ...opts, limit }, tail), opts.teamId)
}

/** Ids of the existing persons behind an id query, newest first (what exports stream through). */
export async function orderedPersonIds(
  ch: ClickHouseClient,
  idsSql: string,
  opts: { teamId: number; timezone: string },
  limit: number,
): Promise<string[]> {
  const tail = `ORDER BY p.created_at DESC, p.id DESC LIMIT ${limit}`
  const rows = await runSQL(ch, await personsOfIdsSQL(idsSql, { ...opts, limit }, tail, true), opts.teamId)
  return rows.map((r) => String(r[0]))
}

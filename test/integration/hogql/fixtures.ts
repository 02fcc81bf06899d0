// Rows written straight into the ClickHouse tables, shaped the way schema/clickhouse/*.sql
// describes them, so the HogQL tests do not depend on the projectors.
import type { ClickHouseClient } from '@clickhouse/client'
import { partitionGroups } from '../../../src/projectors/writer.ts'

/** A UTC time as epoch ms, DateTime64 text ('YYYY-MM-DD hh:mm:ss.mmm') and whole-second DateTime text. */
function splitTime(ts: string): { ms: number; text: string; seconds: string } {
  const ms = Date.parse(`${ts.replace(' ', 'T')}Z`)
  const iso = new Date(ms).toISOString()
  return { ms, text: iso.slice(0, 23).replace('T', ' '), seconds: iso.slice(0, 19).replace('T', ' ') }
}

export interface EventRow {
  team: number
  uuid: string
  event: string
  distinctId: string
  personId: string
  timestamp: string
  properties?: Record<string, unknown>
  /** the person's properties as stamped on the event (PostHog's events.poe) */
  personProperties?: Record<string, unknown>
  groups?: string[]
  sessionId?: string
  /** autocapture's elements_chain text */
  elementsChain?: string
}

let seq = 1

/**
 * Inserts the rows into `events`, in as many INSERTs as the writer would make (current ClickHouse
 * takes at most 100 month partitions in one).
 */
export async function insertEvents(ch: ClickHouseClient, rows: EventRow[]): Promise<void> {
  for (const group of partitionGroups(rows, (r) => splitTime(r.timestamp).ms)) await insertGroup(ch, group)
}

async function insertGroup(ch: ClickHouseClient, rows: EventRow[]): Promise<void> {
  await ch.insert({
    table: 'events',
    format: 'JSONEachRow',
    values: rows.map((r) => {
      const t = splitTime(r.timestamp)
      const g = r.groups ?? []
      return {
        team_id: r.team,
        uuid: r.uuid,
        event: r.event,
        distinct_id: r.distinctId,
        person_id: r.personId,
        timestamp: t.text,
        properties: JSON.stringify(r.properties ?? {}),
        person_properties: r.personProperties ? JSON.stringify(r.personProperties) : '',
        elements_chain: r.elementsChain ?? '',
        session_id: r.sessionId ?? '',
        $group_0: g[0] ?? '',
        $group_1: g[1] ?? '',
        $group_2: g[2] ?? '',
        $group_3: g[3] ?? '',
        $group_4: g[4] ?? '',
        created_at: t.seconds,
        _seq: seq++,
        _offset: 0,
      }
    }),
  })
}

export interface PersonRow {
  team: number
  id: string
  createdAt: string
  properties: Record<string, unknown>
  version: number
  deleted?: boolean
  identified?: boolean
}

export async function insertPersons(ch: ClickHouseClient, rows: PersonRow[]): Promise<void> {
  await ch.insert({
    table: 'person',
    format: 'JSONEachRow',
    values: rows.map((r) => {
      const t = splitTime(r.createdAt)
      return {
        team_id: r.team,
        id: r.id,
        created_at: t.text,
        properties: JSON.stringify(r.properties),
        is_identified: r.identified ? 1 : 0,
        is_deleted: r.deleted ? 1 : 0,
        version: r.version,
      }
    }),
  })
}

export async function insertDistinctIds(
  ch: ClickHouseClient,
  rows: { team: number; distinctId: string; personId: string; version: number; deleted?: boolean }[],
): Promise<void> {
  await ch.insert({
    table: 'person_distinct_id',
    format: 'JSONEachRow',
    values: rows.map((r) => ({
      team_id: r.team,
      distinct_id: r.distinctId,
      person_id: r.personId,
      is_deleted: r.deleted ? 1 : 0,
      version: r.version,
    })),
  })
}

export async function insertOverrides(
  ch: ClickHouseClient,
  rows: { team: number; oldPersonId: string; overridePersonId: string; version: number }[],
): Promise<void> {
  await ch.insert({
    table: 'person_overrides',
    format: 'JSONEachRow',
    values: rows.map((r) => ({
      team_id: r.team,
      old_person_id: r.oldPersonId,
      override_person_id: r.overridePersonId,
      version: r.version,
    })),
  })
}

export async function insertGroups(
  ch: ClickHouseClient,
  rows: {
    team: number
    index: number
    key: string
    createdAt: string
    properties: Record<string, unknown>
    version: number
  }[],
): Promise<void> {
  await ch.insert({
    table: 'groups',
    format: 'JSONEachRow',
    values: rows.map((r) => {
      return {
        team_id: r.team,
        group_type_index: r.index,
        group_key: r.key,
        created_at: splitTime(r.createdAt).seconds,
        properties: JSON.stringify(r.properties),
        version: r.version,
      }
    }),
  })
}

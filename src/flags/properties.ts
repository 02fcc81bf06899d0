import type { ClickHouseClient } from '@clickhouse/client'
import { selectRows } from '../clickhouse/client.ts'
import { sqlString } from '../clickhouse/sql.ts'

// Stored person and group properties for flag evaluation, read from the tables the identity
// projector maintains. Rows are versioned (ReplacingMergeTree), so every read takes the latest
// version with argMax instead of relying on merges or FINAL.

type Properties = Record<string, unknown>

function parseProperties(text: string | undefined): Properties {
  if (!text) return {}
  try {
    const parsed = JSON.parse(text) as unknown
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Properties) : {}
  } catch {
    return {}
  }
}

/** The current properties of the person `distinctId` belongs to; `{}` when there is none. */
export async function personProperties(
  ch: ClickHouseClient,
  teamId: number,
  distinctId: string,
): Promise<Properties> {
  const team = String(Math.trunc(teamId))
  const found = await selectRows<{ properties: string; is_deleted: number }>(
    ch,
    `SELECT argMax(properties, version) AS properties, argMax(is_deleted, version) AS is_deleted
     FROM person
     WHERE team_id = ${team} AND id IN (
       SELECT argMax(person_id, version) FROM person_distinct_id
       WHERE team_id = ${team} AND distinct_id = ${sqlString(distinctId)}
       GROUP BY distinct_id
       HAVING argMax(is_deleted, version) = 0
     )
     GROUP BY id`,
  )
  const person = found.find((r) => Number(r.is_deleted) === 0)
  return parseProperties(person?.properties)
}

/** Properties of the given groups, keyed by group type index; groups never seen are absent. */
export async function groupProperties(
  ch: ClickHouseClient,
  teamId: number,
  groups: { index: number; key: string }[],
): Promise<Record<number, Properties>> {
  if (groups.length === 0) return {}
  const team = String(Math.trunc(teamId))
  const match = groups
    .map((g) => `(group_type_index = ${Math.trunc(g.index)} AND group_key = ${sqlString(g.key)})`)
    .join(' OR ')
  const found = await selectRows<{ group_type_index: number; properties: string }>(
    ch,
    `SELECT group_type_index, group_key, argMax(properties, version) AS properties
     FROM groups
     WHERE team_id = ${team} AND (${match})
     GROUP BY group_type_index, group_key`,
  )
  const out: Record<number, Properties> = {}
  for (const r of found) out[Number(r.group_type_index)] = parseProperties(r.properties)
  return out
}

/** The project's group types: index → name. */
export async function groupTypeMapping(
  ch: ClickHouseClient,
  teamId: number,
): Promise<Record<number, string>> {
  const found = await selectRows<{ group_type_index: number; group_type: string }>(
    ch,
    `SELECT group_type_index, argMax(group_type, version) AS group_type
     FROM group_type_mapping
     WHERE team_id = ${String(Math.trunc(teamId))}
     GROUP BY group_type_index`,
  )
  const out: Record<number, string> = {}
  for (const r of found) out[Number(r.group_type_index)] = r.group_type
  return out
}

const MAPPING_TTL_MS = 5_000

/**
 * Group type mappings change only when a project sends its first event of a new group type, so
 * they are kept for a few seconds per project; concurrent misses share one query.
 */
export class GroupTypeCache {
  private readonly entries = new Map<number, { at: number; value: Promise<Record<number, string>> }>()

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly ttlMs = MAPPING_TTL_MS,
  ) {}

  get(teamId: number, now = Date.now()): Promise<Record<number, string>> {
    const hit = this.entries.get(teamId)
    if (hit && now - hit.at < this.ttlMs) return hit.value
    const value = groupTypeMapping(this.ch, teamId)
    if (this.entries.size > 10_000) this.entries.clear()
    this.entries.set(teamId, { at: now, value })
    value.catch(() => this.entries.delete(teamId))
    return value
  }
}

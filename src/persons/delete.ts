// Deleting a person: versioned delete rows (PostHog's rule: the delete row goes 100 versions above
// the last one, so no late update of the same person outranks it) and, on request, an ALTER DELETE
// mutation of the person's events, including events stamped with ids merged into it.
import type { ClickHouseClient } from '@clickhouse/client'
import { selectRows } from '../clickhouse/client.ts'
import { sqlString } from '../clickhouse/sql.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'

export const DELETE_VERSION_BUMP = 100

interface LatestPerson {
  version: number
  createdAt: string
  createdAtMs: number
  deleted: boolean
}

async function latestPerson(ch: ClickHouseClient, teamId: number, id: string) {
  const [row] = await selectRows<{ v: string; c: string; ms: string; d: number; n: string }>(
    ch,
    `SELECT argMax(version, version) AS v, argMax(created_at, version) AS c,
            argMax(created_at_ms, version) AS ms, argMax(is_deleted, version) AS d, count() AS n
     FROM person WHERE team_id = ${teamId} AND id = toUUID(${sqlString(id)})`,
  )
  if (!row || Number(row.n) === 0) return undefined
  const p: LatestPerson = {
    version: Number(row.v),
    createdAt: row.c,
    createdAtMs: Number(row.ms),
    deleted: Number(row.d) === 1,
  }
  return p.deleted ? undefined : p
}

/** Returns false when the person does not exist (or is already deleted). */
export async function deletePerson(
  ch: ClickHouseClient,
  tables: TableAdmin,
  teamId: number,
  id: string,
  opts: { deleteEvents: boolean },
): Promise<boolean> {
  const person = await latestPerson(ch, teamId, id)
  if (!person) return false
  const distinctIds = await selectRows<{ distinct_id: string; v: string }>(
    ch,
    `SELECT distinct_id, max(version) AS v FROM person_distinct_id WHERE team_id = ${teamId}
     GROUP BY distinct_id
     HAVING argMax(person_id, version) = toUUID(${sqlString(id)}) AND argMax(is_deleted, version) = 0`,
  )
  // Events stamped with a person that was merged into this one belong to it too.
  const merged = await selectRows<{ old: string }>(
    ch,
    `SELECT old_person_id AS old FROM person_overrides WHERE team_id = ${teamId}
     GROUP BY old_person_id HAVING argMax(override_person_id, version) = toUUID(${sqlString(id)})`,
  )
  await ch.insert({
    table: 'person',
    format: 'JSONEachRow',
    values: [
      {
        team_id: teamId,
        id,
        created_at: person.createdAt,
        created_at_ms: person.createdAtMs,
        properties: '{}',
        prop_keys: [],
        prop_values: [],
        is_identified: 0,
        is_deleted: 1,
        version: person.version + DELETE_VERSION_BUMP,
      },
    ],
  })
  if (distinctIds.length) {
    await ch.insert({
      table: 'person_distinct_id',
      format: 'JSONEachRow',
      values: distinctIds.map((d) => ({
        team_id: teamId,
        distinct_id: d.distinct_id,
        person_id: id,
        is_deleted: 1,
        version: Number(d.v) + DELETE_VERSION_BUMP,
      })),
    })
  }
  if (opts.deleteEvents) {
    const ids = [id, ...merged.map((m) => m.old)].map((x) => `toUUID(${sqlString(x)})`).join(', ')
    // A mutation runs in the background on every server version; the response does not wait for it.
    await tables.alter('events', `DELETE WHERE team_id = ${teamId} AND person_id IN (${ids})`)
  }
  return true
}

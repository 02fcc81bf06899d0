// Deleting a person: versioned delete rows (PostHog's rule: the delete row goes 100 versions above
// the last one, so no late update of the same person outranks it) and, on request, the deletion of
// the person's events, including events stamped with ids merged into it. An ALTER DELETE mutation
// rewrites every part holding matching rows, and parts hold every project's rows: one per request
// let one project keep the server rewriting the events table for everyone. So event deletes are
// batched (EventDeletes): every EVENT_DELETE_INTERVAL_MS at most one mutation for all projects'
// pending persons, at most EVENT_DELETES_PER_PROJECT of one project's in it (the rest wait for
// the next), and a project with EVENT_DELETES_PENDING_PER_PROJECT waiting is refused (429).
// Pending deletes live in this process: a graceful stop issues them; a crash loses at most one
// interval's (the person rows are deleted at once either way).
import type { ClickHouseClient } from '@clickhouse/client'
import { selectRows } from '../clickhouse/client.ts'
import { sqlString } from '../clickhouse/sql.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'
import { AppError } from '../http/errors.ts'

export const DELETE_VERSION_BUMP = 100

interface LatestPerson {
  version: number
  createdAt: string
  deleted: boolean
}

async function latestPerson(ch: ClickHouseClient, teamId: number, id: string) {
  const [row] = await selectRows<{ v: string; c: string; d: number; n: string }>(
    ch,
    `SELECT argMax(version, version) AS v, argMax(created_at, version) AS c,
            argMax(is_deleted, version) AS d, count() AS n
     FROM person WHERE team_id = ${teamId} AND id = toUUID(${sqlString(id)})`,
  )
  if (!row || Number(row.n) === 0) return undefined
  const p: LatestPerson = {
    version: Number(row.v),
    createdAt: row.c,
    deleted: Number(row.d) === 1,
  }
  return p.deleted ? undefined : p
}

export const EVENT_DELETE_INTERVAL_MS = 5000
export const EVENT_DELETES_PER_PROJECT = 1000
export const EVENT_DELETES_PENDING_PER_PROJECT = 10_000

/** The batched event deletes of one process (see the top of this file). */
export class EventDeletes {
  private readonly pending = new Map<number, Set<string>>()
  private readonly timer: NodeJS.Timeout
  private running: Promise<void> = Promise.resolve()

  constructor(
    private readonly tables: TableAdmin,
    private readonly onError: (err: unknown) => void,
    intervalMs = EVENT_DELETE_INTERVAL_MS,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs)
    this.timer.unref()
  }

  /** Whether `teamId` may add `n` more person ids now; throws 429 when its queue is full. */
  check(teamId: number, n: number): void {
    if ((this.pending.get(teamId)?.size ?? 0) + n > EVENT_DELETES_PENDING_PER_PROJECT) {
      throw new AppError(
        429,
        'throttled_error',
        'throttled',
        `Too many event deletions are waiting in this project (at most ${EVENT_DELETES_PENDING_PER_PROJECT}); retry in a minute.`,
        null,
        { 'retry-after': '60' },
      )
    }
  }

  /** Queues the events of `personIds` of `teamId` for the next mutation. */
  add(teamId: number, personIds: string[]): void {
    let set = this.pending.get(teamId)
    if (!set) this.pending.set(teamId, (set = new Set()))
    for (const id of personIds) set.add(id)
  }

  /** Issues one mutation for what is pending (per project at most EVENT_DELETES_PER_PROJECT). */
  flush(): Promise<void> {
    this.running = this.running.then(() => this.issue()).catch(this.onError)
    return this.running
  }

  private async issue(): Promise<void> {
    const clauses: string[] = []
    for (const [teamId, set] of this.pending) {
      const ids = [...set].slice(0, EVENT_DELETES_PER_PROJECT)
      for (const id of ids) set.delete(id)
      if (set.size === 0) this.pending.delete(teamId)
      const list = ids.map((x) => `toUUID(${sqlString(x)})`).join(', ')
      clauses.push(`(team_id = ${teamId} AND person_id IN (${list}))`)
    }
    if (clauses.length === 0) return
    // A mutation runs in the background on every server version; nobody waits for it.
    await this.tables.alter('events', `DELETE WHERE ${clauses.join(' OR ')}`)
  }

  /** Stops the timer and issues everything pending (graceful shutdown). */
  async stop(): Promise<void> {
    clearInterval(this.timer)
    while (this.pending.size > 0) await this.flush()
    await this.running
  }
}

/** Returns false when the person does not exist (or is already deleted). */
export async function deletePerson(
  ch: ClickHouseClient,
  tables: TableAdmin,
  teamId: number,
  id: string,
  opts: { deleteEvents: boolean; eventDeletes?: EventDeletes },
): Promise<boolean> {
  // refused before anything is deleted: the person and its events go together or not at all
  if (opts.deleteEvents) opts.eventDeletes?.check(teamId, 1)
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
        properties: '{}',
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
    const ids = [id, ...merged.map((m) => m.old)]
    if (opts.eventDeletes) opts.eventDeletes.add(teamId, ids)
    else {
      const list = ids.map((x) => `toUUID(${sqlString(x)})`).join(', ')
      await tables.alter('events', `DELETE WHERE team_id = ${teamId} AND person_id IN (${list})`)
    }
  }
  return true
}

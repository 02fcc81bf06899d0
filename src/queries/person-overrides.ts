import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'

// Whether a project has merged persons, for the runner's DataFacts (below). Events keep the person
// id they were stamped with and a merge is a person_overrides row, so for a project without any row
// `person_id` is the stamped column and the override join (an ALL LEFT JOIN on every event read,
// docs/performance.md "Insights") can be left out.
//
// "None" is read again for every query, so the first query that starts after a merge is written
// takes the join (a query that read "none" just before runs as it would have before the merge).
// "Some" is remembered for the process: the join is correct whether or not rows remain, and a
// project that merged once merges again.

/**
 * What the runner knew about the project's data just before compiling, so a kind can print cheaper
 * SQL that gives the same answer on that data. Absent: assume the general case.
 */
export interface DataFacts {
  /** false: the project had no person overrides (no merged persons), so `person_id` needs no join */
  personOverrides: boolean
  /**
   * Trends: buckets whose values the runner already holds (day-cache.ts), per `period|series`, as
   * bucket start texts; the statement leaves them out where it can and says which it left out.
   */
  skipBuckets?: Record<string, string[]>
}

/** `SELECT 1` if team `teamId` has any person_overrides row (the table's sort key starts with team_id). */
export const overridesSql = (teamId: number) => {
  if (!Number.isSafeInteger(teamId)) throw new Error('teamId must be an integer')
  return `SELECT 1 AS x FROM person_overrides WHERE team_id = ${teamId} LIMIT 1`
}

export class PersonOverrides {
  private readonly known = new Set<number>()

  constructor(private readonly ch: ClickHouseClient) {}

  /** Whether the project has person overrides; true when they could not be read (the general SQL). */
  async has(teamId: number): Promise<boolean> {
    if (this.known.has(teamId)) return true
    let found: boolean
    try {
      found = (await selectRows(this.ch, overridesSql(teamId))).length > 0
    } catch {
      return true
    }
    if (found) this.known.add(teamId)
    return found
  }
}

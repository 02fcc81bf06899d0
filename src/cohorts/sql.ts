// The only ClickHouse SQL cohorts print themselves: writes into their own tables
// (schema/clickhouse/0100_cohortpeople.sql, 0101_person_static_cohort.sql). Every read goes through
// HogQL (the cohort_people and static_cohort_people tables of src/hogql/schema.ts); what is
// inserted is always the rows of a compiled, team-guarded HogQL SELECT of person ids (`id`).
import { sqlNumber } from '../clickhouse/sql.ts'

const int = (n: number) => {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a non-negative integer: ${n}`)
  return sqlNumber(n)
}

/** Writes the members `selectIds` finds as version `version` of dynamic cohort `cohortId`. */
export function insertMembersSql(
  teamId: number,
  cohortId: number,
  version: number,
  selectIds: string,
): string {
  return (
    'INSERT INTO cohortpeople (team_id, cohort_id, version, person_id)' +
    ` SELECT ${int(teamId)}, ${int(cohortId)}, ${int(version)}, id FROM (${selectIds})`
  )
}

/**
 * Adds (or with `deleted`, removes) the persons `selectIds` finds to static cohort `cohortId`, as
 * rows of version `version`: the newest row of each person decides.
 */
export function staticMembersSql(
  teamId: number,
  cohortId: number,
  version: number,
  selectIds: string,
  deleted = false,
): string {
  return (
    'INSERT INTO person_static_cohort (team_id, cohort_id, person_id, is_deleted, version)' +
    ` SELECT ${int(teamId)}, ${int(cohortId)}, id, ${deleted ? 1 : 0}, ${int(version)} FROM (${selectIds})`
  )
}

/** The mutation clause that drops a dynamic cohort's rows older than `keep` (all with keep 0). */
export function staleMembersClause(teamId: number, cohortId: number, keep: number): string {
  return `DELETE WHERE team_id = ${int(teamId)} AND cohort_id = ${int(cohortId)} AND version < ${int(keep === 0 ? Number.MAX_SAFE_INTEGER : keep)}`
}

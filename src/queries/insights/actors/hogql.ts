// Running Burrow-built HogQL and ClickHouse SQL outside the query endpoint (person endpoints and
// exports), with the same limits the endpoint applies. Literals and filters are in common/.
import type { ClickHouseClient } from '@clickhouse/client'
import type { CompiledQuery } from '../../../hogql/index.ts'
import { compileHogQLCached } from '../../compile-cache.ts'
import { execute } from '../../execute.ts'
import type { DataFacts } from '../../person-overrides.ts'

// src/persons/routes.ts imports `str` from here.
export { str } from '../common/index.ts'

export interface RunOptions {
  teamId: number
  timezone: string
  limit?: number
  maxExecutionSeconds?: number
  /** what is known of the project's data (kinds.ts); absent: person_id through merges */
  facts?: DataFacts
}

export async function compile(hogql: string, opts: RunOptions): Promise<CompiledQuery> {
  return compileHogQLCached(hogql, {
    teamId: opts.teamId,
    timezone: opts.timezone,
    defaultLimit: opts.limit ?? 50_000,
    maxLimit: Math.max(opts.limit ?? 50_000, 50_000),
    personOverrides: opts.facts?.personOverrides,
  })
}

function queryId(teamId: number): string {
  return `t${teamId}-persons-${Math.random().toString(36).slice(2)}`
}

/** Runs ClickHouse SQL Burrow built itself (reads only; the same limits as the query endpoint). */
export async function runSQL(ch: ClickHouseClient, sql: string, teamId: number): Promise<unknown[][]> {
  const compiled = { hogql: '', clickhouse: sql, columns: [], types: [] }
  const out = await execute(ch, compiled, {
    maxExecutionSeconds: 60,
    maxResultRows: 1_000_000,
    // exports page through up to a million rows: bounded by rows, not by the query endpoint's cells
    maxCells: Number.POSITIVE_INFINITY,
    queryId: queryId(teamId),
  })
  return out.rows
}

/** Compiles and runs HogQL outside the query endpoint (person endpoints, exports). */
export async function runHogQL(ch: ClickHouseClient, hogql: string, opts: RunOptions): Promise<unknown[][]> {
  const out = await execute(ch, await compile(hogql, opts), {
    maxExecutionSeconds: opts.maxExecutionSeconds ?? 60,
    maxResultRows: 1_000_000,
    maxCells: Number.POSITIVE_INFINITY,
    queryId: queryId(opts.teamId),
  })
  return out.rows
}

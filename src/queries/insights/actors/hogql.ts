// Small helpers for building HogQL text from request objects. Every user value reaches the text as
// an escaped literal; the compiler then adds the team guard and resolves persons through merges.
import type { ClickHouseClient } from '@clickhouse/client'
import { escapeNumber, escapeString } from '../../../hogql/escape.ts'
import { compileHogQL, type CompiledQuery } from '../../../hogql/index.ts'
import { execute } from '../../execute.ts'

export const str = (s: string): string => escapeString(s)
export const num = (n: number): string => escapeNumber(n)

/** A literal for a property value as stored: strings as they are, other scalars as JSON text. */
export function valueLiteral(v: unknown): string {
  if (typeof v === 'string') return str(v)
  return str(JSON.stringify(v))
}

/** `properties['key']` of the events table, or of the event's person (`person.properties`). */
export function propertyRef(key: string, owner: 'event' | 'person'): string {
  return `${owner === 'event' ? 'properties' : 'person.properties'}[${str(key)}]`
}

export interface RunOptions {
  teamId: number
  timezone: string
  limit?: number
  maxExecutionSeconds?: number
}

export async function compile(hogql: string, opts: RunOptions): Promise<CompiledQuery> {
  return compileHogQL(hogql, {
    teamId: opts.teamId,
    timezone: opts.timezone,
    defaultLimit: opts.limit ?? 50_000,
    maxLimit: Math.max(opts.limit ?? 50_000, 50_000),
  })
}

const NO_LIMIT = 1_000_000_000_000

/** Compiles HogQL meant as a subquery: no row limit is added. */
export async function compileUnlimited(hogql: string, opts: { teamId: number; timezone: string }) {
  return compileHogQL(hogql, { ...opts, defaultLimit: NO_LIMIT, maxLimit: NO_LIMIT })
}

/** Runs ClickHouse SQL Burrow built itself (reads only; the same limits as the query endpoint). */
export async function runSQL(ch: ClickHouseClient, sql: string, teamId: number): Promise<unknown[][]> {
  const out = await execute(
    ch,
    { hogql: '', clickhouse: sql, columns: [], types: [] },
    {
      maxExecutionSeconds: 60,
      maxResultRows: 1_000_000,
      queryId: `t${teamId}-persons-${Math.random().toString(36).slice(2)}`,
    },
  )
  return out.rows
}

/** Compiles and runs HogQL outside the query endpoint (person endpoints, exports). */
export async function runHogQL(ch: ClickHouseClient, hogql: string, opts: RunOptions): Promise<unknown[][]> {
  const compiled = await compile(hogql, opts)
  const out = await execute(ch, compiled, {
    maxExecutionSeconds: opts.maxExecutionSeconds ?? 60,
    maxResultRows: 1_000_000,
    queryId: `t${opts.teamId}-persons-${Math.random().toString(36).slice(2)}`,
  })
  return out.rows
}

// Building HogQL text safely, and compiling the event-reading parts of an insight.
//
// Insights are written as HogQL wherever HogQL can say it, so they inherit the compiler's team
// guard on every table, person-override resolution and property storage.
// What HogQL cannot say (ranking breakdowns, lifecycle status arrays) is a ClickHouse wrapper
// that reads only from compiled HogQL subqueries, never from a table: it needs no guard of its own.
import { escapeNumber, escapeString } from '../../../hogql/escape.ts'
import type { CompiledQuery } from '../../../hogql/index.ts'
import { compileHogQLCached } from '../../compile-cache.ts'
import type { DataFacts } from '../../person-overrides.ts'

/**
 * A HogQL string literal. Only the backslash and the quote are escaped: the HogQL grammar reads
 * other characters as they are, and does not read the printer's `\xNN` escapes back
 * (escapeString is for the ClickHouse text the printer writes, not for HogQL input).
 */
export function str(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** A ClickHouse string literal, for the wrappers around compiled HogQL (the printer's escaping). */
export const sqlStr = escapeString

/** A numeric literal; refuses anything that is not a finite number. */
export function num(value: number): string {
  return escapeNumber(value)
}

/** `properties['key']` on the events table, or on `person.` / another table alias (`p.`). */
export function propertyField(key: string, prefix = ''): string {
  return `${prefix}properties[${str(key)}]`
}

/** Every condition must hold; an empty list is true. */
export function and(conds: (string | undefined | null | false)[]): string {
  const c = conds.filter((x): x is string => !!x)
  if (!c.length) return '1 = 1'
  return c.map((x) => `(${x})`).join(' AND ')
}

export function or(conds: string[]): string {
  if (!conds.length) return '1 = 0'
  return conds.map((x) => `(${x})`).join(' OR ')
}

// Inner queries must never be cut by the compiler's default LIMIT: their rows are aggregated again.
const NO_LIMIT = Number.MAX_SAFE_INTEGER

/**
 * Compiles an inner HogQL SELECT for embedding in a wrapper: no row limit, project time zone,
 * `person_id` without the override join when `facts` say the project has no overrides, and the
 * server's guard barrier when `facts` name it (the rest prints for every server).
 */
export function compileInner(
  hogql: string,
  teamId: number,
  timezone: string,
  facts?: DataFacts,
): Promise<CompiledQuery> {
  return compileHogQLCached(hogql, {
    teamId,
    timezone,
    defaultLimit: NO_LIMIT,
    maxLimit: NO_LIMIT,
    personOverrides: facts?.personOverrides,
  })
}

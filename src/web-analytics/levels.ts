// The two reads every web query kind is built from (PostHog's web_analytics inner queries): the page
// views and screens of the queried periods, compiled from HogQL, and the sessions those events
// belong to, read from raw_sessions (docs/web-analytics.md, "How it is computed").
import type { Project } from '../accounts/documents.ts'
import { quoteIdentifier } from '../hogql/escape.ts'
import { compileInner } from '../queries/insights/common/hogql.ts'
import type { DataFacts } from '../queries/person-overrides.ts'
import { sessionColumnsSQL } from '../sessions/sql.ts'
import { periodsCondition, sessionDayBounds, type WebRanges } from './filters.ts'

const q = quoteIdentifier

/** A column of the events level, `w_<name>` (prefixed so that no alias shadows an events column). */
export const eventColumn = (name: string) => q(`w_${name}`)

/**
 * Level 1: the page views and screens inside either period that pass `filters` (HogQL), one row
 * each: `w_person`, `w_session` (the $session_id, '' for none) and each of `inputs` (HogQL
 * expressions over the event) as `w_<name>`. Compiled: team guard, person merges (unless `facts`
 * say there are none), property storage.
 */
export async function eventsLevel(
  project: Project,
  ranges: WebRanges,
  filters: string | undefined,
  inputs: Record<string, string> = {},
  facts?: DataFacts,
): Promise<{ hogql: string; sql: string }> {
  const select = [
    'person_id AS w_person',
    '$session_id AS w_session',
    ...Object.entries(inputs).map(([name, expr]) => `${expr} AS ${eventColumn(name)}`),
  ]
  const where = [
    `event = '$pageview' OR event = '$screen'`,
    periodsCondition(ranges),
    ...(filters ? [filters] : []),
  ]
  const hogql = `SELECT ${select.join(', ')} FROM events WHERE ${where.map((w) => `(${w})`).join(' AND ')}`
  return { hogql, sql: (await compileInner(hogql, project.id, project.timezone, facts)).clickhouse }
}

/**
 * The sessions with `fields` (names of the HogQL sessions table) beside `session_id` and
 * `w_matched` (1 on every row: 0 where a LEFT JOIN found none), from the raw_sessions rows of the
 * UTC days within 3 days of the periods (and, with `only`, of those sessions).
 */
export function sessionsLevel(
  teamId: number,
  fields: readonly string[],
  ranges: WebRanges,
  only?: string,
): string {
  // `only`: SQL of the session ids wanted (Burrow's own guarded query, never a user's condition),
  // tested on the raw rows before their states are merged
  const also = [...sessionDayBounds(ranges), ...(only ? [`session_id IN (${only})`] : [])]
  const sessions = sessionColumnsSQL(teamId, [...new Set(fields)], also)
  return `SELECT *, 1 AS w_matched FROM (${sessions})`
}

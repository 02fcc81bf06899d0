import { quoteIdentifier } from './escape.ts'
import { guardedTable } from './guard.ts'

// The feature_flag_usage virtual table, read team-first: the same rows as the 0005 view
// (schema/clickhouse/0005_feature_flag_usage.sql) for one project, computed from that project's
// events and person overrides only. The view aggregates every project before any filter can apply,
// so a user expression on its rows would run on other projects' data; Burrow never reads it.

const ZERO_UUID = "toUUID('00000000-0000-0000-0000-000000000000')"

/**
 * One project's flag usage per flag, variant, day (UTC) and source: `calls` counts the events,
 * `unique_persons` the persons behind them after merges. Ends with the guard's LIMIT barrier.
 * `pushed` (the query's conditions on `day` and `source`) are placed beside the team condition of
 * each source's read, with `day` as the event's UTC day and `source` as that branch's name: a query
 * of the called events of the last days reads only those (a false constant there leaves the other
 * branch's granules unread).
 */
export function flagUsageSQL(
  teamId: number,
  _printed: string[] = [],
  // schema.ts's PushedConditions (not imported: schema.ts imports this file)
  pushed: (columns: Readonly<Record<string, string>>) => string[] = () => [],
): string {
  const events = (cols: string, tail: string, also: string[] = []) =>
    guardedTable(quoteIdentifier('events'), teamId, cols, tail, also)
  const where = (source: string) => pushed({ day: 'toDate(timestamp)', source: `'${source}'` })
  // a property's value as HogQL reads it (print-expr.ts propertyValue; not imported: no cycle)
  const value = (key: string) => `JSONExtract(properties, ${key}, 'Nullable(String)')`
  return `SELECT flag, variant, day, source, count() AS calls,
  uniqExact(if(override_person_id = ${ZERO_UUID}, person_id, override_person_id)) AS unique_persons
FROM (
  SELECT person_id, day, 'called' AS source, assumeNotNull(f) AS flag, ifNull(r, '') AS variant
  FROM ${events(
    `person_id, toDate(timestamp) AS day, ${value("'$feature_flag'")} AS f, ${value("'$feature_flag_response'")} AS r`,
    'WHERE f IS NOT NULL',
    [`event = '$feature_flag_called'`, ...where('called')],
  )} AS called
  UNION ALL
  SELECT person_id, day, 'property' AS source, substring(k, 10) AS flag, assumeNotNull(v) AS variant
  FROM ${events('person_id, toDate(timestamp) AS day, properties', '', where('property'))} AS carried
  ARRAY JOIN arrayFilter(x -> startsWith(x, '$feature/'), JSONExtractKeys(properties)) AS k
  WHERE (${value('k')} AS v) IS NOT NULL
) AS usage
ANY LEFT JOIN ${guardedTable(
    quoteIdentifier('person_overrides'),
    teamId,
    'old_person_id AS person_id, argMax(override_person_id, version) AS override_person_id',
    'GROUP BY old_person_id',
  )} AS overrides USING (person_id)
GROUP BY flag, variant, day, source`
}

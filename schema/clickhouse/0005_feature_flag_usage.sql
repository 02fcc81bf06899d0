-- Feature flag usage per project, flag, variant and day: `calls` counts the events, `unique_persons`
-- the persons behind them, after merges (stamped person ids go through person_overrides).
-- Two sources, told apart by `source`:
--   'called'   - $feature_flag_called events: flag = $feature_flag, variant = $feature_flag_response
--   'property' - any event carrying `$feature/<flag>` properties (variant = the property's value)
-- Variants are stored as properties are: strings as they are, booleans as 'true' / 'false'.
-- Burrow itself never reads this view: it aggregates every project before any filter applies, so
-- HogQL's feature_flag_usage table and the flag usage endpoint compute the same rows from one
-- project's events (src/hogql/flag-usage.ts). It stays for SQL users and tests of the projectors.
-- Current ClickHouse releases require an alias on every joined subquery (hence `usage`, `overrides`).
-- A plain view rather than a materialized one: it reads the events table by name (so a replay's table
-- swap needs nothing here), counts each event exactly once because the events table does, and follows
-- merges that happen after the events were written.
CREATE VIEW IF NOT EXISTS feature_flag_usage AS
SELECT
  team_id,
  flag,
  variant,
  day,
  source,
  count() AS calls,
  uniqExact(if(override_person_id = toUUID('00000000-0000-0000-0000-000000000000'),
               person_id, override_person_id)) AS unique_persons
FROM (
  SELECT
    team_id,
    person_id,
    toDate(timestamp) AS day,
    'called' AS source,
    assumeNotNull(JSONExtract(properties, '$feature_flag', 'Nullable(String)')) AS flag,
    ifNull(JSONExtract(properties, '$feature_flag_response', 'Nullable(String)'), '') AS variant
  FROM events
  WHERE event = '$feature_flag_called'
    AND JSONExtract(properties, '$feature_flag', 'Nullable(String)') IS NOT NULL
  UNION ALL
  SELECT
    team_id,
    person_id,
    toDate(timestamp) AS day,
    'property' AS source,
    substring(k, 10) AS flag,
    assumeNotNull(JSONExtract(properties, k, 'Nullable(String)')) AS variant
  FROM events
  ARRAY JOIN arrayFilter(x -> startsWith(x, '$feature/'), JSONExtractKeys(properties)) AS k
  WHERE JSONExtract(properties, k, 'Nullable(String)') IS NOT NULL
) AS usage
ANY LEFT JOIN (
  SELECT team_id, old_person_id AS person_id, argMax(override_person_id, version) AS override_person_id
  FROM person_overrides
  GROUP BY team_id, old_person_id
) AS overrides USING (team_id, person_id)
GROUP BY team_id, flag, variant, day, source;

-- Which (project, UTC day) of `events` took rows, and when: the trends bucket cache
-- (src/queries/day-cache.ts) keeps a closed day's values only while no insert touched that day
-- since they were computed. One row per insert block, project and day; the version column keeps
-- the latest once parts merge (read with max(at) in any case). team_id -1 on 1970-01-01 means
-- "every day of every project" (written after a replay's table swap).
-- The view follows the `events` table by name on 18.16, but by identity on current releases, where
-- a replay's RENAME leaves it on the old table: ensureChangedDaysView re-creates it after a swap,
-- and the cache reads system.tables and stays off while it is not attached.
CREATE TABLE IF NOT EXISTS events_changed_days (
  team_id Int64,
  day Date,
  at DateTime('UTC')
) ENGINE = ReplacingMergeTree(at)
ORDER BY (team_id, day);

CREATE MATERIALIZED VIEW IF NOT EXISTS events_changed_days_mv TO events_changed_days AS
SELECT team_id, toDate(timestamp) AS day, now() AS at
FROM events
GROUP BY team_id, day

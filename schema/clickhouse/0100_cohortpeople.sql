-- Membership of dynamic cohorts, one row per person and calculated version (PostHog's
-- cohortpeople). A calculation inserts every member under the cohort's next version; readers take
-- only the version the cohort document calls current (src/cohorts), so a calculation in progress
-- or a failed one is never seen, and older versions are deleted once a newer one is current.
-- A retried insert writes the same rows again: the replacing key collapses them.
CREATE TABLE IF NOT EXISTS cohortpeople (
  team_id Int64,
  cohort_id Int64,
  version UInt64,
  person_id UUID
) ENGINE = ReplacingMergeTree
ORDER BY (team_id, cohort_id, version, person_id)

-- Members of static cohorts (PostHog's person_static_cohort): added from a CSV upload, a list of
-- persons or a copy of a dynamic cohort, removed one by one. Versioned rows: the highest version of
-- each (cohort, person) wins, and a removal is a row with is_deleted = 1.
CREATE TABLE IF NOT EXISTS person_static_cohort (
  team_id Int64,
  cohort_id Int64,
  person_id UUID,
  is_deleted UInt8,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, cohort_id, person_id)

-- The events projection. One row per event uuid; the projector writes each row once
-- (reconciling by _seq after a crash) and the replacing key collapses any stray copy.
-- `timestamp` is PostHog's DateTime64(6, 'UTC'): what was sent, to the millisecond capture keeps.
-- Properties are their JSON text, as in PostHog; HogQL reads `properties.a.b` with JSONExtract
-- (docs/hogql.md, "Properties"), and hot ones can be materialized (burrow materialize).
CREATE TABLE IF NOT EXISTS events (
  team_id Int64,
  uuid UUID,
  event String,
  distinct_id String,
  person_id UUID,
  timestamp DateTime64(6, 'UTC'),
  properties String,
  person_properties String,
  elements_chain String,
  session_id String,
  `$group_0` String,
  `$group_1` String,
  `$group_2` String,
  `$group_3` String,
  `$group_4` String,
  created_at DateTime('UTC'),
  _seq UInt64,
  _offset UInt32
) ENGINE = ReplacingMergeTree(_seq)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), uuid)
SETTINGS index_granularity = 8192

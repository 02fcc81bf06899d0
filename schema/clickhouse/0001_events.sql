-- The events projection. One row per event uuid; the projector writes each row once
-- (reconciling by _seq after a crash) and the replacing key collapses any stray copy.
-- `timestamp` is PostHog's DateTime64(6, 'UTC'): what was sent, to the millisecond capture keeps.
-- Properties are kept raw and as parallel key/value arrays so a property read is an
-- exact array lookup: strings unquoted, other scalars and objects as JSON text, null
-- values left out; nested paths of objects appear too, joined by '\x1F' (see docs/storage.md).
CREATE TABLE IF NOT EXISTS events (
  team_id Int64,
  uuid UUID,
  event String,
  distinct_id String,
  person_id UUID,
  timestamp DateTime64(6, 'UTC'),
  properties String,
  prop_keys Array(String),
  prop_values Array(String),
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

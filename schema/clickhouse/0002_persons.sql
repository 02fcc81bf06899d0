-- Persons, their distinct ids and merge overrides: versioned rows, the highest version
-- wins (read with argMax or FINAL). The projector's identity state (JetStream KV) is
-- the decision maker; these tables are what queries join through.
CREATE TABLE IF NOT EXISTS person (
  team_id Int64,
  id UUID,
  created_at DateTime64(3, 'UTC'),
  properties String,
  is_identified UInt8,
  is_deleted UInt8,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, id);

CREATE TABLE IF NOT EXISTS person_distinct_id (
  team_id Int64,
  distinct_id String,
  person_id UUID,
  is_deleted UInt8,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, distinct_id);

-- After a merge, events stamped with old_person_id belong to override_person_id.
CREATE TABLE IF NOT EXISTS person_overrides (
  team_id Int64,
  old_person_id UUID,
  override_person_id UUID,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, old_person_id)

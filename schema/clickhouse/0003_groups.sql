CREATE TABLE IF NOT EXISTS groups (
  team_id Int64,
  group_type_index UInt8,
  group_key String,
  created_at DateTime('UTC'),
  properties String,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, group_type_index, group_key);

CREATE TABLE IF NOT EXISTS group_type_mapping (
  team_id Int64,
  group_type String,
  group_type_index UInt8,
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (team_id, group_type_index)

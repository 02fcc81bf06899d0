-- Event properties materialized as columns of `events` (burrow materialize PROPERTY): the HogQL
-- printer reads `properties.<property>` from `column_name` instead of the key/value arrays.
CREATE TABLE IF NOT EXISTS materialized_columns (
  property String,
  column_name String,
  created_at DateTime('UTC')
) ENGINE = ReplacingMergeTree()
ORDER BY property

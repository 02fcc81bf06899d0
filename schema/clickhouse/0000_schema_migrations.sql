CREATE TABLE IF NOT EXISTS schema_migrations (
  version String,
  applied_at DateTime('UTC')
) ENGINE = ReplacingMergeTree()
ORDER BY version

-- Log lines of plugin configs (spec: "Plugin configuration log entry"), written in batches by
-- src/plugins/log-writer.ts and paged newest first by GET .../plugin_configs/{id}/logs/.
-- The sorting key holds `id`, so a batch written twice after a timed-out insert collapses on merge
-- (reads use FINAL). Old months are removed by dropping partitions.
CREATE TABLE IF NOT EXISTS plugin_log_entries (
  id UUID,
  team_id Int64,
  plugin_id Int64,
  plugin_config_id Int64,
  timestamp DateTime64(3, 'UTC'),
  source String,
  type String,
  message String,
  instance_id UUID
) ENGINE = ReplacingMergeTree()
PARTITION BY toYYYYMM(timestamp)
ORDER BY (team_id, plugin_config_id, timestamp, id)
SETTINGS index_granularity = 8192;

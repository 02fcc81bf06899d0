-- Session recordings (docs/recordings.md), projected from the RECORDINGS stream by
-- src/recordings/projector.ts.
--
-- session_replay_snapshots: one row per chunk of rrweb events (or per fragment of a chunk too large
-- for one NATS message). `data` is a gzip member of JSON lines `[window_id, event]`; fragments of a
-- chunk share `chunk_id` and are concatenated in `part` order. The chunk's summary is on every
-- fragment and counted from part 0. Partitioned by the month capture received the chunk (client
-- clocks cannot spread one insert over many partitions); sorted by session so a session's chunks are
-- read together. The replacing key collapses a chunk sent twice (same content, same chunk_id).
CREATE TABLE IF NOT EXISTS session_replay_snapshots (
  team_id Int64,
  session_id String,
  window_id String,
  distinct_id String,
  chunk_id String,
  part UInt16,
  parts UInt16,
  first_ms Int64,
  last_ms Int64,
  click_count UInt32,
  keypress_count UInt32,
  mouse_activity_count UInt32,
  active_ms UInt64,
  console_log_count UInt32,
  console_warn_count UInt32,
  console_error_count UInt32,
  first_url String,
  size UInt64,
  event_count UInt32,
  snapshot_source String,
  snapshot_library String,
  received_at DateTime('UTC'),
  data String,
  _seq UInt64
) ENGINE = ReplacingMergeTree(_seq)
PARTITION BY toYYYYMM(received_at)
ORDER BY (team_id, session_id, first_ms, chunk_id, part)
SETTINGS index_granularity = 256;

-- The per-session summary, like PostHog's session_replay_events: aggregate states that merge into
-- one row per session and day of receipt (read with -Merge and GROUP BY session_id). Written from
-- the chunk rows of each projected batch (INSERT ... SELECT), never from client input directly.
-- max_seq is the highest stream sequence applied, which is how a redelivered batch knows whether
-- its summary already landed.
CREATE TABLE IF NOT EXISTS session_replay_events (
  team_id Int64,
  day Date,
  session_id String,
  distinct_id AggregateFunction(argMin, String, Int64),
  first_ms AggregateFunction(min, Int64),
  last_ms AggregateFunction(max, Int64),
  first_url AggregateFunction(argMin, String, Int64),
  click_count AggregateFunction(sum, UInt64),
  keypress_count AggregateFunction(sum, UInt64),
  mouse_activity_count AggregateFunction(sum, UInt64),
  active_ms AggregateFunction(sum, UInt64),
  console_log_count AggregateFunction(sum, UInt64),
  console_warn_count AggregateFunction(sum, UInt64),
  console_error_count AggregateFunction(sum, UInt64),
  size AggregateFunction(sum, UInt64),
  event_count AggregateFunction(sum, UInt64),
  message_count AggregateFunction(sum, UInt64),
  snapshot_source AggregateFunction(argMin, String, Int64),
  snapshot_library AggregateFunction(argMin, String, Int64),
  max_seq AggregateFunction(max, UInt64)
) ENGINE = AggregatingMergeTree()
PARTITION BY toYYYYMM(day)
ORDER BY (team_id, day, session_id)
SETTINGS index_granularity = 512;

-- Recordings deleted through the API: hidden at once, their rows removed by a mutation, and
-- chunks that arrive later for the same session are not projected.
CREATE TABLE IF NOT EXISTS session_replay_deleted (
  team_id Int64,
  session_id String,
  deleted_at DateTime('UTC'),
  deleted_by Int64,
  _seq UInt64
) ENGINE = ReplacingMergeTree(_seq)
ORDER BY (team_id, session_id)
SETTINGS index_granularity = 8192;

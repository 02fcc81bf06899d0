-- The taxonomy (docs/taxonomy.md): which events and properties each project has, written by the
-- projectors (src/taxonomy/collect.ts) one row per name new to the process, and per event name once
-- an hour for last_seen_at; read by GET .../event_definitions/ and .../property_definitions/
-- (src/taxonomy/store.ts). Rows of one name are folded by the merges (first seen, last seen, first
-- inferred type) and by the reads, which aggregate the same way: a row written twice changes
-- nothing. The times are capture's receive time of the events, the same on every replay of the log.
CREATE TABLE IF NOT EXISTS event_definitions (
  team_id Int64,
  name String,
  created_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  last_seen_at SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
) ENGINE = AggregatingMergeTree
ORDER BY (team_id, name);

-- type: PostHog's PropertyDefinition.Type (1 event, 2 person, 3 group); group_type_index -1 unless a
-- group's. typed: (when a value first gave the property a type, the type), (2105-01-01, '') while
-- none did: the earliest typed row wins. set_type: a type set through the API (PATCH), the latest wins.
CREATE TABLE IF NOT EXISTS property_definitions (
  team_id Int64,
  type UInt8,
  group_type_index Int8,
  name String,
  created_at SimpleAggregateFunction(min, DateTime64(3, 'UTC')),
  typed SimpleAggregateFunction(min, Tuple(DateTime64(3, 'UTC'), String)),
  set_type SimpleAggregateFunction(max, Tuple(DateTime64(3, 'UTC'), String))
) ENGINE = AggregatingMergeTree
ORDER BY (team_id, type, group_type_index, name);

-- Which properties were seen on which event (PostHog's posthog_eventproperty), for ?event_names=.
CREATE TABLE IF NOT EXISTS event_properties (
  team_id Int64,
  event String,
  property String
) ENGINE = ReplacingMergeTree
ORDER BY (team_id, event, property);

-- Sessions (docs/sessions.md): one row of aggregate states per project, session and UTC day of its
-- events, as PostHog keeps them in raw_sessions. Read with the -Merge functions grouped by session
-- (src/sessions/sql.ts): a session that spans midnight or several inserts has several rows here
-- until parts merge, and the query merges them anyway.
-- Fed only by the view below, from each block inserted into `events`: no query scans the events to
-- build a session. The view reads `timestamp` (never its epoch-ms twin) through toDateTime64, which
-- is right for DateTime('UTC') and for DateTime64(6, 'UTC') alike; properties from the JSON text,
-- parsed once per event into a named Tuple of the 40 top-level keys the view reads (strings as they
-- are, other values as their JSON text, a missing key or a null as ''). One JSONExtractString per
-- field parsed each event ~50 times (inserts into events ~6x slower); a Map of every key parsed it
-- once but built and searched the whole map (posthog-js events: inserts 3.2x slower than without the
-- view, 2.0x with the Tuple; docs/performance.md, "Ingestion on ClickHouse 26.7").
-- The first event's 37 fields (device, location, referrer, utm_*, click ids) are one argMin state
-- of a named tuple (`initial`, read by field name in src/sessions/sql.ts): they all take the value
-- of the same event, and one state for each cost the view as much again as the rest of its work
-- when each session has one event in an INSERT (the usual case on a busy site: 40-46 against 25 µs
-- a row of server CPU). Its type is on one line: schema readers split columns at ",\n".
-- Counts are uniq states of event uuids (PostHog's choice too): a row the projector wrote twice
-- (before the replacing merge of `events` collapsed it) is counted once.
-- Replay builds a fresh copy of the table and view beside the fresh events table and swaps them in
-- together (src/sessions/replay.ts).
CREATE TABLE IF NOT EXISTS raw_sessions (
  team_id Int64,
  day Date,
  session_id String,
  distinct_id AggregateFunction(argMax, String, DateTime64(6, 'UTC')),
  min_timestamp SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
  max_timestamp SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
  urls SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
  entry_url AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  end_url AggregateFunction(argMax, String, DateTime64(6, 'UTC')),
  last_external_click_url AggregateFunction(argMax, String, DateTime64(6, 'UTC')),
  initial AggregateFunction(argMin, Tuple(`browser` String, `browser_version` String, `os` String, `os_version` String, `device_type` String, `viewport_width` Int64, `viewport_height` Int64, `geoip_country_code` String, `geoip_subdivision_1_code` String, `geoip_subdivision_1_name` String, `geoip_subdivision_city_name` String, `geoip_time_zone` String, `referring_domain` String, `referrer` String, `utm_source` String, `utm_campaign` String, `utm_medium` String, `utm_term` String, `utm_content` String, `gclid` String, `gad_source` String, `gclsrc` String, `dclid` String, `gbraid` String, `wbraid` String, `fbclid` String, `msclkid` String, `twclid` String, `li_fat_id` String, `mc_cid` String, `igshid` String, `ttclid` String, `irclid` String, `_kx` String, `epik` String, `qclid` String, `sccid` String), DateTime64(6, 'UTC')),
  event_uniq AggregateFunction(uniq, UUID),
  pageview_uniq AggregateFunction(uniq, Nullable(UUID)),
  autocapture_uniq AggregateFunction(uniq, Nullable(UUID)),
  screen_uniq AggregateFunction(uniq, Nullable(UUID)),
  page_screen_autocapture_uniq_up_to AggregateFunction(uniqUpTo(1), Nullable(UUID)),
  vitals_lcp AggregateFunction(argMin, Nullable(Float64), DateTime64(6, 'UTC'))
) ENGINE = AggregatingMergeTree()
PARTITION BY toYYYYMM(day)
ORDER BY (team_id, day, session_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_sessions_mv TO raw_sessions AS
SELECT
  team_id,
  toDate(timestamp) AS day,
  session_id,
  argMaxState(distinct_id, ts) AS distinct_id,
  min(ts) AS min_timestamp,
  max(ts) AS max_timestamp,
  groupUniqArrayArray(if(url = '', [], [url])) AS urls,
  argMinState(url, ts) AS entry_url,
  argMaxState(url, ts) AS end_url,
  argMaxState(tupleElement(p, '$external_click_url'), ts) AS last_external_click_url,
  argMinState(CAST(tuple(
    tupleElement(p, '$browser'),
    tupleElement(p, '$browser_version'),
    tupleElement(p, '$os'),
    tupleElement(p, '$os_version'),
    tupleElement(p, '$device_type'),
    toInt64OrZero(tupleElement(p, '$viewport_width')),
    toInt64OrZero(tupleElement(p, '$viewport_height')),
    tupleElement(p, '$geoip_country_code'),
    tupleElement(p, '$geoip_subdivision_1_code'),
    tupleElement(p, '$geoip_subdivision_1_name'),
    tupleElement(p, '$geoip_city_name'),
    tupleElement(p, '$geoip_time_zone'),
    tupleElement(p, '$referring_domain'),
    tupleElement(p, '$referrer'),
    tupleElement(p, 'utm_source'),
    tupleElement(p, 'utm_campaign'),
    tupleElement(p, 'utm_medium'),
    tupleElement(p, 'utm_term'),
    tupleElement(p, 'utm_content'),
    tupleElement(p, 'gclid'),
    tupleElement(p, 'gad_source'),
    tupleElement(p, 'gclsrc'),
    tupleElement(p, 'dclid'),
    tupleElement(p, 'gbraid'),
    tupleElement(p, 'wbraid'),
    tupleElement(p, 'fbclid'),
    tupleElement(p, 'msclkid'),
    tupleElement(p, 'twclid'),
    tupleElement(p, 'li_fat_id'),
    tupleElement(p, 'mc_cid'),
    tupleElement(p, 'igshid'),
    tupleElement(p, 'ttclid'),
    tupleElement(p, 'irclid'),
    tupleElement(p, '_kx'),
    tupleElement(p, 'epik'),
    tupleElement(p, 'qclid'),
    tupleElement(p, 'sccid')
  ), 'Tuple(`browser` String, `browser_version` String, `os` String, `os_version` String, `device_type` String, `viewport_width` Int64, `viewport_height` Int64, `geoip_country_code` String, `geoip_subdivision_1_code` String, `geoip_subdivision_1_name` String, `geoip_subdivision_city_name` String, `geoip_time_zone` String, `referring_domain` String, `referrer` String, `utm_source` String, `utm_campaign` String, `utm_medium` String, `utm_term` String, `utm_content` String, `gclid` String, `gad_source` String, `gclsrc` String, `dclid` String, `gbraid` String, `wbraid` String, `fbclid` String, `msclkid` String, `twclid` String, `li_fat_id` String, `mc_cid` String, `igshid` String, `ttclid` String, `irclid` String, `_kx` String, `epik` String, `qclid` String, `sccid` String)'), ts) AS initial,
  uniqState(uuid) AS event_uniq,
  uniqState(if(event = '$pageview', uuid, NULL)) AS pageview_uniq,
  uniqState(if(event = '$autocapture', uuid, NULL)) AS autocapture_uniq,
  uniqState(if(event = '$screen', uuid, NULL)) AS screen_uniq,
  uniqUpToState(1)(if(event IN ('$pageview', '$screen', '$autocapture'), uuid, NULL)) AS page_screen_autocapture_uniq_up_to,
  -- the first LCP value the session reported, on whichever event (argMin skips the NULLs)
  argMinState(accurateCastOrNull(nullIf(nullIf(tupleElement(p, '$web_vitals_LCP_value'), ''), 'null'), 'Float64'), ts) AS vitals_lcp
FROM (
  SELECT team_id, timestamp, toDateTime64(timestamp, 6, 'UTC') AS ts, session_id, distinct_id, uuid, event,
    JSONExtract(properties, 'Tuple(
      `$current_url` String, `$external_click_url` String, `$browser` String,
      `$browser_version` String, `$os` String, `$os_version` String, `$device_type` String,
      `$viewport_width` String, `$viewport_height` String, `$geoip_country_code` String,
      `$geoip_subdivision_1_code` String, `$geoip_subdivision_1_name` String,
      `$geoip_city_name` String, `$geoip_time_zone` String, `$referring_domain` String,
      `$referrer` String, `utm_source` String, `utm_campaign` String, `utm_medium` String,
      `utm_term` String, `utm_content` String, `gclid` String, `gad_source` String,
      `gclsrc` String, `dclid` String, `gbraid` String, `wbraid` String, `fbclid` String,
      `msclkid` String, `twclid` String, `li_fat_id` String, `mc_cid` String, `igshid` String,
      `ttclid` String, `irclid` String, `_kx` String, `epik` String, `qclid` String,
      `sccid` String, `$web_vitals_LCP_value` String
    )') AS p,
    tupleElement(p, '$current_url') AS url
  FROM events
  WHERE session_id != ''
)
GROUP BY team_id, day, session_id;

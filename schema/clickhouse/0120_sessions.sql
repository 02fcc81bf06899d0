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
  initial_browser AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_browser_version AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_os AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_os_version AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_device_type AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_viewport_width AggregateFunction(argMin, Int64, DateTime64(6, 'UTC')),
  initial_viewport_height AggregateFunction(argMin, Int64, DateTime64(6, 'UTC')),
  initial_geoip_country_code AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_geoip_subdivision_1_code AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_geoip_subdivision_1_name AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_geoip_subdivision_city_name AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_geoip_time_zone AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_referring_domain AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_referrer AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_utm_source AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_utm_campaign AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_utm_medium AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_utm_term AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_utm_content AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_gclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_gad_source AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_gclsrc AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_dclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_gbraid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_wbraid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_fbclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_msclkid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_twclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_li_fat_id AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_mc_cid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_igshid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_ttclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_irclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial__kx AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_epik AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_qclid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
  initial_sccid AggregateFunction(argMin, String, DateTime64(6, 'UTC')),
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
  argMinState(tupleElement(p, '$browser'), ts) AS initial_browser,
  argMinState(tupleElement(p, '$browser_version'), ts) AS initial_browser_version,
  argMinState(tupleElement(p, '$os'), ts) AS initial_os,
  argMinState(tupleElement(p, '$os_version'), ts) AS initial_os_version,
  argMinState(tupleElement(p, '$device_type'), ts) AS initial_device_type,
  argMinState(toInt64OrZero(tupleElement(p, '$viewport_width')), ts) AS initial_viewport_width,
  argMinState(toInt64OrZero(tupleElement(p, '$viewport_height')), ts) AS initial_viewport_height,
  argMinState(tupleElement(p, '$geoip_country_code'), ts) AS initial_geoip_country_code,
  argMinState(tupleElement(p, '$geoip_subdivision_1_code'), ts) AS initial_geoip_subdivision_1_code,
  argMinState(tupleElement(p, '$geoip_subdivision_1_name'), ts) AS initial_geoip_subdivision_1_name,
  argMinState(tupleElement(p, '$geoip_city_name'), ts) AS initial_geoip_subdivision_city_name,
  argMinState(tupleElement(p, '$geoip_time_zone'), ts) AS initial_geoip_time_zone,
  argMinState(tupleElement(p, '$referring_domain'), ts) AS initial_referring_domain,
  argMinState(tupleElement(p, '$referrer'), ts) AS initial_referrer,
  argMinState(tupleElement(p, 'utm_source'), ts) AS initial_utm_source,
  argMinState(tupleElement(p, 'utm_campaign'), ts) AS initial_utm_campaign,
  argMinState(tupleElement(p, 'utm_medium'), ts) AS initial_utm_medium,
  argMinState(tupleElement(p, 'utm_term'), ts) AS initial_utm_term,
  argMinState(tupleElement(p, 'utm_content'), ts) AS initial_utm_content,
  argMinState(tupleElement(p, 'gclid'), ts) AS initial_gclid,
  argMinState(tupleElement(p, 'gad_source'), ts) AS initial_gad_source,
  argMinState(tupleElement(p, 'gclsrc'), ts) AS initial_gclsrc,
  argMinState(tupleElement(p, 'dclid'), ts) AS initial_dclid,
  argMinState(tupleElement(p, 'gbraid'), ts) AS initial_gbraid,
  argMinState(tupleElement(p, 'wbraid'), ts) AS initial_wbraid,
  argMinState(tupleElement(p, 'fbclid'), ts) AS initial_fbclid,
  argMinState(tupleElement(p, 'msclkid'), ts) AS initial_msclkid,
  argMinState(tupleElement(p, 'twclid'), ts) AS initial_twclid,
  argMinState(tupleElement(p, 'li_fat_id'), ts) AS initial_li_fat_id,
  argMinState(tupleElement(p, 'mc_cid'), ts) AS initial_mc_cid,
  argMinState(tupleElement(p, 'igshid'), ts) AS initial_igshid,
  argMinState(tupleElement(p, 'ttclid'), ts) AS initial_ttclid,
  argMinState(tupleElement(p, 'irclid'), ts) AS initial_irclid,
  argMinState(tupleElement(p, '_kx'), ts) AS initial__kx,
  argMinState(tupleElement(p, 'epik'), ts) AS initial_epik,
  argMinState(tupleElement(p, 'qclid'), ts) AS initial_qclid,
  argMinState(tupleElement(p, 'sccid'), ts) AS initial_sccid,
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

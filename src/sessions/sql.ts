import { guardedTable } from '../hogql/guard.ts'
import { quoteIdentifier } from '../hogql/escape.ts'
import { sqlString } from '../clickhouse/sql.ts'
import { channelTypeExpr, SQL_LOOKUPS } from './channel-type.ts'

// The HogQL `sessions` table as SQL: one project's raw_sessions rows (schema/clickhouse/0120)
// merged into one row per session, with PostHog's field names and definitions
// (posthog/hogql/database/schema/sessions_v2.py): entry values are those of the session's first
// event, end values of its last; empty strings and 'null' read as NULL; counts are distinct events.

/** A session is not a bounce once it lasted this long (PostHog's default, in seconds). */
export const BOUNCE_SECONDS = 10

/** The ad and click ids a session keeps from its first event, as PostHog names them. */
export const AD_IDS = [
  'gclid',
  'gad_source',
  'gclsrc',
  'dclid',
  'gbraid',
  'wbraid',
  'fbclid',
  'msclkid',
  'twclid',
  'li_fat_id',
  'mc_cid',
  'igshid',
  'ttclid',
  'irclid',
  '_kx',
  'epik',
  'qclid',
  'sccid',
] as const

const UTM = ['source', 'campaign', 'medium', 'term', 'content'] as const

const q = quoteIdentifier
const first = (column: string) => `nullIf(nullIf(argMinMerge(${q(column)}), 'null'), '')`
// The first event's fields are one argMin state of a named tuple (0120's `initial`): the state of 37
// fields cost the view about as much as all of its other work (docs/performance.md, "Ingestion on
// ClickHouse 26.7"). The same merge is written once per field and computed once.
const initialValue = (field: string) => `tupleElement(argMinMerge(${q('initial')}), ${sqlString(field)})`
const initial = (field: string) => `nullIf(nullIf(${initialValue(field)}, 'null'), '')`
const last = (column: string) => `nullIf(nullIf(argMaxMerge(${q(column)}), 'null'), '')`

/** Output column → aggregate over raw_sessions rows of one session (the merged level). */
const MERGED: [string, string][] = [
  ['distinct_id', `argMaxMerge(${q('distinct_id')})`],
  ['$start_timestamp', `min(${q('min_timestamp')})`],
  ['$end_timestamp', `max(${q('max_timestamp')})`],
  ['$urls', `arrayDistinct(arrayFlatten(groupArray(${q('urls')})))`],
  ['$entry_current_url', first('entry_url')],
  ['$end_current_url', last('end_url')],
  ['$last_external_click_url', last('last_external_click_url')],
  ['$entry_referring_domain', initial('referring_domain')],
  ['$entry_referrer', initial('referrer')],
  ...UTM.map((u): [string, string] => [`$entry_utm_${u}`, initial(`utm_${u}`)]),
  ...AD_IDS.map((id): [string, string] => [`$entry_${id}`, initial(id)]),
  ['$entry_browser', initial('browser')],
  ['$entry_browser_version', initial('browser_version')],
  ['$entry_os', initial('os')],
  ['$entry_os_version', initial('os_version')],
  ['$entry_device_type', initial('device_type')],
  ['$entry_viewport_width', initialValue('viewport_width')],
  ['$entry_viewport_height', initialValue('viewport_height')],
  ['$entry_geoip_country_code', initial('geoip_country_code')],
  ['$entry_geoip_subdivision_1_code', initial('geoip_subdivision_1_code')],
  ['$entry_geoip_subdivision_1_name', initial('geoip_subdivision_1_name')],
  ['$entry_geoip_city_name', initial('geoip_subdivision_city_name')],
  ['$entry_geoip_time_zone', initial('geoip_time_zone')],
  ['$event_count', `uniqMerge(${q('event_uniq')})`],
  ['$pageview_count', `uniqMerge(${q('pageview_uniq')})`],
  ['$autocapture_count', `uniqMerge(${q('autocapture_uniq')})`],
  ['$screen_count', `uniqMerge(${q('screen_uniq')})`],
  ['$page_screen_autocapture_count_up_to', `uniqUpToMerge(1)(${q('page_screen_autocapture_uniq_up_to')})`],
  ['$vitals_lcp', `argMinMerge(${q('vitals_lcp')})`],
]

const duration = `dateDiff('second', ${q('$start_timestamp')}, ${q('$end_timestamp')})`

/** Output column → expression over the merged level's columns. */
const COMPUTED: [string, string][] = [
  ['id', q('session_id')],
  ['$entry_pathname', `path(${q('$entry_current_url')})`],
  ['$entry_hostname', `domain(${q('$entry_current_url')})`],
  ['$end_pathname', `path(${q('$end_current_url')})`],
  ['$end_hostname', `domain(${q('$end_current_url')})`],
  ['$exit_current_url', q('$end_current_url')],
  ['$exit_pathname', `path(${q('$end_current_url')})`],
  ['$num_uniq_urls', `length(${q('$urls')})`],
  ['$session_duration', duration],
  ['duration', duration],
  // PostHog's pageview mode: no page view, no verdict (NULL); one page view, no autocapture and
  // under BOUNCE_SECONDS is a bounce.
  [
    '$is_bounce',
    `if(${q('$pageview_count')} = 0, NULL, NOT (${q('$pageview_count')} > 1 OR ${q('$autocapture_count')} > 0 OR ${duration} >= ${BOUNCE_SECONDS}))`,
  ],
  [
    '$channel_type',
    channelTypeExpr(
      {
        campaign: q('$entry_utm_campaign'),
        medium: q('$entry_utm_medium'),
        source: q('$entry_utm_source'),
        referringDomain: q('$entry_referring_domain'),
        hasGclid: `isNotNull(${q('$entry_gclid')})`,
        hasFbclid: `isNotNull(${q('$entry_fbclid')})`,
        gadSource: q('$entry_gad_source'),
      },
      SQL_LOOKUPS,
    ),
  ],
]

/** The ClickHouse type of each column the relation returns (for the HogQL schema). */
export const SESSION_COLUMN_TYPES: Readonly<Record<string, string>> = {
  session_id: 'String',
  id: 'String',
  distinct_id: 'String',
  $start_timestamp: 'DateTime64',
  $end_timestamp: 'DateTime64',
  $urls: 'Array(String)',
  $entry_viewport_width: 'Int64',
  $entry_viewport_height: 'Int64',
  $event_count: 'UInt64',
  $pageview_count: 'UInt64',
  $autocapture_count: 'UInt64',
  $screen_count: 'UInt64',
  $page_screen_autocapture_count_up_to: 'UInt64',
  $num_uniq_urls: 'UInt64',
  $session_duration: 'Int64',
  duration: 'Int64',
  $is_bounce: 'Nullable(UInt8)',
  $vitals_lcp: 'Nullable(Float64)',
}

/** Every column of the relation, in the order `SELECT *` shows the ones it shows. */
export const SESSION_COLUMNS: readonly string[] = [
  'session_id',
  ...MERGED.map(([c]) => c),
  ...COMPUTED.map(([c]) => c),
]

/**
 * One project's sessions, one row per session id: raw_sessions read through the team guard, merged
 * by session, then the fields computed from the merged values. `pushed` (the query's conditions on
 * session_id, the key the rows are merged by) filter the rows before they are merged.
 */
export function sessionsSQL(
  teamId: number,
  _printed: string[] = [],
  pushed: (columns: Readonly<Record<string, string>>) => string[] = () => [],
): string {
  const merged = [q('session_id'), ...MERGED.map(([c, e]) => `${e} AS ${q(c)}`)].join(', ')
  const read = guardedTable(
    q('raw_sessions'),
    teamId,
    merged,
    `GROUP BY ${q('session_id')}`,
    pushed({ session_id: q('session_id') }),
  )
  return `SELECT *, ${COMPUTED.map(([c, e]) => `${e} AS ${q(c)}`).join(', ')} FROM ${read} AS ${q('_merged')}`
}

/**
 * One project's sessions as `sessionsSQL` computes them, with only `columns` (field names of the
 * HogQL table, e.g. `$entry_pathname`) beside `session_id`, from the raw_sessions rows that pass
 * `also` (conditions on raw_sessions' own columns such as `day`, placed beside the team condition):
 * for query kinds that read a few fields of the sessions in a time window, without merging the
 * other ~50 states.
 */
export function sessionColumnsSQL(teamId: number, columns: readonly string[], also: string[] = []): string {
  const computed = COMPUTED.filter(([c]) => columns.includes(c))
  const unknown = columns.filter((c) => !MERGED.some(([m]) => m === c) && !computed.some(([m]) => m === c))
  if (unknown.length) throw new Error(`sessionColumnsSQL: unknown session fields ${unknown.join(', ')}`)
  // the merged fields asked for, and those the computed ones read (named by their quoted alias);
  // the computed ones may read each other's merged inputs only, never another computed field
  const texts = [...columns.map(q), ...computed.map(([, e]) => e)]
  const merged = MERGED.filter(([c]) => texts.some((t) => t.includes(q(c))))
  const list = [q('session_id'), ...merged.map(([c, e]) => `${e} AS ${q(c)}`)].join(', ')
  const read = guardedTable(q('raw_sessions'), teamId, list, `GROUP BY ${q('session_id')}`, also)
  const out = [q('session_id'), ...columns.map(q)]
  const extra = computed.map(([c, e]) => `${e} AS ${q(c)}`)
  return `SELECT ${out.join(', ')} FROM (SELECT *${extra.length ? `, ${extra.join(', ')}` : ''} FROM ${read} AS ${q('_merged')})`
}

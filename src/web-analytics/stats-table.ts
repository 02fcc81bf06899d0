// Long because the table's three levels and its per-breakdown rules (PostHog's 20-odd breakdowns,
// each with its own column, filter and ordering) read best in one place.
// WebStatsTableQuery on POST /query/ (PostHog's posthog/hogql_queries/web_analytics/stats_table.py):
// visitors and views (and the bounce rate) of the page views and screens in a date range, broken
// down by one of PostHog's breakdowns (page, entry and exit page, channel, utm, device, location,
// ...), each figure a [current, previous] pair, the previous one with compareFilter.
//
// PostHog's query, level by level, as Burrow prints it (docs/web-analytics.md):
//  1. events (HogQL, compiled: team guard, person merges, property filters and test accounts):
//     person, $session_id and the raw breakdown inputs of each page view or screen in either period;
//  2. per (session, breakdown value): persons, views, the session's bounce and start, the session
//     read from raw_sessions (only the fields the breakdown and figures need, only the UTC days within
//     3 days of the periods: PostHog's SESSION_BUFFER_DAYS) and joined on the session id; no session
//     is read at all when nothing needs one (an event breakdown without bounce or compare);
//  3. per breakdown value, the [current, previous] figures, counted by the period the session
//     started in (with compareFilter) or all of them (without), ordered and paged.
import { z } from 'zod'
import { pathCleaningRules, type Project } from '../accounts/documents.ts'
import { ValidationError } from '../http/errors.ts'
import { sqlStr } from '../queries/insights/common/hogql.ts'
import { registerQueryKind } from '../queries/kinds.ts'
import { cleanedPath, cleaningSteps } from '../queries/path-cleaning.ts'
import type { DataFacts } from '../queries/person-overrides.ts'
import { quoteIdentifier } from '../hogql/escape.ts'
import {
  instantInRange,
  refuseUnsupported,
  WebQueryBaseSchema,
  webPropertiesCondition,
  webRanges,
  type WebRanges,
} from './filters.ts'
import { eventColumn, eventsLevel, sessionsLevel } from './levels.ts'

/** PostHog's WebStatsBreakdown values Burrow answers. */
export const STATS_BREAKDOWNS = [
  'Page',
  'InitialPage',
  'ExitPage',
  'ExitClick',
  'PreviousPage',
  'ScreenName',
  'InitialChannelType',
  'InitialReferringDomain',
  'InitialReferringURL',
  'InitialUTMSource',
  'InitialUTMCampaign',
  'InitialUTMMedium',
  'InitialUTMTerm',
  'InitialUTMContent',
  'InitialUTMSourceMediumCampaign',
  'Browser',
  'OS',
  'Viewport',
  'DeviceType',
  'Country',
  'Region',
  'City',
  'Timezone',
  'Language',
] as const
export type StatsBreakdown = (typeof STATS_BREAKDOWNS)[number]

const ORDER_FIELDS = [
  'Visitors',
  'Views',
  'Clicks',
  'BounceRate',
  'AverageScrollPercentage',
  'ScrollGt80Percentage',
  'TotalConversions',
  'UniqueConversions',
  'ConversionRate',
  'ConvertingUsers',
  'RageClicks',
  'DeadClicks',
  'Errors',
] as const

/** The most rows one answer carries (PostHog's MAX_SELECT_RETURNED_ROWS). */
export const MAX_STATS_LIMIT = 50_000
const DEFAULT_STATS_LIMIT = 100

export const WebStatsTableQuerySchema = WebQueryBaseSchema.extend({
  kind: z.literal('WebStatsTableQuery'),
  breakdownBy: z.string().superRefine((v, ctx) => {
    if (v === 'FrustrationMetrics') {
      ctx.addIssue({ code: 'custom', message: 'breakdownBy FrustrationMetrics is not supported yet' })
    } else if (!(STATS_BREAKDOWNS as readonly string[]).includes(v)) {
      ctx.addIssue({
        code: 'custom',
        message: `Unknown breakdownBy '${v}'. Supported: ${STATS_BREAKDOWNS.join(', ')}.`,
      })
    }
  }),
  includeBounceRate: z.boolean().nullable().optional(),
  includeScrollDepth: z.boolean().nullable().optional(),
  includeAvgTimeOnPage: z.boolean().nullable().optional(),
  doPathCleaning: z.boolean().nullable().optional(),
  limit: z.number().int().min(1).max(MAX_STATS_LIMIT).nullable().optional(),
  offset: z.number().int().min(0).nullable().optional(),
  orderBy: z
    .tuple([z.enum(ORDER_FIELDS), z.enum(['ASC', 'DESC'])])
    .nullable()
    .optional(),
  sampling: z.unknown().optional(),
}).passthrough()
export type WebStatsTableQuery = z.infer<typeof WebStatsTableQuerySchema> & { breakdownBy: StatsBreakdown }

const q = quoteIdentifier
const col = (name: string) => q(`context.columns.${name}`)

// ---- breakdown values ----------------------------------------------------------------------------

/**
 * Where a breakdown's value comes from: `event` inputs are HogQL over the event (level 1) combined
 * into the value by `value` (ClickHouse SQL over `e.<input>` and the cleaning function); `session`
 * ones are fields of the session, combined by `value` over `s.<field>`.
 */
interface BreakdownSource {
  event?: Record<string, string>
  session?: string[]
  value: (clean: (x: string) => string) => string
}

const ev = (name: string) => `e.${eventColumn(name)}`
const se = (name: string) => `s.${q(name)}`
const NULL_DISPLAY = sqlStr('(none)')

const sessionField = (field: string): BreakdownSource => ({ session: [field], value: () => se(field) })
const eventProperty = (key: string): BreakdownSource => ({
  event: { v: `properties.${key}` },
  value: () => ev('v'),
})

const BREAKDOWN_SOURCES: Record<StatsBreakdown, BreakdownSource> = {
  Page: { event: { v: 'properties.$pathname' }, value: (clean) => clean(ev('v')) },
  InitialPage: { session: ['$entry_pathname'], value: (clean) => clean(se('$entry_pathname')) },
  ExitPage: { session: ['$end_pathname'], value: (clean) => clean(se('$end_pathname')) },
  ExitClick: sessionField('$last_external_click_url'),
  // internal navigation in a SPA: the previous page view's path; internal but not a SPA: the
  // referrer's path (same domain); else the external referrer itself
  PreviousPage: {
    event: {
      prev: 'properties.$prev_pageview_pathname',
      same: 'domain(properties.$current_url) = domain(properties.$referrer)',
      referrer: 'properties.$referrer',
    },
    value: (clean) =>
      `multiIf(isNotNull(${ev('prev')}), ${clean(ev('prev'))}, ${ev('same')}, ${clean(`path(${ev('referrer')})`)}, ${ev('referrer')})`,
  },
  ScreenName: eventProperty('$screen_name'),
  InitialChannelType: sessionField('$channel_type'),
  InitialReferringDomain: sessionField('$entry_referring_domain'),
  InitialReferringURL: {
    session: ['$entry_referrer'],
    value: () => `cutQueryStringAndFragment(${se('$entry_referrer')})`,
  },
  InitialUTMSource: sessionField('$entry_utm_source'),
  InitialUTMCampaign: sessionField('$entry_utm_campaign'),
  InitialUTMMedium: sessionField('$entry_utm_medium'),
  InitialUTMTerm: sessionField('$entry_utm_term'),
  InitialUTMContent: sessionField('$entry_utm_content'),
  // the source is the utm_source, else the referring domain marked 'referrer:' (so that a client
  // can tell the two apart), else '(none)'
  InitialUTMSourceMediumCampaign: {
    session: ['$entry_utm_source', '$entry_referring_domain', '$entry_utm_medium', '$entry_utm_campaign'],
    value: () =>
      `concatWithSeparator(' / ', if(isNotNull(${se('$entry_utm_source')}), ${se('$entry_utm_source')}, if(isNotNull(${se('$entry_referring_domain')}), concat('referrer:', ${se('$entry_referring_domain')}), ${NULL_DISPLAY})), coalesce(${se('$entry_utm_medium')}, ${NULL_DISPLAY}), coalesce(${se('$entry_utm_campaign')}, ${NULL_DISPLAY}))`,
  },
  Browser: eventProperty('$browser'),
  OS: eventProperty('$os'),
  Viewport: {
    event: { w: 'toFloat(properties.$viewport_width)', h: 'toFloat(properties.$viewport_height)' },
    value: () => `tuple(${ev('w')}, ${ev('h')})`,
  },
  DeviceType: eventProperty('$device_type'),
  Country: eventProperty('$geoip_country_code'),
  Region: {
    event: {
      c: 'properties.$geoip_country_code',
      r: 'properties.$geoip_subdivision_1_code',
      n: 'properties.$geoip_subdivision_1_name',
    },
    value: () => `tuple(${ev('c')}, ${ev('r')}, ${ev('n')})`,
  },
  City: {
    event: { c: 'properties.$geoip_country_code', n: 'properties.$geoip_city_name' },
    value: () => `tuple(${ev('c')}, ${ev('n')})`,
  },
  // the offset is minutes behind UTC (JavaScript's getTimezoneOffset): hours ahead is its negative
  Timezone: { event: { v: '-toFloat(properties.$timezone_offset) / 60' }, value: () => ev('v') },
  Language: eventProperty('$browser_language'),
}

// PostHog's where_breakdown: which values make a row (the utm breakdowns keep the sessions without one).
function whereBreakdown(b: StatsBreakdown, v: string): string {
  switch (b) {
    case 'Region':
    case 'City':
      return `tupleElement(${v}, 2) IS NOT NULL`
    case 'Viewport':
      return `tupleElement(${v}, 1) IS NOT NULL AND tupleElement(${v}, 2) IS NOT NULL AND tupleElement(${v}, 1) != 0 AND tupleElement(${v}, 2) != 0`
    case 'InitialUTMSource':
    case 'InitialUTMCampaign':
    case 'InitialUTMMedium':
    case 'InitialUTMTerm':
    case 'InitialUTMContent':
      return '1'
    case 'InitialChannelType':
      return `${v} IS NOT NULL AND ${v} != ''`
    default:
      return `${v} IS NOT NULL`
  }
}

/** Whether path cleaning changes any path (doPathCleaning and at least one rule). */
const pathCleaningOn = (q: { doPathCleaning?: boolean | null }, project: Project) =>
  !!q.doPathCleaning && (project.settings?.path_cleaning_filters ?? []).length > 0

/** The project's path cleaning rules as one SQL function of a path (identity without doPathCleaning). */
export function pathCleaner(q: { doPathCleaning?: boolean | null }, project: Project): (x: string) => string {
  if (!q.doPathCleaning) return (x) => x
  // past the compiler: ClickHouse string literals
  const steps = cleaningSteps(pathCleaningRules(project.settings))
  return (x) => cleanedPath(x, steps, sqlStr)
}

// ---- levels --------------------------------------------------------------------------------------

interface SessionLevel {
  /** ClickHouse SQL: one row per (session, breakdown value) */
  sql: string
}

interface LevelOptions {
  source: BreakdownSource
  clean: (x: string) => string
  /** the session's bounce is needed */
  bounce: boolean
  /** the session's start is needed (the figures are split by period) */
  start: boolean
  /** PostHog's where_breakdown, or none */
  where?: (v: string) => string
  /** the value may be the same for different event inputs of a session (path cleaning, PreviousPage) */
  merges: boolean
  eventsSQL: string
  teamId: number
  ranges: WebRanges
}

/** Level 2: per (session, breakdown value), the person, views, bounce and start of the session. */
function sessionLevel(o: LevelOptions): SessionLevel {
  const fields = [...(o.source.session ?? [])]
  if (o.bounce) fields.push('$is_bounce')
  if (o.start) fields.push('$start_timestamp')
  const joined = fields.length > 0
  // with the session's start (the figures split by period) a row without a session counts in no
  // period: an inner join then drops only rows that add nothing (but their breakdown value's row
  // of zeros); without it, a LEFT join keeps them, NULL in the session's fields
  const inner = o.start
  const fromSession = (x: string) => (inner ? x : `if(s.w_matched = 1, ${x}, NULL)`)
  let value = o.source.value(o.clean)
  if (o.source.session) value = fromSession(value)
  // the event's $session_id: the events without one ('') are one group, as PostHog's NULL session
  const sessionId = 'e.w_session'
  const where = o.where ? ` WHERE ${o.where('breakdown_value')}` : ''
  if (joined) {
    // the events grouped per session (and event breakdown inputs) first: the join then matches one
    // row per session instead of one per event, and those rows are already one per (session,
    // value) unless the value merges inputs
    const keys = ['w_session', ...Object.keys(o.source.event ?? {}).map(eventColumn)].join(', ')
    const perSession = `SELECT ${keys}, any(w_person) AS w_person, count() AS w_views FROM (${o.eventsSQL}) GROUP BY ${keys}`
    const join = inner ? 'INNER JOIN' : 'LEFT JOIN'
    const from = `(${perSession}) AS e ${join} (${sessionsLevel(o.teamId, fields, o.ranges)}) AS s ON e.w_session = s.session_id`
    const regroup = o.merges && !!o.source.event
    const agg = (fn: string, x: string) => (regroup ? `${fn}(${x})` : x)
    const select = [
      `${agg('any', 'e.w_person')} AS filtered_person_id`,
      `${agg('sum', 'e.w_views')} AS filtered_pageview_count`,
      `${value} AS breakdown_value`,
      `${sessionId} AS w_session_id`,
      `${o.bounce ? agg('any', fromSession(se('$is_bounce'))) : 'NULL'} AS is_bounce`,
      `${o.start ? agg('min', fromSession(se('$start_timestamp'))) : 'NULL'} AS start_timestamp`,
    ]
    const group = regroup ? ' GROUP BY w_session_id, breakdown_value' : ''
    return { sql: `SELECT ${select.join(', ')} FROM ${from}${where}${group}` }
  }
  const select = [
    'any(e.w_person) AS filtered_person_id',
    'count() AS filtered_pageview_count',
    `${value} AS breakdown_value`,
    `${sessionId} AS w_session_id`,
    'NULL AS is_bounce',
    'NULL AS start_timestamp',
  ]
  return {
    sql: `SELECT ${select.join(', ')} FROM (${o.eventsSQL}) AS e${where} GROUP BY w_session_id, breakdown_value`,
  }
}

// ---- the figures ---------------------------------------------------------------------------------

/** PostHog's _period_comparison_tuple: [current, previous]; without a comparison, every row and NULL. */
function pairOf(fn: string, column: string, ranges: WebRanges): string {
  if (!ranges.prev) return `tuple(${fn}(${column}), NULL)`
  const cur = instantInRange(ranges.range, 'start_timestamp')
  const prev = instantInRange(ranges.prev, 'start_timestamp')
  return `tuple(${fn}If(${column}, ${cur}), ${fn}If(${column}, ${prev}))`
}

const ORDER_COLUMNS: Partial<Record<(typeof ORDER_FIELDS)[number], string>> = {
  Visitors: 'visitors',
  Views: 'views',
  BounceRate: 'bounce_rate',
}

/** PostHog's _order_by: the asked column, then visitors and views (same direction), then the value. */
function orderBy(query: WebStatsTableQuery, columns: string[]): { sql: string; first: string } {
  const asked = query.orderBy ? ORDER_COLUMNS[query.orderBy[0]] : undefined
  const dir = query.orderBy?.[1] ?? 'DESC'
  const keys = [
    ...(asked && columns.includes(asked) ? [asked] : []),
    ...['visitors', 'views'].filter((c) => c !== asked && columns.includes(c)),
  ]
  return {
    sql: [...keys.map((k) => `${col(k)} ${dir}`), `${col('breakdown_value')} ASC`].join(', '),
    first: keys[0] ?? 'visitors',
  }
}

/** PostHog's _fill_fraction: the row's share of the ordering column (a rate as it is). */
function fillFraction(first: string): string {
  if (first === 'bounce_rate') return `tupleElement(${col(first)}, 1)`
  return `tupleElement(${col(first)}, 1) / sum(tupleElement(${col(first)}, 1)) OVER ()`
}

/** The compiled statement's shape for the response: PostHog's column names, in order. */
interface StatsPlan {
  sql: string
  hogql: string
  columns: string[]
  language: boolean
}

/** The ClickHouse SQL of the query and its columns. */
export async function statsTableSQL(
  query: WebStatsTableQuery,
  project: Project,
  facts?: DataFacts,
  now?: number,
): Promise<StatsPlan> {
  refuseUnsupported(query)
  if (query.includeScrollDepth) {
    throw new ValidationError('includeScrollDepth is not supported yet', 'includeScrollDepth')
  }
  if (query.includeAvgTimeOnPage) {
    throw new ValidationError('includeAvgTimeOnPage is not supported yet', 'includeAvgTimeOnPage')
  }
  const b = query.breakdownBy
  const ranges = webRanges(query, project, { now, allowAll: true })
  const clean = pathCleaner(query, project)
  const source = BREAKDOWN_SOURCES[b]
  const compiled = (filters: string | undefined, inputs: Record<string, string>) =>
    eventsLevel(project, ranges, filters, inputs, facts)
  const filters = webPropertiesCondition(query, project)
  const events = await compiled(filters, source.event ?? {})
  const limit = query.limit ?? DEFAULT_STATS_LIMIT
  const offset = query.offset ?? 0
  const page = `LIMIT ${limit + 1}${offset ? ` OFFSET ${offset}` : ''}`
  const merges = b === 'PreviousPage' || pathCleaningOn(query, project)
  const base = { eventsSQL: events.sql, teamId: project.id, ranges, clean, merges }

  if (b === 'Page' && query.includeBounceRate) {
    // PostHog's PATH_BOUNCE_QUERY: the views of each path beside the bounce rate of the sessions
    // that entered on it (pathname filters left out of the latter, so each entry page keeps its
    // sessions whatever paths are filtered)
    const counts = sessionLevel({ ...base, source, bounce: false, start: true })
    const bounceFilters = webPropertiesCondition(
      query,
      project,
      (f) => !((f.type ?? 'event') === 'event' && f.key === '$pathname'),
    )
    const bounceEvents = await compiled(bounceFilters, {})
    // each session with an event in the periods once (PostHog groups those events by session and
    // entry path): a semi-join, no grouping of events
    const sessions = sessionsLevel(
      project.id,
      ['$entry_pathname', '$is_bounce', '$start_timestamp'],
      ranges,
      `SELECT w_session FROM (${bounceEvents.sql})`,
    )
    const started = (x: WebRanges['range']) => instantInRange(x, se('$start_timestamp'))
    const bounceSQL = `SELECT ${clean(se('$entry_pathname'))} AS breakdown_value, avgIf(${se('$is_bounce')}, ${started(ranges.range)}) AS bounce_rate, avgIf(${se('$is_bounce')}, ${ranges.prev ? started(ranges.prev) : '0'}) AS previous_bounce_rate, 1 AS w_matched FROM (${sessions}) AS s GROUP BY breakdown_value`
    const cur = instantInRange(ranges.range, 'start_timestamp')
    const prev = ranges.prev ? instantInRange(ranges.prev, 'start_timestamp') : '0'
    const countsSQL = `SELECT breakdown_value, uniqIf(filtered_person_id, ${cur}) AS visitors, uniqIf(filtered_person_id, ${prev}) AS previous_visitors, sumIf(filtered_pageview_count, ${cur}) AS views, sumIf(filtered_pageview_count, ${prev}) AS previous_views FROM (${counts.sql}) GROUP BY breakdown_value`
    const columns = ['breakdown_value', 'visitors', 'views', 'bounce_rate']
    const order = orderBy(query, columns)
    const rate = (c: string) => `if(bounce.w_matched = 1, bounce.${c}, NULL)`
    const select = [
      `counts.breakdown_value AS ${col('breakdown_value')}`,
      `tuple(counts.visitors, counts.previous_visitors) AS ${col('visitors')}`,
      `tuple(counts.views, counts.previous_views) AS ${col('views')}`,
      `tuple(${rate('bounce_rate')}, ${rate('previous_bounce_rate')}) AS ${col('bounce_rate')}`,
      `${fillFraction(order.first)} AS ${col('ui_fill_fraction')}`,
    ]
    return {
      sql: `SELECT ${select.join(', ')} FROM (${countsSQL}) AS counts LEFT JOIN (${bounceSQL}) AS bounce ON counts.breakdown_value = bounce.breakdown_value WHERE counts.breakdown_value IS NOT NULL ORDER BY ${order.sql} ${page}`,
      hogql: `${events.hogql};\n${bounceEvents.hogql}`,
      columns: [...columns, 'ui_fill_fraction', 'cross_sell'].map((c) => `context.columns.${c}`),
      language: false,
    }
  }

  // PostHog's main query (InitialPage with a bounce rate is the same with the entry path)
  const bounce = !!query.includeBounceRate
  const inner = sessionLevel({
    ...base,
    source,
    bounce,
    start: !!ranges.prev,
    where: (v) => whereBreakdown(b, v),
  })
  const language = b === 'Language'
  const parts = (i: number) => `arrayElement(splitByChar('-', assumeNotNull(breakdown_value), 2), ${i})`
  const columns = ['breakdown_value', 'visitors', 'views']
  const select = [
    `${language ? parts(1) : 'breakdown_value'} AS ${col('breakdown_value')}`,
    `${pairOf('uniq', 'filtered_person_id', ranges)} AS ${col('visitors')}`,
    `${pairOf('sum', 'filtered_pageview_count', ranges)} AS ${col('views')}`,
  ]
  if (language) select.push(`arrayElement(topK(1)(${parts(2)}), 1) AS ${col('aggregation_value')}`)
  if (bounce) {
    select.push(`${pairOf('avg', 'is_bounce', ranges)} AS ${col('bounce_rate')}`)
    columns.push('bounce_rate')
  }
  const order = orderBy(query, columns)
  select.push(`${fillFraction(order.first)} AS ${col('ui_fill_fraction')}`)
  return {
    sql: `SELECT ${select.join(', ')} FROM (${inner.sql}) GROUP BY ${col('breakdown_value')} ORDER BY ${order.sql} ${page}`,
    hogql: events.hogql,
    // Language: PostHog keeps the first three cells of each row (value, visitors, views); the
    // columns here say so too (PostHog's still list the others)
    columns: (language
      ? ['breakdown_value', 'visitors', 'views', 'cross_sell']
      : [...columns, 'ui_fill_fraction', 'cross_sell']
    ).map((c) => `context.columns.${c}`),
    language,
  }
}

// ---- results -------------------------------------------------------------------------------------

// ClickHouse quotes 64-bit integers in JSON, inside tuples too (which the reader leaves as they are).
const cell = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(cell)
  if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v)) return Number(v)
  return v
}

/** PostHog's rows: figures as [current, previous], the cross-sell cell appended, Language's value joined. */
export function statsRows(rows: unknown[][], plan: { language: boolean; limit: number }): unknown[][] {
  return rows.slice(0, plan.limit).map((row) => {
    if (plan.language) return [`${String(row[0])}-${String(row[3] ?? '')}`, cell(row[1]), cell(row[2]), '']
    // the breakdown value is data (a path may be all digits): only the figures are converted
    return [row[0], ...row.slice(1).map(cell), '']
  })
}

registerQueryKind('WebStatsTableQuery', {
  async compile(raw, project, facts) {
    const query = WebStatsTableQuerySchema.parse(raw) as WebStatsTableQuery
    const plan = await statsTableSQL(query, project, facts)
    const limit = query.limit ?? DEFAULT_STATS_LIMIT
    return {
      hogql: plan.hogql,
      clickhouse: plan.sql,
      columns: plan.columns,
      types: [],
      paging: { limit, offset: query.offset ?? 0 },
    }
  },
  shape(rows, compiled, raw) {
    const query = WebStatsTableQuerySchema.parse(raw)
    return statsRows(rows, { language: query.breakdownBy === 'Language', limit: compiled.paging!.limit })
  },
})

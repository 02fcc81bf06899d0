// How to store event properties on a current ClickHouse (issue #39, item 2): the same events written
// to one table per candidate representation, measured for ingestion (the projector's CPU to encode a
// row, the server's wall time and CPU to insert it), storage, queries and fidelity (does a property
// read give exactly what Burrow's HogQL promises). The baseline, E, is today's schema
// (schema/clickhouse/0001_events.sql), encoded by the projector's own eventLine.
//   E   properties String + prop_keys/prop_values arrays (nested paths joined by '\x1F')
//   A   properties String only, read with JSONExtractRaw as PostHog's printer reads it
//   A+m A with one hot property ($browser) as a MATERIALIZED column, as PostHog materializes one
//   B   properties String + a Map(String, String) the server fills from the JSON (MATERIALIZED)
//   Bb  B with the Map in ClickHouse's bucketed serialization (map_serialization_version with_buckets)
//   C   properties String + a Map(String, String) the projector encodes (the arrays' pairs)
//   D1  the JSON type only (26.7 defaults)
//   D2  properties String + a JSON column the server fills from it (MATERIALIZED)
// Ingestion: rows are made from parsed events (JSON.parse of each event's text, as the projector
// has them) in batches of 10,000, encoded as TabSeparated lines and one body (tsvBody), CPU time of
// this process per encoder (three encoders serve the eight tables: arrays, map, json text); each body
// is POSTed as one INSERT, one at a time, into each table in turn (the order rotated per batch).
// Merges are stopped while inserting, so the server's CPU (from /proc) during an INSERT is the
// INSERT's; OPTIMIZE FINAL afterwards is timed on its own (the merges' cost).
// Queries: each candidate's SQL as a printer would write it for that representation, run 5 times
// round-robin, the median of the server's elapsed time (X-ClickHouse-Summary, wait_end_of_query), its
// read bytes and peak memory; every answer is compared with E's.
// Run: npx tsx bench/property-representation.ts   (env N=1000000 events; N=20000 is the quick mode,
// well under a minute; RUNS=5 per query)
import { Agent, request } from 'node:http'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { tsvBody } from '../src/projectors/clickhouse-io.ts'
import type { EventRow } from '../src/projectors/rows.ts'
import { EVENT_COLUMNS as CURRENT_COLUMNS } from '../src/projectors/tables.ts'
import { jsonNeedsEscape, tsvDateTime, tsvString } from '../src/projectors/tsv.ts'
import { encodePropertiesInto, PATH_SEPARATOR, type PropertySink } from './previous-properties.ts'
import { clickhouseLibrary } from '../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../src/stack/clickhouse-server.ts'
import { freePort } from '../src/stack/ports.ts'
import { procStats } from './lib.ts'

const N = Number(process.env.N ?? 1_000_000)
const RUNS = Number(process.env.RUNS ?? 5)
const BATCH = 10_000
const TEAM = 1
const OTHER_TEAM = 2
const FIDELITY_TEAM = 99
const START_MS = Date.UTC(2026, 8, 1) // 60 days: September and October 2026, two partitions
const SPAN_MS = 60 * 86_400_000
const load = () => readFileSync('/proc/loadavg', 'utf8').trim()

// ---------------------------------------------------------------------------------------------
// The events: posthog-js's property bags, ~40 keys

const EVENTS = [
  '$pageview',
  '$pageleave',
  '$autocapture',
  '$rageclick',
  '$identify',
  '$screen',
  '$web_vitals',
  '$feature_flag_called',
  '$exception',
  '$survey_shown',
  'signed_up',
  'logged_in',
  'purchase',
  'checkout_started',
  'added_to_cart',
  'removed_from_cart',
  'searched',
  'filter_applied',
  'invite_sent',
  'report_viewed',
  'dashboard_created',
  'insight_saved',
  'file_uploaded',
  'export_started',
  'settings_changed',
  'plan_upgraded',
  'trial_started',
  'video_played',
  'comment_added',
  'notification_clicked',
]
const BROWSERS = ['Chrome', 'Chrome', 'Chrome', 'Safari', 'Safari', 'Firefox', 'Edge', 'Samsung Internet']
const OSES = ['Mac OS X', 'Windows', 'Windows', 'iOS', 'Android', 'Linux']
const DEVICES = ['Desktop', 'Desktop', 'Mobile', 'Tablet']
const WIDTHS = [390, 414, 768, 1024, 1280, 1440, 1536, 1728, 1920, 2560]
const REFERRERS = ['$direct', 'https://www.google.com/', 'https://news.ycombinator.com/', 'https://t.co/x']
const UTM = ['google', 'newsletter', 'twitter', 'linkedin', 'partner']
const TITLES = ['Ünïcødé dashboard', '日本語のページ', 'Prix en €', 'Emoji 🎉 launch', 'Plain title']

// A small deterministic generator, so that every run has the same events.
function mix(i: number, salt: number): number {
  let h = (i + 1) * 0x9e3779b1 + salt * 0x85ebca6b
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d)
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b)
  return (h ^ (h >>> 16)) >>> 0
}
const pick = <T>(xs: readonly T[], i: number, salt: number): T => xs[mix(i, salt) % xs.length]!
// pages with a skew: a few are most of the traffic (q2's top 20 is not a flat tie)
const page = (i: number) => Math.floor(Math.sqrt(mix(i, 1) % 1_000_000) / 5) // 0..199

// the big integer beyond 2^53 is written as a JSON number in the text the SDK sends
const BIG = '__big__'

/** The JSON text of the i-th event's properties, as posthog-js sends it. */
function propertiesText(i: number): string {
  const p = page(i)
  const user = mix(i, 2) % 20_000
  const props: Record<string, unknown> = {
    $os: pick(OSES, i, 3),
    $os_version: '14.5.0',
    $browser: pick(BROWSERS, i, 4),
    $browser_version: 120 + (mix(i, 5) % 8),
    $device_type: pick(DEVICES, i, 6),
    $current_url: `https://app.example.com/project/${p}/insights?tab=trends`,
    $host: 'app.example.com',
    $pathname: `/project/${p}/insights`,
    $raw_user_agent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    $browser_language: 'en-US',
    $screen_height: 1117,
    $screen_width: pick(WIDTHS, i, 7),
    $viewport_height: 971,
    $viewport_width: 1400,
    $lib: 'web',
    $lib_version: '1.150.0',
    $insert_id: `ins${i.toString(36)}`,
    $time: 1_788_000_000 + i / 10,
    distinct_id: `user-${user}`,
    $device_id: `dev-${user}`,
    $initial_referrer: '$direct',
    $initial_referring_domain: '$direct',
    $referrer: pick(REFERRERS, i, 8),
    $referring_domain: 'www.google.com',
    $session_id: `sess-${Math.floor(i / 20)}`,
    $window_id: `win-${Math.floor(i / 40)}`,
    $pageview_id: `pv-${Math.floor(i / 5)}`,
    $is_identified: mix(i, 9) % 3 !== 0,
    $process_person_profile: true,
    $feature_flag_response: null,
    title: `${pick(TITLES, i, 10)} ${p}`,
    plan_details: { plan: mix(i, 11) % 4 === 0 ? 'pro' : 'free', seats: mix(i, 12) % 50, trial: false },
    tags: [`tag${mix(i, 13) % 10}`, 'web'],
    amount: (mix(i, 14) % 10_000) / 100,
    account_id: BIG,
  }
  if (mix(i, 15) % 5 === 0) {
    props.utm_source = pick(UTM, i, 16)
    props.utm_medium = 'cpc'
    props.utm_campaign = `spring-${mix(i, 17) % 12}`
  }
  // a quote and a backslash now and then (the escaped path of the encoders)
  if (mix(i, 18) % 20 === 0) props.$el_text = 'Say "hi" \\ to C:\\path'
  return JSON.stringify(props).replace(`"${BIG}"`, `${12_345_678_901_234_567_000n + BigInt(i)}`)
}

/** The i-th event as the projector has it: parsed from its text, with its row's other fields. */
function eventRow(i: number, seq: number, offset: number): EventRow {
  const ts = START_MS + Math.floor((i / N) * SPAN_MS)
  const hex = i.toString(16).padStart(12, '0')
  return {
    teamId: mix(i, 19) % 5 === 0 ? OTHER_TEAM : TEAM,
    uuid: `0190a000-0000-7000-8000-${hex}`,
    event: pick(EVENTS, i, 20),
    distinctId: `user-${mix(i, 2) % 20_000}`,
    personId: '00000000-0000-0000-0000-000000000000',
    timestampMs: ts,
    properties: JSON.parse(propertiesText(i)),
    personProperties: {},
    elementsChain: '',
    sessionId: `sess-${Math.floor(i / 20)}`,
    groups: ['', '', '', '', ''],
    createdAtMs: ts,
    seq,
    offset,
  }
}

// ---------------------------------------------------------------------------------------------
// The encoders: the baseline is the layout before issue #39 (JSON text plus key/value arrays, as
// c09b286's eventLine wrote it); the others write the same fields with the bag's part replaced, built
// as eventLine builds its line (one array joined once).

/** The events columns before issue #39: a seconds timestamp with its ms twin, the bag in three. */
const EVENT_COLUMNS = CURRENT_COLUMNS.flatMap((c) =>
  c === 'timestamp'
    ? ['timestamp', 'timestamp_ms']
    : c === 'properties'
      ? ['properties', 'prop_keys', 'prop_values']
      : [c],
)

/** An Array(String) literal (TSV-escaped strings). */
const arrayLiteral = (items: string[]) => (items.length ? `['${items.map(tsvString).join("','")}']` : '[]')

/** The previous layout's three bag fields: the JSON text, the keys and the values. */
function arraysFields(properties: Record<string, unknown>): string[] {
  encodePropertiesInto(properties, sink)
  const n = sink.n
  return [
    jsonField(properties).json,
    arrayLiteral(sink.keys.slice(0, n)),
    arrayLiteral(sink.values.slice(0, n)),
  ]
}

/** The previous layout's read of a key (c09b286's HogQL printer). */
const propertyValue = (keys: string, values: string, key: string) =>
  `arrayElement(CAST(${values} AS Array(Nullable(String))), indexOf(${keys}, ${q(key)}))`

/** The columns of the rows the json and map encoders write, with `bag` where the three bag columns were. */
const columnsWith = (bag: string[]) => [
  ...EVENT_COLUMNS.slice(0, EVENT_COLUMNS.indexOf('properties')),
  ...bag,
  ...EVENT_COLUMNS.slice(EVENT_COLUMNS.indexOf('prop_values') + 1),
]

function lineWith(r: EventRow, bag: string[]): string {
  const g = r.groups
  return [
    r.teamId,
    r.uuid,
    tsvString(r.event),
    tsvString(r.distinctId),
    r.personId,
    tsvDateTime(r.timestampMs),
    r.timestampMs,
    ...bag,
    tsvString(JSON.stringify(r.personProperties)),
    tsvString(r.elementsChain),
    tsvString(r.sessionId),
    tsvString(g[0] ?? ''),
    tsvString(g[1] ?? ''),
    tsvString(g[2] ?? ''),
    tsvString(g[3] ?? ''),
    tsvString(g[4] ?? ''),
    tsvDateTime(r.createdAtMs),
    r.seq,
    `${r.offset}\n`,
  ].join('\t')
}

/** The bag's JSON text as a TSV field (eventLine's way: escaped only when the text has \ or '). */
function jsonField(properties: Record<string, unknown>): { json: string; escape: boolean } {
  const json = JSON.stringify(properties)
  const escape = jsonNeedsEscape(json)
  return { json: escape ? tsvString(json) : json, escape }
}

const sink: PropertySink = { keys: [], values: [], n: 0 }

/** A Map(String, String) literal of the bag's pairs, the arrays' encoding (nested paths included). */
function mapLiteral(properties: Record<string, unknown>, escape: boolean): string {
  encodePropertiesInto(properties, sink)
  if (sink.n === 0) return '{}'
  const parts = new Array<string>(sink.n)
  for (let i = 0; i < sink.n; i++) {
    const k = sink.keys[i]!
    const v = sink.values[i]!
    parts[i] = escape ? `'${tsvString(k)}':'${tsvString(v)}'` : `'${k}':'${v}'`
  }
  return `{${parts.join(',')}}`
}

interface Encoder {
  name: string
  columns: string[]
  line(r: EventRow): string
}

const ENCODERS: Record<'arrays' | 'json' | 'map', Encoder> = {
  arrays: {
    name: 'arrays (E, the layout before)',
    columns: EVENT_COLUMNS,
    line: (r) => lineWith(r, arraysFields(r.properties)),
  },
  json: {
    name: 'json text only (A, A+m, B, Bb, D1, D2)',
    columns: columnsWith(['properties']),
    line: (r) => lineWith(r, [jsonField(r.properties).json]),
  },
  map: {
    name: 'json text + map (C)',
    columns: columnsWith(['properties', 'prop_map']),
    line: (r) => {
      const { json, escape } = jsonField(r.properties)
      return lineWith(r, [json, mapLiteral(r.properties, escape)])
    },
  },
}

// ---------------------------------------------------------------------------------------------
// The candidates: their tables and how a printer reads a property from them

const OTHER_COLUMNS = `team_id Int64, uuid UUID, event String, distinct_id String, person_id UUID,
  timestamp DateTime('UTC'), timestamp_ms Int64`
const TAIL_COLUMNS = `person_properties String, elements_chain String, session_id String,
  \`$group_0\` String, \`$group_1\` String, \`$group_2\` String, \`$group_3\` String, \`$group_4\` String,
  created_at DateTime('UTC'), _seq UInt64, _offset UInt32`
const ENGINE = `ENGINE = ReplacingMergeTree(_seq) PARTITION BY toYYYYMM(timestamp)
  ORDER BY (team_id, toDate(timestamp), event, cityHash64(distinct_id), uuid)`

const q = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const ident = (s: string) => `\`${s.replace(/`/g, '\\`')}\``

/** PostHog's read of a JSON path: the raw JSON text, unquoted, '' and JSON null as NULL. */
const posthogRaw = (json: string, path: (string | number)[]) =>
  `replaceRegexpAll(nullIf(nullIf(JSONExtractRaw(${json}, ${path.map((p) => (typeof p === 'number' ? String(p) : q(p))).join(', ')}), ''), 'null'), '^"|"$', '')`

interface Candidate {
  id: string
  about: string
  encoder: keyof typeof ENCODERS
  ddl: (table: string) => string
  /** the property's value (Nullable(String), HogQL's answer); `path`: keys, or an index from 1 for an array element */
  value: (path: (string | number)[]) => string
  /** `value = constant` (a printer may compare without the NULL handling) */
  equals?: (key: string, constant: string) => string
  /** `value IS NOT NULL` */
  isSet?: (key: string) => string
  /** the raw properties as sent */
  raw: string
  /** a printer's variant only: it reads the table of that candidate (not written again) */
  sameTableAs?: string
}

// A nested path of objects and an array's element, through a top-level value that is a property's
// JSON text (E and the Maps: `properties.plan_details.plan`, `properties.tags.1`).
function viaTopLevel(top: (key: string) => string, nested: (path: string[]) => string | undefined) {
  return (path: (string | number)[]): string => {
    if (path.length === 1) return top(String(path[0]))
    const firstIndex = path.findIndex((p) => typeof p === 'number')
    if (firstIndex === -1) {
      const direct = nested(path as string[])
      if (direct !== undefined) return direct
    }
    return posthogRaw(top(String(path[0])), path.slice(1))
  }
}

// The printer's read for a Map: NULL when the key is missing (a Map's [] gives '').
const mapValue = (key: string) => `if(mapContains(prop_map, ${q(key)}), prop_map[${q(key)}], NULL)`
const mapEquals = (key: string, c: string) => `prop_map[${q(key)}] = ${q(c)}`
const mapIsSet = (key: string) => `mapContains(prop_map, ${q(key)})`

// The JSON type: a path's Dynamic value as text. An object or array is no string (see fidelity).
const jsonPathSql = (col: string, path: (string | number)[]) => {
  const keys = path.filter((p): p is string => typeof p === 'string')
  const index = path.find((p): p is number => typeof p === 'number')
  const at = `${col}.${keys.map(ident).join('.')}`
  return index === undefined
    ? `CAST(${at} AS Nullable(String))`
    : `CAST(${at} AS Array(Nullable(String)))[${index}]`
}

const CANDIDATES: Candidate[] = [
  {
    id: 'E',
    about: 'String + prop_keys/prop_values (today)',
    encoder: 'arrays',
    ddl: (t) =>
      `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, prop_keys Array(String), prop_values Array(String), ${TAIL_COLUMNS}) ${ENGINE}`,
    value: viaTopLevel(
      (k) => propertyValue('prop_keys', 'prop_values', k),
      (path) => propertyValue('prop_keys', 'prop_values', path.join(PATH_SEPARATOR)),
    ),
    raw: 'properties',
  },
  {
    id: 'A',
    about: 'String only, JSONExtractRaw (PostHog)',
    encoder: 'json',
    ddl: (t) => `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, ${TAIL_COLUMNS}) ${ENGINE}`,
    value: (path) => posthogRaw('properties', path),
    raw: 'properties',
  },
  {
    id: 'Ax',
    about: 'A, read exactly: JSONExtract(…, Nullable(String))',
    encoder: 'json',
    sameTableAs: 'A',
    ddl: () => '',
    value: (path) =>
      `JSONExtract(properties, ${path.map((p) => (typeof p === 'number' ? String(p) : q(p))).join(', ')}, 'Nullable(String)')`,
    raw: 'properties',
  },
  {
    id: 'A+m',
    about: 'A + MATERIALIZED mat_$browser',
    encoder: 'json',
    ddl: (t) =>
      `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, \`mat_$browser\` Nullable(String) MATERIALIZED ${posthogRaw('properties', ['$browser'])}, ${TAIL_COLUMNS}) ${ENGINE}`,
    value: (path) =>
      path.length === 1 && path[0] === '$browser' ? '`mat_$browser`' : posthogRaw('properties', path),
    raw: 'properties',
  },
  {
    id: 'B',
    about: 'String + Map filled by the server',
    encoder: 'json',
    ddl: (t) =>
      `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, prop_map Map(String, String) MATERIALIZED CAST(JSONExtractKeysAndValues(properties, 'String'), 'Map(String, String)'), ${TAIL_COLUMNS}) ${ENGINE}`,
    value: viaTopLevel(mapValue, () => undefined),
    equals: mapEquals,
    isSet: mapIsSet,
    raw: 'properties',
  },
  {
    id: 'Bb',
    about: 'B, Map with_buckets',
    encoder: 'json',
    ddl: (t) =>
      `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, prop_map Map(String, String) MATERIALIZED CAST(JSONExtractKeysAndValues(properties, 'String'), 'Map(String, String)'), ${TAIL_COLUMNS}) ${ENGINE} SETTINGS map_serialization_version = 'with_buckets', map_serialization_version_for_zero_level_parts = 'with_buckets'`,
    value: viaTopLevel(mapValue, () => undefined),
    equals: mapEquals,
    isSet: mapIsSet,
    raw: 'properties',
  },
  {
    id: 'C',
    about: 'String + Map sent by the projector',
    encoder: 'map',
    ddl: (t) =>
      `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, prop_map Map(String, String), ${TAIL_COLUMNS}) ${ENGINE}`,
    value: viaTopLevel(mapValue, (path) => mapValue(path.join(PATH_SEPARATOR))),
    equals: mapEquals,
    isSet: mapIsSet,
    raw: 'properties',
  },
  {
    id: 'D1',
    about: 'JSON type only',
    encoder: 'json',
    ddl: (t) => `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties JSON, ${TAIL_COLUMNS}) ${ENGINE}`,
    value: (path) => jsonPathSql('properties', path),
    isSet: (k) => `isNotNull(properties.${ident(k)})`,
    raw: 'toJSONString(properties)',
  },
  {
    id: 'D2',
    about: 'String + JSON filled by the server',
    encoder: 'json',
    ddl: (t) =>
      `CREATE TABLE ${t} (${OTHER_COLUMNS}, properties String, props JSON MATERIALIZED properties, ${TAIL_COLUMNS}) ${ENGINE}`,
    value: (path) => jsonPathSql('props', path),
    isSet: (k) => `isNotNull(props.${ident(k)})`,
    raw: 'properties',
  },
]

const only = process.env.CANDIDATES?.split(',')
const candidates = only ? CANDIDATES.filter((c) => only.includes(c.id)) : CANDIDATES
const tableOf = (c: Candidate): string => `ev_${(c.sameTableAs ?? c.id).replace('+', '_')}`.toLowerCase()
// the candidates with a table of their own (written, stored, merged)
const stored = candidates.filter((c) => c.sameTableAs === undefined)

// ---------------------------------------------------------------------------------------------
// The server

const dir = mkdtempSync(join(tmpdir(), 'burrow-bench-props-'))
const server = await startClickHouseServer({
  library: await clickhouseLibrary(),
  dataDir: join(dir, 'ch'),
  httpPort: await freePort(),
  tcpPort: await freePort(),
})
const agent = new Agent({ keepAlive: true, maxSockets: 4 })

interface Summary {
  elapsed_ns: string
  read_bytes: string
  read_rows: string
  memory_usage?: string
}

/** POSTs `body` with `query` in the URL (or the body as the query); the answer's text and summary. */
function post(query: string | undefined, body: Buffer | string): Promise<{ text: string; summary: Summary }> {
  const params = new URLSearchParams({ wait_end_of_query: '1' })
  if (query !== undefined) params.set('query', query)
  return new Promise((resolve, reject) => {
    const req = request(
      `${server.url}/?${params}`,
      { method: 'POST', agent, headers: { 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (b: Buffer) => parts.push(b))
        res.on('end', () => {
          const text = Buffer.concat(parts).toString()
          if (res.statusCode !== 200) return reject(new Error(`${res.statusCode}: ${text}`))
          resolve({ text, summary: JSON.parse(String(res.headers['x-clickhouse-summary'] ?? '{}')) })
        })
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}
const sql = (text: string) => post(undefined, text)

// The server's own counters (system.events, cumulative): read before and after a query, their
// difference is that query's CPU and bytes read, the snapshot's own share taken off (nothing else runs
// on this server). The summary header's read_bytes counts a Map lookup's offsets only, not the Map's
// data it reads (checked: 20,000 rows of 40 keys, 258 KB said, 25 MB decompressed).
const COUNTERS = [
  'UserTimeMicroseconds',
  'SystemTimeMicroseconds',
  'ReadCompressedBytes',
  'CompressedReadBufferBytes',
]
async function counters(): Promise<number[]> {
  const { text } = await sql(
    `SELECT event, value FROM system.events WHERE event IN (${COUNTERS.map(q).join(', ')}) FORMAT TSV`,
  )
  const got = new Map(
    text
      .trim()
      .split('\n')
      .map((l) => l.split('\t') as [string, string]),
  )
  return COUNTERS.map((c) => Number(got.get(c) ?? 0))
}
const serverCpu = () => procStats(server.pid)?.cpuSeconds ?? Number.NaN
const cpuUs = () => {
  const u = process.cpuUsage()
  return u.user + u.system
}

// ---------------------------------------------------------------------------------------------
// The fidelity bag: every kind of value, with HogQL's answer for each worked out by hand from
// Burrow's rules (docs/hogql.md; properties.ts): a string unquoted and unescaped, a number as its
// JSON text (JSON.stringify's: 1.50 was parsed to 1.5 before any candidate saw it), booleans as
// true/false, JSON null and a missing key as NULL, an object or array as its JSON text.
const FIDELITY_TEXT =
  '{"s":"Chrome","quote":"say \\"hi\\" \\\\ back","uni":"Ünïcødé 日本 🎉","num":1.50,"int":1728,' +
  '"big":12345678901234567890,"t":true,"f":false,"nul":null,"empty":"",' +
  '"obj":{"k":"v","n":1},"arr":[1,"a",null],"dot.key":"x"}'
const COLLIDING_TEXT = '{"a.b":"x","a":{"b":"y"}}'
// An integer beyond 64 bits that JSON.stringify still writes in plain digits (it switches to an
// exponent from 1e21 on): ClickHouse's JSON parser (simdjson) refuses the whole document.
const HUGE_TEXT = '{"s":"Chrome","huge":123456789012345680000}'
const HUGE_CHECKS: typeof FIDELITY_CHECKS = [
  { what: 'beside an integer in [2^64, 1e21): a string', path: ['s'], expected: 'Chrome' },
  { what: 'that integer as sent', path: ['huge'], expected: '123456789012345680000' },
]
const FIDELITY_CHECKS: { what: string; path: (string | number)[]; expected: string | null }[] = [
  { what: 'string unquoted', path: ['s'], expected: 'Chrome' },
  { what: 'string with " and \\ unescaped', path: ['quote'], expected: 'say "hi" \\ back' },
  { what: 'unicode string', path: ['uni'], expected: 'Ünïcødé 日本 🎉' },
  { what: 'number 1.50 as sent (1.5)', path: ['num'], expected: '1.5' },
  { what: 'integer', path: ['int'], expected: '1728' },
  // JSON.parse gives the nearest double, which JSON.stringify writes so
  { what: 'integer beyond 2^53 as sent', path: ['big'], expected: '12345678901234567000' },
  { what: "true -> 'true'", path: ['t'], expected: 'true' },
  { what: "false -> 'false'", path: ['f'], expected: 'false' },
  { what: 'JSON null -> NULL', path: ['nul'], expected: null },
  { what: 'missing key -> NULL', path: ['nope'], expected: null },
  { what: "'' stays ''", path: ['empty'], expected: '' },
  { what: 'nested object -> its JSON', path: ['obj'], expected: '{"k":"v","n":1}' },
  { what: 'array -> its JSON', path: ['arr'], expected: '[1,"a",null]' },
  { what: 'nested path obj.k', path: ['obj', 'k'], expected: 'v' },
  { what: 'nested path obj.n (number)', path: ['obj', 'n'], expected: '1' },
  { what: 'array element arr.2', path: ['arr', 2], expected: 'a' },
  { what: 'key with a dot', path: ['dot.key'], expected: 'x' },
]

// ---------------------------------------------------------------------------------------------
// The queries

const TEAM_30D = `team_id = ${TEAM} AND timestamp >= '2026-10-01 00:00:00' AND timestamp < '2026-10-31 00:00:00'`
interface Query {
  id: string
  about: string
  sql: (c: Candidate, table: string) => string
}
const QUERIES: Query[] = [
  {
    id: 'q1',
    about: "count, $browser = 'Chrome', 30 days",
    sql: (c, t) =>
      `SELECT count() FROM ${t} WHERE ${TEAM_30D} AND ${c.equals ? c.equals('$browser', 'Chrome') : `${c.value(['$browser'])} = 'Chrome'`}`,
  },
  {
    id: 'q2',
    about: 'count by $current_url, top 20',
    sql: (c, t) =>
      `SELECT ${c.value(['$current_url'])} AS url, count() AS n FROM ${t} WHERE ${TEAM_30D} GROUP BY url ORDER BY n DESC, url LIMIT 20`,
  },
  {
    id: 'q3',
    about: 'count, utm_source is set',
    sql: (c, t) =>
      `SELECT count() FROM ${t} WHERE ${TEAM_30D} AND ${c.isSet ? c.isSet('utm_source') : `isNotNull(${c.value(['utm_source'])})`}`,
  },
  {
    id: 'q4',
    about: "nested plan_details.plan = 'pro', by tags.1",
    sql: (c, t) =>
      `SELECT ${c.value(['tags', 1])} AS tag, count() AS n FROM ${t} WHERE ${TEAM_30D} AND ${c.value(['plan_details', 'plan'])} = 'pro' GROUP BY tag ORDER BY tag`,
  },
  {
    id: 'q5',
    about: 'raw properties of the latest 100 rows',
    sql: (c, t) => `SELECT ${c.raw} AS p FROM ${t} WHERE ${TEAM_30D} ORDER BY timestamp DESC, uuid LIMIT 100`,
  },
  {
    id: 'q6',
    about: 'count, toFloat($screen_width) > 1000',
    sql: (c, t) =>
      `SELECT count() FROM ${t} WHERE ${TEAM_30D} AND toFloat64OrNull(${c.value(['$screen_width'])}) > 1000`,
  },
]

// ---------------------------------------------------------------------------------------------
// Printing

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
function table(head: string[], rows: (string | number)[][]): void {
  const cells = [head, ...rows.map((r) => r.map(String))]
  const widths = head.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)))
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`
  console.log(line(head))
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`)
  for (const r of cells.slice(1)) console.log(line(r))
  console.log('')
}
const ratio = (x: number, base: number) => (base > 0 ? `${(x / base).toFixed(2)}x` : '-')

// ---------------------------------------------------------------------------------------------
// The run

console.log(
  `property representation: ${N} events (${Math.ceil(N / BATCH)} INSERTs of ${BATCH} per table), ClickHouse ${(await sql('SELECT version()')).text.trim()}`,
)
console.log(`load at start: ${load()}`)
const t0 = performance.now()
try {
  for (const c of stored) {
    await sql(c.ddl(tableOf(c)))
    await sql(`SYSTEM STOP MERGES ${tableOf(c)}`)
  }
  const used = [...new Set(stored.map((c) => c.encoder))]
  const encodeCpu = new Map<string, number>(used.map((e) => [e, 0]))
  const insertMs = new Map<string, number>(candidates.map((c) => [c.id, 0]))
  const insertCpu = new Map<string, number>(candidates.map((c) => [c.id, 0]))
  const bodyBytes = new Map<string, number>(used.map((e) => [e, 0]))

  const encode = (enc: Encoder, rows: EventRow[]) => tsvBody(rows.map(enc.line))
  // warm-up: the encoders' JIT on a batch not counted
  const warm = Array.from({ length: Math.min(BATCH, N) }, (_, j) => eventRow(j, 0, j))
  for (let k = 0; k < 3; k++) for (const e of used) encode(ENCODERS[e], warm)

  const batches = Math.ceil(N / BATCH)
  for (let b = 0; b < batches; b++) {
    const rows: EventRow[] = []
    for (let i = b * BATCH; i < Math.min(N, (b + 1) * BATCH); i++)
      rows.push(eventRow(i, b + 1, i - b * BATCH))
    const bodies = new Map<string, Buffer>()
    for (const e of used) {
      const c0 = cpuUs()
      const body = encode(ENCODERS[e], rows)
      encodeCpu.set(e, encodeCpu.get(e)! + cpuUs() - c0)
      bodyBytes.set(e, bodyBytes.get(e)! + body.length)
      bodies.set(e, body)
    }
    // each table in turn, starting from another one each batch (a busy moment is spread)
    for (let k = 0; k < stored.length; k++) {
      const c = stored[(b + k) % stored.length]!
      const enc = ENCODERS[c.encoder]
      const insert = `INSERT INTO ${tableOf(c)} (${enc.columns.map(ident).join(', ')}) FORMAT TabSeparated`
      const s0 = serverCpu()
      const w0 = performance.now()
      await post(insert, bodies.get(c.encoder)!)
      insertMs.set(c.id, insertMs.get(c.id)! + performance.now() - w0)
      insertCpu.set(c.id, insertCpu.get(c.id)! + serverCpu() - s0)
    }
    if (b % 20 === 19)
      console.log(
        `  ${(b + 1) * BATCH} events inserted (${((performance.now() - t0) / 1000).toFixed(0)} s), load ${load()}`,
      )
  }

  // the fidelity rows (team 99), through each candidate's encoder
  const fidelityRow: EventRow = {
    ...eventRow(0, batches + 1, 0),
    teamId: FIDELITY_TEAM,
    properties: JSON.parse(FIDELITY_TEXT),
  }
  const sentRaw = JSON.stringify(fidelityRow.properties)
  // a bag whose key has a dot beside an object with that path (a key is any string in PostHog)
  const collidingRow: EventRow = {
    ...fidelityRow,
    teamId: FIDELITY_TEAM + 1,
    properties: JSON.parse(COLLIDING_TEXT),
  }
  const hugeRow: EventRow = { ...fidelityRow, teamId: FIDELITY_TEAM + 2, properties: JSON.parse(HUGE_TEXT) }
  const collidingStored = new Map<string, string>()
  const hugeStored = new Map<string, string>()
  for (const c of stored) {
    const enc = ENCODERS[c.encoder]
    const insert = `INSERT INTO ${tableOf(c)} (${enc.columns.map(ident).join(', ')}) FORMAT TabSeparated`
    await post(insert, tsvBody([enc.line(fidelityRow)]))
    try {
      await post(insert, tsvBody([enc.line(collidingRow)]))
      collidingStored.set(c.id, 'yes')
    } catch (err) {
      collidingStored.set(
        c.id,
        `refused (${/Duplicate path/.test(String(err)) ? 'duplicate path' : 'error'})`,
      )
    }
    try {
      await post(insert, tsvBody([enc.line(hugeRow)]))
      hugeStored.set(c.id, 'yes')
    } catch (err) {
      hugeStored.set(c.id, `refused (${/parse JSON/i.test(String(err)) ? 'cannot parse JSON' : 'error'})`)
    }
  }

  // merges: OPTIMIZE FINAL of each table alone
  const optimizeMs = new Map<string, number>()
  const optimizeCpu = new Map<string, number>()
  for (const c of stored) {
    await sql(`SYSTEM START MERGES ${tableOf(c)}`)
    const s0 = serverCpu()
    const w0 = performance.now()
    // (at N=1M, 50 parts a partition, the JSON type's merge of them all at once ran out of file
    // descriptors here, 20,000: one file per path and substream per part. A failure is printed.)
    try {
      await sql(`OPTIMIZE TABLE ${tableOf(c)} FINAL`)
      optimizeMs.set(c.id, performance.now() - w0)
      optimizeCpu.set(c.id, serverCpu() - s0)
    } catch (err) {
      console.log(`OPTIMIZE FINAL of ${c.id} failed: ${(err as Error).message.slice(0, 200)}`)
      optimizeMs.set(c.id, Number.NaN)
      optimizeCpu.set(c.id, Number.NaN)
    }
  }

  console.log(`\nIngestion (load now ${load()})`)
  const encRows = used.map((e) => [
    ENCODERS[e].name,
    ((encodeCpu.get(e)! / N) as number).toFixed(2),
    ratio(encodeCpu.get(e)!, encodeCpu.get('arrays') ?? 0),
    ((bodyBytes.get(e)! / N) as number).toFixed(0),
  ])
  console.log('Node CPU to encode a row (TabSeparated line + request body), this process:')
  table(['encoder', 'µs/event', 'vs E', 'body bytes/event'], encRows)
  const baseIns = insertMs.get('E') ?? 0
  const baseCpu = insertCpu.get('E') ?? 0
  table(
    ['candidate', 'insert events/s', 'vs E', 'server CPU µs/row', 'vs E', 'OPTIMIZE FINAL s', 'its CPU s'],
    stored.map((c) => [
      `${c.id} ${c.about}`,
      Math.round((N / insertMs.get(c.id)!) * 1000),
      ratio(baseIns, insertMs.get(c.id)!),
      ((insertCpu.get(c.id)! / N) * 1e6).toFixed(2),
      ratio(insertCpu.get(c.id)!, baseCpu),
      (optimizeMs.get(c.id)! / 1000).toFixed(1),
      optimizeCpu.get(c.id)!.toFixed(1),
    ]),
  )

  // storage
  const storage = new Map<string, { props: number[]; all: number[] }>()
  for (const c of stored) {
    const t = tableOf(c)
    const parts = JSON.parse(
      (
        await sql(
          `SELECT sum(bytes_on_disk) AS disk, sum(data_uncompressed_bytes) AS raw, count() AS parts FROM system.parts WHERE database = currentDatabase() AND table = '${t}' AND active FORMAT JSONEachRow`,
        )
      ).text,
    ) as { disk: string; raw: string; parts: string }
    const cols = (
      await sql(
        `SELECT name, data_compressed_bytes AS c, data_uncompressed_bytes AS u FROM system.columns WHERE database = currentDatabase() AND table = '${t}' AND name IN ('properties', 'prop_keys', 'prop_values', 'prop_map', 'props', 'mat_$browser') FORMAT JSONEachRow`,
      )
    ).text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; c: string; u: string })
    storage.set(c.id, {
      props: [cols.reduce((a, x) => a + Number(x.c), 0), cols.reduce((a, x) => a + Number(x.u), 0)],
      all: [Number(parts.disk), Number(parts.raw), Number(parts.parts)],
    })
  }
  console.log('Storage after OPTIMIZE FINAL (property columns: properties and whatever stands beside it)')
  const sE = storage.get('E')
  table(
    [
      'candidate',
      'props compressed MiB',
      'vs E',
      'props uncompressed MiB',
      'table on disk MiB',
      'vs E',
      'parts',
    ],
    stored.map((c) => {
      const s = storage.get(c.id)!
      return [
        `${c.id} ${c.about}`,
        mib(s.props[0]!),
        sE ? ratio(s.props[0]!, sE.props[0]!) : '-',
        mib(s.props[1]!),
        mib(s.all[0]!),
        sE ? ratio(s.all[0]!, sE.all[0]!) : '-',
        s.all[2]!,
      ]
    }),
  )

  // queries: RUNS rounds, each candidate in turn
  const times = new Map<string, number[]>()
  const cpus = new Map<string, number[]>()
  const decompressed = new Map<string, number>()
  const compressed = new Map<string, number>()
  // the snapshot's own counters: the median of a few differences of two snapshots in a row
  const nulls: number[][] = []
  for (let k = 0; k < 5; k++) {
    const a = await counters()
    const b = await counters()
    nulls.push(b.map((x, i) => x - a[i]!))
  }
  const overhead = COUNTERS.map((_, i) => median(nulls.map((d) => d[i]!)))
  const mems = new Map<string, number[]>()
  const answers = new Map<string, string>()
  const failed = new Map<string, string>()
  for (let run = 0; run < RUNS; run++) {
    for (const qu of QUERIES) {
      for (const c of candidates) {
        const key = `${qu.id}/${c.id}`
        if (failed.has(key)) continue
        try {
          const before = await counters()
          const { text, summary } = await sql(`${qu.sql(c, tableOf(c))} FORMAT TSV`)
          const d = (await counters()).map((x, i) => x - before[i]! - overhead[i]!)
          ;(cpus.get(key) ?? cpus.set(key, []).get(key)!).push((d[0]! + d[1]!) / 1000)
          compressed.set(key, d[2]!)
          decompressed.set(key, d[3]!)
          ;(times.get(key) ?? times.set(key, []).get(key)!).push(Number(summary.elapsed_ns) / 1e6)
          ;(mems.get(key) ?? mems.set(key, []).get(key)!).push(Number(summary.memory_usage ?? 0))
          answers.set(key, text)
        } catch (err) {
          failed.set(key, (err as Error).message.split('\n')[0]!.slice(0, 160))
        }
      }
    }
  }
  console.log(
    `Queries (team ${TEAM}, 30 days; median of ${RUNS}: the server's elapsed ms and CPU ms; bytes read ` +
      `(compressed from the files, and decompressed); peak memory; load now ${load()})`,
  )
  for (const qu of QUERIES) {
    console.log(`${qu.id}: ${qu.about}`)
    const base = times.get(`${qu.id}/E`)
    const baseCpu = cpus.get(`${qu.id}/E`)
    table(
      [
        'candidate',
        'elapsed ms',
        'vs E',
        'CPU ms',
        'vs E',
        'read MiB',
        'decompressed MiB',
        'memory MiB',
        'same answer as E',
      ],
      candidates.map((c) => {
        const key = `${qu.id}/${c.id}`
        if (failed.has(key)) return [`${c.id}`, 'failed', '-', '-', '-', '-', '-', '-', failed.get(key)!]
        const ms = median(times.get(key)!)
        const cpu = median(cpus.get(key)!)
        // q5's raw text is compared in the fidelity table (the JSON type rewrites it)
        const same =
          qu.id === 'q5' ? '(see fidelity)' : answers.get(key) === answers.get(`${qu.id}/E`) ? 'yes' : 'NO'
        return [
          `${c.id} ${c.about}`,
          ms.toFixed(1),
          base ? ratio(ms, median(base)) : '-',
          cpu.toFixed(1),
          baseCpu ? ratio(cpu, median(baseCpu)) : '-',
          mib(compressed.get(key)!),
          mib(decompressed.get(key)!),
          mib(median(mems.get(key)!)),
          same,
        ]
      }),
    )
  }

  // fidelity
  const got = new Map<string, (string | null)[]>()
  const gotHuge = new Map<string, (string | null | undefined)[]>()
  for (const c of candidates) {
    const items = [...FIDELITY_CHECKS.map((f) => c.value(f.path)), c.raw]
    try {
      const { text } = await sql(
        `SELECT ${items.map((s, i) => `${s} AS c${i}`).join(', ')} FROM ${tableOf(c)} WHERE team_id = ${FIDELITY_TEAM} FORMAT JSONEachRow`,
      )
      const row = JSON.parse(text) as Record<string, string | null>
      got.set(
        c.id,
        items.map((_, i) => row[`c${i}`] ?? null),
      )
      const huge = HUGE_CHECKS.map((f) => c.value(f.path))
      const answer = await sql(
        `SELECT ${huge.map((s, i) => `${s} AS c${i}`).join(', ')} FROM ${tableOf(c)} WHERE team_id = ${FIDELITY_TEAM + 2} FORMAT JSONEachRow`,
      )
      const hugeAnswer =
        answer.text.trim() === '' ? undefined : (JSON.parse(answer.text) as Record<string, string | null>)
      gotHuge.set(
        c.id,
        huge.map((_, i) => (hugeAnswer ? (hugeAnswer[`c${i}`] ?? null) : undefined)),
      )
    } catch (err) {
      console.log(`fidelity read of ${c.id} failed: ${(err as Error).message.split('\n')[0]}`)
    }
  }
  console.log('Fidelity: does properties.x read exactly what HogQL answers? (yes / what it gave)')
  const show = (v: string | null | undefined) =>
    v === null ? 'NULL' : v === undefined ? '?' : JSON.stringify(v)
  const fidelityRows = [
    ...FIDELITY_CHECKS.map((f, i) => [
      `${f.what}: ${show(f.expected)}`,
      ...candidates.map((c) => {
        const v = got.get(c.id)?.[i]
        return v === f.expected ? 'yes' : show(v)
      }),
    ]),
    [
      `bag ${COLLIDING_TEXT} stored`,
      ...candidates.map((c) => collidingStored.get(c.sameTableAs ?? c.id) ?? '?'),
    ],
    [`bag ${HUGE_TEXT} stored`, ...candidates.map((c) => hugeStored.get(c.sameTableAs ?? c.id) ?? '?')],
    ...HUGE_CHECKS.map((f, i) => [
      `${f.what}: ${show(f.expected)}`,
      ...candidates.map((c) => {
        const v = gotHuge.get(c.id)?.[i]
        return v === undefined ? '(no row)' : v === f.expected ? 'yes' : show(v)
      }),
    ]),
    [
      'raw properties byte-identical to what was sent',
      ...candidates.map((c) => {
        const v = got.get(c.id)?.[FIDELITY_CHECKS.length]
        return v === sentRaw ? 'yes' : 'no'
      }),
    ],
  ]
  table(['check', ...candidates.map((c) => c.id)], fidelityRows)
  for (const c of candidates) {
    const v = got.get(c.id)?.[FIDELITY_CHECKS.length]
    if (v !== undefined && v !== sentRaw) console.log(`  ${c.id} raw: ${v}`)
  }
  console.log(`  sent:   ${sentRaw}`)
  console.log(`\nload at end: ${load()}; ${((performance.now() - t0) / 1000).toFixed(0)} s`)
} finally {
  agent.destroy()
  await server.stop()
  rmSync(dir, { recursive: true, force: true })
}
process.exit(0)

// A synthetic data set for one team, generated inside ClickHouse (INSERT … SELECT FROM numbers()),
// so ten million events take seconds instead of a trip through capture and the projectors. Rows are
// shaped exactly as the projectors write them (src/projectors/rows.ts); verifyDataset() re-encodes a
// sample in TypeScript to prove it. Everything is a hash of the row number: the same options give
// the same data.
import type { ClickHouseClient } from '@clickhouse/client'

export interface DatasetOptions {
  teamId: number
  /** events to write (default 10M) */
  events?: number
  /** persons, each with one distinct id `user-<n>` (default 100K) */
  persons?: number
  /** the events spread over this many days before `endMs` (default 90) */
  days?: number
  /** epoch ms the data set ends at (exclusive; default: now, rounded down to the minute) */
  endMs?: number
  /** rows per INSERT (default 1M) */
  chunk?: number
  /**
   * Web analytics properties too (bench/web-analytics.ts): `$pathname` of the URL, and per session
   * a referring domain, utm tags (some sessions), device type, viewport and browser language; per
   * person a country, region and city.
   */
  web?: boolean
  log?: (line: string) => void
}

export interface Dataset {
  teamId: number
  events: number
  persons: number
  sessions: number
  days: number
  startMs: number
  endMs: number
  /** seconds spent writing and settling */
  seconds: number
}

/** Events in one session: a session is a run of consecutive row numbers with one person. */
export const SESSION_EVENTS = 10

// Weighted vocabularies: a value repeated k times is k times as likely.
const repeat = (pairs: [string, number][]) => pairs.flatMap(([v, k]) => Array<string>(k).fill(v))

/** Event names after a session's first event (always `$pageview`), in proportion. */
export const EVENT_MIX = repeat([
  ['$pageview', 10],
  ['$autocapture', 5],
  ['$pageleave', 2],
  ['purchase', 1],
  ['signed_up', 1],
  ['$rageclick', 1],
  ['$feature_flag_called', 1],
])
export const EVENT_NAMES = [...new Set(EVENT_MIX)]
export const BROWSERS = repeat([
  ['Chrome', 12],
  ['Safari', 5],
  ['Firefox', 2],
  ['Edge', 1],
])
export const OPERATING_SYSTEMS = repeat([
  ['Windows', 8],
  ['Mac OS X', 5],
  ['iOS', 4],
  ['Android', 2],
  ['Linux', 1],
])
export const PLANS = repeat([
  ['free', 14],
  ['pro', 5],
  ['enterprise', 1],
])
/** Paths of `$current_url`; earlier ones are visited more often (the pick is squared). */
export const PATHS = [
  '/',
  '/pricing',
  '/docs',
  '/blog',
  '/login',
  '/signup',
  '/features',
  '/about',
  '/careers',
  '/contact',
  '/docs/getting-started',
  '/docs/api',
  '/docs/sdk/js',
  '/docs/sdk/node',
  '/blog/launch',
  '/blog/changelog',
  '/integrations',
  '/customers',
  '/security',
  '/status',
]
export const URL_PREFIX = 'https://example.com'
/** Only `purchase` events carry `amount`: an integer 1..500, so stored as JSON number text. */
export const AMOUNT_MAX = 500
/**
 * `$feature_flag_called` events carry `$feature_flag` and `$feature_flag_response`: multivariate flags
 * answer 'control' or 'test', boolean ones true or false (JSON booleans); each person always gets the
 * same answer for a flag.
 */
export const MULTIVARIATE_FLAGS = ['pricing-test', 'new-onboarding']
export const BOOLEAN_FLAGS = ['beta-dashboard']
const FLAGS = [...MULTIVARIATE_FLAGS, ...BOOLEAN_FLAGS]

/** Referring domains of sessions ('$direct': none), in proportion; utm tags go with some of them. */
export const REFERRERS = repeat([
  ['$direct', 8],
  ['www.google.com', 6],
  ['news.ycombinator.com', 2],
  ['t.co', 1],
  ['www.facebook.com', 1],
  ['duckduckgo.com', 1],
  ['github.com', 1],
])
/** utm (source, medium, campaign) of a session, '' for none: most sessions have none. */
export const UTMS = repeat([
  ['', 12],
  ['google|cpc|spring', 3],
  ['newsletter|email|launch', 2],
  ['twitter|social|launch', 1],
])
export const DEVICES = repeat([
  ['Desktop', 6],
  ['Mobile', 3],
  ['Tablet', 1],
])
/** country|region code|region name|city, per person */
export const PLACES = repeat([
  ['US|CA|California|San Francisco', 5],
  ['US|NY|New York|New York', 3],
  ['GB|ENG|England|London', 3],
  ['DE|BE|Berlin|Berlin', 2],
  ['FR|IDF|Île-de-France|Paris', 1],
  ['IN|KA|Karnataka|Bengaluru', 2],
  ['BR|SP|São Paulo|São Paulo', 1],
  ['JP|13|Tokyo|Tokyo', 1],
])
export const LANGUAGES = repeat([
  ['en-US', 6],
  ['en-GB', 2],
  ['de-DE', 1],
  ['fr-FR', 1],
])

// Strings are spliced into JSON text as they are: none may need escaping.
const WEB = [...REFERRERS, ...UTMS, ...DEVICES, ...PLACES, ...LANGUAGES]
for (const v of [
  ...EVENT_MIX,
  ...BROWSERS,
  ...OPERATING_SYSTEMS,
  ...PLANS,
  ...PATHS,
  URL_PREFIX,
  ...FLAGS,
  ...WEB,
]) {
  if (JSON.stringify(v) !== `"${v}"` || v.includes("'")) throw new Error(`dataset: ${v} needs escaping`)
}

const sqlArray = (values: string[]) => `[${values.map((v) => `'${v}'`).join(', ')}]`

// Ids look like real ones: random in both halves (persons, as UUIDv5 from the projector) or led by the
// time in milliseconds (events and sessions, as UUIDv7). On 18.16 this matters beyond looks:
// uniqExact(UUID) hashes only the first half of the id (measured: 100K ids that differ only in their
// last 12 hex digits take 9 s, 1M random ones 0.4 s), so counter-like ids make count(DISTINCT
// person_id) quadratic.
// 16 hex digits of a 64-bit hash: the top bit is set so that hex() keeps every byte.
const hex16 = (seed: string) => `lower(hex(bitOr(cityHash64(${seed}), 9223372036854775808)))`
const sub = (x: string, from: number, len: number) => `substring(${x}, ${from}, ${len})`
// `high12` gives the first 12 hex digits; the rest is random (two hashes of `seed`, each with its
// first digit skipped as it is biased by the top bit), with the version and the RFC 4122 variant.
function uuidSql(high12: string, version: string, seed: string): string {
  const r = `concat(${hex16(`${seed}, 1`)}, ${hex16(`${seed}, 2`)})`
  const parts = [sub(high12, 1, 8), sub(high12, 9, 4), `concat('${version}', ${sub(r, 2, 3)})`]
  parts.push(`concat('8', ${sub(r, 5, 3)})`, sub(r, 18, 12))
  return `toUUID(concat(${parts.join(", '-', ")}))`
}
// Seeds: the team, the row's number and a salt per kind of id, hashed together as integers.
const SALT = { person: 11, event: 12, session: 13 }
const seed = (teamId: number, kind: keyof typeof SALT, n: string) =>
  `${teamId}, toUInt64(${n}), ${SALT[kind]}`
const personUuid = (teamId: number, p: string) =>
  uuidSql(hex16(`${seed(teamId, 'person', p)}, 0`), '5', seed(teamId, 'person', p))
// 12 hex digits of epoch milliseconds: exact for 2004-11 .. 10889 (checked in generateDataset).
const timeUuid = (ms: string, seed: string) => uuidSql(`lower(hex(toUInt64(${ms})))`, '7', seed)

// The person's plan: the events' `plan` property and the person's own property agree.
const planOf = (p: string) => `${sqlArray(PLANS)}[1 + cityHash64(toUInt64(${p}), 8) % ${PLANS.length}]`

function personsSql(teamId: number, persons: number, startMs: number): string {
  const createdMs = `${startMs} - cityHash64(number, 20) % ${30 * 86_400_000}`
  return `INSERT INTO person (team_id, id, created_at, properties, is_identified, is_deleted, version)
    SELECT ${teamId}, ${personUuid(teamId, 'number')}, fromUnixTimestamp64Milli(toInt64(ms)),
      concat('{"email":"', email, '","plan":"', plan, '"}'), 1, 0, 1
    FROM (
      SELECT number, ${createdMs} AS ms, concat('user-', toString(number), '@example.com') AS email,
        ${planOf('number')} AS plan
      FROM numbers(0, ${persons})
    )`
}

function distinctIdsSql(teamId: number, persons: number): string {
  return `INSERT INTO person_distinct_id (team_id, distinct_id, person_id, is_deleted, version)
    SELECT ${teamId}, concat('user-', toString(number)), ${personUuid(teamId, 'number')}, 0, 1
    FROM numbers(0, ${persons})`
}

// The web properties' JSON text (with a leading comma) and the inner columns it reads: `utm` and
// `place` per session and person, the rest picked by hash of the session `s` or person `p`.
const pick = (values: string[], key: string) =>
  `${sqlArray(values)}[1 + cityHash64(${key}) % ${values.length}]`
const WEB_COLUMNS = `, ${pick(UTMS, 's, 27')} AS utm, ${pick(PLACES, 'p, 26')} AS place`
function webJson(): string {
  const part = (x: string, i: number) => `splitByChar('|', ${x})[${i}]`
  const utm = `if(utm = '', '', concat(',"utm_source":"', ${part('utm', 1)}, '","utm_medium":"', ${part('utm', 2)}, '","utm_campaign":"', ${part('utm', 3)}, '"'))`
  return `concat(',"$pathname":"', path(url), '","$referring_domain":"', ${pick(REFERRERS, 's, 21')}, '"', ${utm},
    ',"$device_type":"', ${pick(DEVICES, 's, 22')}, '","$viewport_width":', toString(360 + cityHash64(s, 23) % 4 * 360),
    ',"$viewport_height":', toString(640 + cityHash64(s, 24) % 3 * 160), ',"$browser_language":"', ${pick(LANGUAGES, 'p, 25')},
    '","$geoip_country_code":"', ${part('place', 1)}, '","$geoip_subdivision_1_code":"', ${part('place', 2)},
    '","$geoip_subdivision_1_name":"', ${part('place', 3)}, '","$geoip_city_name":"', ${part('place', 4)}, '"')`
}

function eventsSql(
  o: { teamId: number; persons: number; startMs: number; endMs: number; web?: boolean },
  from: number,
  n: number,
) {
  const K = SESSION_EVENTS
  // A session starts anywhere in the range and its events follow 10-55 s apart, all before endMs.
  const sessionSpan = o.endMs - o.startMs - K * 55_000
  return `INSERT INTO events (team_id, uuid, event, distinct_id, person_id, timestamp,
      properties, person_properties, elements_chain, session_id,
      \`$group_0\`, \`$group_1\`, \`$group_2\`, \`$group_3\`, \`$group_4\`, created_at, _seq, _offset)
    SELECT ${o.teamId}, ${timeUuid('ts', seed(o.teamId, 'event', 'number'))}, event,
      concat('user-', toString(p)), ${personUuid(o.teamId, 'p')}, fromUnixTimestamp64Milli(toInt64(ts)),
      concat('{"$browser":"', browser, '","$os":"', os, '","$current_url":"', url, '","$session_id":"', sid,
        '","plan":"', plan, '"',
        multiIf(event = 'purchase', concat(',"amount":', toString(amount)),
          event = '$feature_flag_called', concat(',"$feature_flag":"', flag, '","$feature_flag_response":',
            if(has(${sqlArray(BOOLEAN_FLAGS)}, flag), variant, concat('"', variant, '"'))),
          '')${o.web ? `, ${webJson()}` : ''}, '}'),
      concat('{"email":"user-', toString(p), '@example.com","plan":"', plan, '"}'),
      '', sid, '', '', '', '', '', toDateTime(intDiv(ts, 1000)), number + 1, 0
    FROM (
      SELECT number,
        intDiv(number, ${K}) AS s,
        number % ${K} AS step,
        cityHash64(s, 1) % ${o.persons} AS p,
        ${o.startMs} + cityHash64(s, 2) % ${sessionSpan} AS session_start,
        session_start + step * 45000 + cityHash64(number, 3) % 10000 AS ts,
        if(step = 0, '$pageview',
          ${sqlArray(EVENT_MIX)}[1 + cityHash64(number, 4) % ${EVENT_MIX.length}]) AS event,
        ${sqlArray(BROWSERS)}[1 + cityHash64(s, 5) % ${BROWSERS.length}] AS browser,
        ${sqlArray(OPERATING_SYSTEMS)}[1 + cityHash64(p, 6) % ${OPERATING_SYSTEMS.length}] AS os,
        concat('${URL_PREFIX}', ${sqlArray(PATHS)}[1 + toUInt64(floor(${PATHS.length}
          * pow((cityHash64(number, 7) % 1000000) / 1000000, 2)))]) AS url,
        toString(${timeUuid('session_start', seed(o.teamId, 'session', 's'))}) AS sid,
        ${planOf('p')} AS plan,
        1 + cityHash64(number, 9) % ${AMOUNT_MAX} AS amount,
        ${sqlArray(FLAGS)}[1 + cityHash64(number, 10) % ${FLAGS.length}] AS flag,
        if(has(${sqlArray(BOOLEAN_FLAGS)}, flag), if(cityHash64(p, flag) % 2 = 0, 'true', 'false'),
          ['control', 'test'][1 + cityHash64(p, flag) % 2]) AS variant${o.web ? WEB_COLUMNS : ''}
      FROM numbers(${from}, ${n})
    )`
}

async function count(ch: ClickHouseClient, sql: string): Promise<number> {
  const rs = await ch.query({ query: sql, format: 'JSONCompact' })
  const body = (await rs.json()) as { data: [string | number][] }
  return Number(body.data[0]?.[0] ?? 0)
}

/** Waits until ClickHouse has no merges running (benchmarks should not time background merges). */
export async function settleMerges(ch: ClickHouseClient, timeoutMs = 300_000): Promise<void> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if ((await count(ch, 'SELECT count() FROM system.merges')) === 0) return
    await new Promise((r) => setTimeout(r, 500))
  }
}

/** Writes persons, distinct ids and events for one team that has no events yet. */
export async function generateDataset(ch: ClickHouseClient, opts: DatasetOptions): Promise<Dataset> {
  const t0 = performance.now()
  const events = opts.events ?? 10_000_000
  const persons = opts.persons ?? 100_000
  const days = opts.days ?? 90
  const endMs = opts.endMs ?? Math.floor(Date.now() / 60_000) * 60_000
  const startMs = endMs - days * 86_400_000
  const chunk = opts.chunk ?? 1_000_000
  const log = opts.log ?? (() => undefined)
  const { teamId } = opts
  if (!Number.isSafeInteger(teamId) || teamId < 0)
    throw new Error('dataset: teamId must be a non-negative integer')
  if (events >= 1e12 || persons >= 1e12 || persons < 1) throw new Error('dataset: sizes out of range')
  if (startMs < 2 ** 40 || endMs >= 2 ** 48) throw new Error('dataset: time range out of the uuid scheme')
  if (days * 86_400_000 <= SESSION_EVENTS * 55_000)
    throw new Error('dataset: the range is shorter than a session')
  if ((await count(ch, `SELECT count() FROM events WHERE team_id = ${teamId}`)) > 0) {
    throw new Error(`dataset: team ${teamId} already has events`)
  }

  await ch.command({ query: personsSql(teamId, persons, startMs) })
  await ch.command({ query: distinctIdsSql(teamId, persons) })
  log(`dataset: ${persons} persons written`)
  for (let from = 0; from < events; from += chunk) {
    const n = Math.min(chunk, events - from)
    await ch.command({ query: eventsSql({ teamId, persons, startMs, endMs, web: opts.web }, from, n) })
    log(`dataset: ${from + n}/${events} events (${((performance.now() - t0) / 1000).toFixed(1)} s)`)
  }
  await settleMerges(ch)
  const seconds = (performance.now() - t0) / 1000
  return {
    teamId,
    events,
    persons,
    sessions: Math.ceil(events / SESSION_EVENTS),
    days,
    startMs,
    endMs,
    seconds,
  }
}

/**
 * Checks a sample of the generated rows against what the projector writes: the properties JSON
 * parses and re-serializes to itself (JSON.stringify's text, as rows.ts sends it).
 */
export async function verifyDataset(ch: ClickHouseClient, ds: Dataset, sample = 2000): Promise<void> {
  const check = (what: string, raw: string) => {
    const parsed = JSON.parse(raw) as Record<string, unknown>
    if (JSON.stringify(parsed) !== raw) throw new Error(`dataset: ${what} JSON is not canonical: ${raw}`)
  }
  const rows = async (sql: string) =>
    ((await (await ch.query({ query: sql, format: 'JSONCompact' })).json()) as { data: unknown[][] }).data
  const every = Math.max(1, Math.floor(ds.events / sample))
  for (const [raw, sessionId, personProps, ts, ms, uuid] of await rows(
    `SELECT properties, session_id, person_properties, toString(timestamp),
       toUnixTimestamp64Milli(timestamp), toString(uuid)
     FROM events WHERE team_id = ${ds.teamId} AND _seq % ${every} = 1 LIMIT ${sample}`,
  )) {
    check('event', raw as string)
    const props = JSON.parse(raw as string) as Record<string, unknown>
    if (props.$session_id !== sessionId) throw new Error('dataset: session_id differs from $session_id')
    if ((JSON.parse(personProps as string) as { plan: unknown }).plan !== props.plan) {
      throw new Error('dataset: person_properties.plan differs from plan')
    }
    const msNum = Number(ms)
    if (`${new Date(msNum).toISOString().slice(0, 23).replace('T', ' ')}000` !== ts) {
      throw new Error(`dataset: timestamp ${ts} is not ${ms} ms`)
    }
    if (msNum < ds.startMs || msNum >= ds.endMs) throw new Error(`dataset: timestamp ${ms} out of range`)
    if ((uuid as string).replace(/-/g, '').slice(0, 12) !== msNum.toString(16).padStart(12, '0')) {
      throw new Error(`dataset: uuid ${uuid} does not lead with its timestamp`)
    }
  }
  for (const [raw] of await rows(
    `SELECT properties FROM person WHERE team_id = ${ds.teamId} LIMIT ${sample}`,
  )) {
    check('person', raw as string)
  }
}

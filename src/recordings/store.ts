import { gunzipSync } from 'node:zlib'
import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'
import { sqlNumber, sqlString } from '../clickhouse/sql.ts'
import type { Predicate, RecordingsFilter } from './filters.ts'
import { LIVE_RECORDING_TABLES, type RecordingTables } from './tables.ts'
import type { Project } from '../accounts/documents.ts'
import { compileInner, str } from '../queries/insights/common/hogql.ts'
import { testAccountsCondition } from '../queries/test-accounts.ts'

// Reads of the recordings projection: session summaries (merged from session_replay_events) with
// the list's filters, a session's chunk layout, and its snapshot data.

/** What the summary table knows of one session. */
export interface SessionSummary {
  session_id: string
  distinct_id: string
  start_ms: number
  end_ms: number
  /** PostHog's duration: whole seconds between the seconds of the first and last event */
  duration: number
  active_ms: number
  first_url: string
  click_count: number
  keypress_count: number
  mouse_activity_count: number
  console_log_count: number
  console_warn_count: number
  console_error_count: number
  size: number
  event_count: number
  message_count: number
  snapshot_source: string
  snapshot_library: string
}

const SELECT = `session_id,
  argMinMerge(distinct_id) AS r_distinct_id,
  minMerge(first_ms) AS r_start,
  maxMerge(last_ms) AS r_end,
  intDiv(r_end, 1000) - intDiv(r_start, 1000) AS r_duration,
  argMinMerge(first_url) AS r_url,
  sumMerge(click_count) AS r_clicks,
  sumMerge(keypress_count) AS r_keys,
  sumMerge(mouse_activity_count) AS r_mouse,
  sumMerge(active_ms) AS r_active_ms,
  sumMerge(console_log_count) AS r_log,
  sumMerge(console_warn_count) AS r_warn,
  sumMerge(console_error_count) AS r_error,
  sumMerge(size) AS r_size,
  sumMerge(event_count) AS r_events,
  sumMerge(message_count) AS r_messages,
  argMinMerge(snapshot_source) AS r_source,
  argMinMerge(snapshot_library) AS r_library`

type Row = Record<string, string | number>

function summaryOf(r: Row): SessionSummary {
  const n = (k: string) => Number(r[k])
  return {
    session_id: String(r.session_id),
    distinct_id: String(r.r_distinct_id),
    start_ms: n('r_start'),
    end_ms: n('r_end'),
    duration: n('r_duration'),
    active_ms: n('r_active_ms'),
    first_url: String(r.r_url),
    click_count: n('r_clicks'),
    keypress_count: n('r_keys'),
    mouse_activity_count: n('r_mouse'),
    console_log_count: n('r_log'),
    console_warn_count: n('r_warn'),
    console_error_count: n('r_error'),
    size: n('r_size'),
    event_count: n('r_events'),
    message_count: n('r_messages'),
    snapshot_source: String(r.r_source),
    snapshot_library: String(r.r_library),
  }
}

const FIELD: Record<Predicate['key'], string> = {
  duration: 'r_duration',
  active_seconds: '(r_active_ms / 1000)',
  inactive_seconds: '(r_duration - r_active_ms / 1000)',
  click_count: 'r_clicks',
  keypress_count: 'r_keys',
  mouse_activity_count: 'r_mouse',
  console_log_count: 'r_log',
  console_warn_count: 'r_warn',
  console_error_count: 'r_error',
  snapshot_source: 'r_source',
  start_url: 'r_url',
}

const ORDER: Record<RecordingsFilter['order'], string> = {
  start_time: 'r_start',
  duration: 'r_duration',
  recording_duration: 'r_duration',
  active_seconds: 'r_active_ms',
  inactive_seconds: '(r_duration * 1000 - r_active_ms)',
  console_error_count: 'r_error',
  click_count: 'r_clicks',
  keypress_count: 'r_keys',
  mouse_activity_count: 'r_mouse',
  activity_score: 'r_start',
}

const literal = (v: string | number) => (typeof v === 'number' ? sqlNumber(v) : sqlString(v))

function predicateSql(p: Predicate): string {
  const f = FIELD[p.key]
  const cmp = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const
  if (p.operator === 'exact' || p.operator === 'is_not') {
    const list = `${f} IN (${p.values.map(literal).join(', ')})`
    return p.operator === 'exact' ? list : `NOT (${list})`
  }
  return `${f} ${cmp[p.operator]} ${literal(p.values[0] ?? 0)}`
}

const utcDate = (ms: number) => new Date(ms).toISOString().slice(0, 10)
const utcTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
const DAY_MS = 86_400_000

/** Extra restrictions the caller resolved: sessions (explicit ids, a playlist) and distinct ids (a person). */
export interface ResolvedScope {
  sessionIds: string[] | null
  distinctIds: string[] | null
  /**
   * With filter_test_accounts, ClickHouse SQL of the session ids whose events pass the project's
   * test-account filters: one per entry of `events` (that event and the filters), or one (any
   * event) when the filter names no events. Compiled by the caller (the filters are HogQL).
   */
  testAccountSessions?: string[]
}

/** The SQL of the list query (exported for tests of its portability). */
export function listSql(
  tables: RecordingTables,
  teamId: number,
  f: RecordingsFilter,
  scope: ResolvedScope,
): string {
  const team = sqlNumber(teamId)
  const where = [`team_id = ${team}`]
  const having: string[] = []
  where.push(`session_id NOT IN (SELECT session_id FROM ${tables.deleted} WHERE team_id = ${team})`)
  if (scope.sessionIds) {
    // explicitly named sessions are shown whatever their date (as PostHog does)
    where.push(
      `session_id IN (${scope.sessionIds.length ? scope.sessionIds.map(sqlString).join(', ') : "''"})`,
    )
    if (!scope.sessionIds.length) where.push('0')
  } else {
    // rows are kept per day of receipt: a session starts at most a day before its rows' days
    if (f.fromMs !== null) {
      where.push(`day >= toDate(${sqlString(utcDate(f.fromMs - DAY_MS))})`)
      having.push(`r_start >= ${sqlNumber(f.fromMs)}`)
    }
    where.push(`day <= toDate(${sqlString(utcDate(f.toMs + DAY_MS))})`)
    having.push(`r_start <= ${sqlNumber(f.toMs)}`)
  }
  if (scope.distinctIds) {
    having.push(
      scope.distinctIds.length ? `r_distinct_id IN (${scope.distinctIds.map(sqlString).join(', ')})` : '0',
    )
  }
  const matches: string[] = []
  const since =
    f.fromMs === null ? '' : ` AND timestamp >= toDateTime(${sqlString(utcTime(f.fromMs - DAY_MS))}, 'UTC')`
  const tested = scope.testAccountSessions
  f.events.forEach((name, i) => {
    const cond = name === null ? '1' : `event = ${sqlString(name)}`
    const own = `SELECT session_id FROM events WHERE team_id = ${team} AND ${cond}${since}`
    matches.push(`session_id IN (${tested?.[i] ?? own})`)
  })
  if (tested?.length && !f.events.length) where.push(`session_id IN (${tested[0]})`)
  const levelField = { info: 'r_log', warn: 'r_warn', error: 'r_error' } as const
  const consoleConds = f.consoleLevels.map(
    (levels) => `(${levels.map((l) => `${levelField[l]} > 0`).join(' OR ')})`,
  )
  if (matches.length) where.push(`(${matches.join(f.operand === 'OR' ? ' OR ' : ' AND ')})`)
  if (consoleConds.length) having.push(`(${consoleConds.join(f.operand === 'OR' ? ' OR ' : ' AND ')})`)
  for (const p of f.predicates) having.push(predicateSql(p))
  const dir = f.direction === 'ASC' ? 'ASC' : 'DESC'
  return `SELECT ${SELECT}
FROM ${tables.summary}
WHERE ${where.join(' AND ')}
GROUP BY session_id
${having.length ? `HAVING ${having.join(' AND ')}` : ''}
ORDER BY ${ORDER[f.order]} ${dir}, session_id ${dir}
LIMIT ${sqlNumber(f.limit + 1)} OFFSET ${sqlNumber(f.offset)}`
}

/**
 * ResolvedScope.testAccountSessions: as PostHog's listing adds the test-account filters to the
 * events it matches sessions by, a session must have an event that passes them (and is the named
 * event, per `events` entry). Undefined without filter_test_accounts or with no filters.
 */
export async function testAccountSessionsSQL(
  project: Project,
  f: RecordingsFilter,
): Promise<string[] | undefined> {
  const cond = testAccountsCondition(f.testAccounts, project)
  if (!cond) return undefined
  const since =
    f.fromMs === null ? '' : ` AND timestamp >= toDateTime(${str(utcTime(f.fromMs - DAY_MS))}, 'UTC')`
  const names = f.events.length ? f.events : [null]
  return Promise.all(
    names.map(async (name) => {
      const event = name === null ? '' : ` AND event = ${str(name)}`
      const hogql = `SELECT $session_id FROM events WHERE (${cond})${event}${since}`
      return (await compileInner(hogql, project.id, project.timezone)).clickhouse
    }),
  )
}

/** A page of sessions matching the filter, and whether more follow. */
export async function listSummaries(
  ch: ClickHouseClient,
  teamId: number,
  f: RecordingsFilter,
  scope: ResolvedScope,
  tables = LIVE_RECORDING_TABLES,
): Promise<{ results: SessionSummary[]; hasNext: boolean }> {
  const rows = await selectRows<Row>(ch, listSql(tables, teamId, f, scope))
  return { results: rows.slice(0, f.limit).map(summaryOf), hasNext: rows.length > f.limit }
}

/** Summaries of the given sessions (deleted ones and unknown ids are absent). */
export async function summariesById(
  ch: ClickHouseClient,
  teamId: number,
  ids: string[],
  tables = LIVE_RECORDING_TABLES,
): Promise<Map<string, SessionSummary>> {
  const out = new Map<string, SessionSummary>()
  if (ids.length === 0) return out
  const team = sqlNumber(teamId)
  const rows = await selectRows<Row>(
    ch,
    `SELECT ${SELECT} FROM ${tables.summary}
     WHERE team_id = ${team} AND session_id IN (${ids.map(sqlString).join(', ')})
       AND session_id NOT IN (SELECT session_id FROM ${tables.deleted} WHERE team_id = ${team})
     GROUP BY session_id`,
  )
  for (const r of rows) out.set(String(r.session_id), summaryOf(r))
  return out
}

/** Whether the session was deleted through the API. */
export async function isDeleted(
  ch: ClickHouseClient,
  teamId: number,
  sessionId: string,
  tables = LIVE_RECORDING_TABLES,
) {
  const rows = await selectRows<{ n: string }>(
    ch,
    `SELECT count() AS n FROM ${tables.deleted} WHERE team_id = ${sqlNumber(teamId)} AND session_id = ${sqlString(sessionId)}`,
  )
  return Number(rows[0]?.n ?? 0) > 0
}

/** A block of a recording: the chunks whose first event falls in one minute (PostHog's blob_v2 source). */
export interface Block {
  start_ms: number
  end_ms: number
  /** [from, to) on chunks' first_ms */
  fromMs: number
  toMs: number
}

const MINUTE = 60_000

/** The session's blocks in time order; stable while the session grows (a block is a minute). */
export async function sessionBlocks(
  ch: ClickHouseClient,
  teamId: number,
  sessionId: string,
  tables = LIVE_RECORDING_TABLES,
): Promise<Block[]> {
  const rows = await selectRows<{ minute: string; s: string; e: string }>(
    ch,
    `SELECT intDiv(first_ms, ${MINUTE}) AS minute, min(first_ms) AS s, max(last_ms) AS e
     FROM ${tables.snapshots}
     WHERE team_id = ${sqlNumber(teamId)} AND session_id = ${sqlString(sessionId)} AND part = 0
     GROUP BY minute ORDER BY minute`,
  )
  return rows.map((r) => ({
    start_ms: Number(r.s),
    end_ms: Number(r.e),
    fromMs: Number(r.minute) * MINUTE,
    toMs: (Number(r.minute) + 1) * MINUTE,
  }))
}

/** Reads RowBinary rows of (chunk_id String, part UInt16, parts UInt16, data String). */
function* readChunkRows(
  buf: Buffer,
): Generator<{ chunk: string; part: number; parts: number; data: Buffer }> {
  let o = 0
  const str = (): Buffer => {
    let len = 0
    let shift = 0
    for (;;) {
      const b = buf[o++]!
      len += (b & 0x7f) * 2 ** shift
      if (b < 0x80) break
      shift += 7
    }
    const s = buf.subarray(o, o + len)
    o += len
    return s
  }
  while (o < buf.length) {
    const chunk = str().toString('latin1')
    const part = buf.readUInt16LE(o)
    const parts = buf.readUInt16LE(o + 2)
    o += 4
    yield { chunk, part, parts, data: str() }
  }
}

/**
 * The JSON lines of the session's chunks whose first event is in [fromMs, toMs), in time order.
 * A chunk sent twice is read once; a chunk missing a fragment is left out.
 */
export async function snapshotLines(
  ch: ClickHouseClient,
  teamId: number,
  sessionId: string,
  fromMs: number,
  toMs: number,
  tables = LIVE_RECORDING_TABLES,
): Promise<Buffer> {
  const res = await ch.exec({
    query: `SELECT chunk_id, part, parts, data FROM ${tables.snapshots}
      WHERE team_id = ${sqlNumber(teamId)} AND session_id = ${sqlString(sessionId)}
        AND first_ms >= ${sqlNumber(fromMs)} AND first_ms < ${sqlNumber(toMs)}
      ORDER BY first_ms, chunk_id, part, _seq
      FORMAT RowBinary`,
  })
  const pieces: Buffer[] = []
  for await (const p of res.stream) pieces.push(p as Buffer)
  const out: Buffer[] = []
  let current: { chunk: string; parts: number; data: Buffer[] } | undefined
  const seen = new Set<string>()
  const flush = () => {
    if (current && current.data.length === current.parts) out.push(gunzipSync(Buffer.concat(current.data)))
    current = undefined
  }
  for (const r of readChunkRows(Buffer.concat(pieces))) {
    const key = `${r.chunk}/${r.part}`
    if (seen.has(key)) continue
    seen.add(key)
    if (current?.chunk !== r.chunk) flush()
    if (!current) current = { chunk: r.chunk, parts: r.parts, data: [] }
    if (r.part === current.data.length) current.data.push(r.data)
  }
  flush()
  return Buffer.concat(out)
}

// The team guard, as SQL. Every read of a physical table is a subquery
//
//   (SELECT <columns> FROM <table> PREWHERE team_id = <team> [WHERE ...] [GROUP BY ...] LIMIT <max>)
//
// - PREWHERE: the server filters the rows it reads by team before it computes anything else on
//   them, so no expression of the query ever sees another project's row (a WHERE guard would sit
//   beside the user's conditions, and ClickHouse evaluates every conjunct on every row it reads);
// - explicit PREWHERE: the server then never moves other conditions into PREWHERE ahead of it
//   (optimize_move_to_prewhere skips queries that have one);
// - the barrier: no filter push-down may carry a user's condition into the guarded read, where
//   index analysis or a merged PREWHERE could evaluate it on other projects' rows. A LIMIT stops
//   the query plan's push-down (a filter below a LIMIT would change the result), and on 26.x it
//   costs nothing (breakdown at 2M events: 63 ms of server CPU against 63 without;
//   docs/performance.md, "The guard's barrier").
// Only conditions the printer chose (comparisons of the table's own columns with constants, which
// cannot fail or differ by row content) go inside, after the team condition in the same PREWHERE:
// for partition and index pruning, and so that the other columns are read only for matching rows.
// test/integration/hogql/isolation.test.ts proves it on the real server, with the settings of
// server-settings.ts GUARD_SETTINGS both on and off.

/** The largest LIMIT: the barrier no filter push-down crosses. */
export const LIMIT_BARRIER = 'LIMIT 18446744073709551615'

/** The guard's condition for `teamId`, as it appears in PREWHERE. */
export function teamCondition(teamId: number): string {
  if (!Number.isSafeInteger(teamId)) throw new Error('teamId must be an integer')
  return `team_id = ${teamId}`
}

/**
 * A guarded read of physical `table` for `teamId`, parenthesised: `columns` is the select list,
 * `tail` the clauses after PREWHERE (WHERE / GROUP BY / HAVING, written by Burrow, never by a user),
 * `also` conditions that join the team condition in PREWHERE (ones that cannot fail on any row),
 * followed by the sort-key bounds they imply (dayKeyBounds).
 */
export function guardedTable(
  table: string,
  teamId: number,
  columns: string,
  tail: string,
  also: string[] = [],
): string {
  const rest = tail ? ` ${tail}` : ''
  const derived = dayKeyBounds(table, also).filter((b) => !also.includes(b))
  const prewhere = [teamCondition(teamId), ...also, ...derived].join(' AND ')
  const read = `SELECT ${columns} FROM ${table} PREWHERE ${prewhere}${rest}`
  return `(${read} ${LIMIT_BARRIER})`
}

// ---- bounds on the sort key, derived from bounds on time ----------------------------------------
//
// `events` is partitioned by toYYYYMM(timestamp) and sorted by (team_id, toDate(timestamp), …).
// A bound written on the day (`toDate(timestamp) <= …`, `toStartOfDay(timestamp) …`) is not a
// comparison of a bare column, so it stays outside the guarded read and prunes nothing. That is
// fixed by adding, inside the guarded read, the bound the condition implies on `timestamp`. A
// `timestamp` bound also gets the `toDate(timestamp)` bound it implies (dayKeyBounds): written when
// 18.16 could not derive the key range from a `timestamp` bound (current releases can), and kept
// with the guard's shape, which changes only with a test. An added bound is always implied by the
// condition it comes from (that condition is still applied as written), so it can only skip rows the query would drop anyway: the answer is the
// same, with fewer granules read. Every function below works on the SQL the printer wrote and
// only recognises literal forms (calls of literals), so it never moves a column other than the
// table's own time column, nor anything that could fail, into the guard.

/** Tables sorted by the UTC day of a DateTime('UTC') column: table → that column. */
const DAY_SORTED: Record<string, string> = { events: 'timestamp' }

type Op = '>=' | '>' | '<=' | '<' | '='
const FLIP: Record<Op, Op> = { '>=': '<=', '>': '<', '<=': '>=', '<': '>', '=': '=' }

/** Index just past the quoted literal starting at `i` (backslash escapes), or -1 when unterminated. */
function pastLiteral(s: string, i: number): number {
  const q = s[i]
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === '\\') j++
    else if (s[j] === q) return j + 1
  }
  return -1
}

/** Index just past the bracket closing the one opened at `i`, or -1. */
function pastGroup(s: string, i: number): number {
  let depth = 0
  for (let j = i; j < s.length; j++) {
    const c = s[j]!
    if (c === "'" || c === '`' || c === '"') {
      j = pastLiteral(s, j)
      if (j < 0) return -1
      j--
    } else if (c === '(') depth++
    else if (c === ')' && --depth === 0) return j + 1
  }
  return -1
}

/** `s` without brackets that enclose all of it. */
function unwrap(s: string): string {
  let t = s.trim()
  while (t.startsWith('(') && pastGroup(t, 0) === t.length) t = t.slice(1, -1).trim()
  return t
}

/** Top-level conjuncts of `s` (split at AND outside brackets and literals). */
function conjuncts(s: string): string[] {
  const t = unwrap(s)
  const out: string[] = []
  let start = 0
  for (let j = 0; j < t.length; j++) {
    const c = t[j]!
    if (c === "'" || c === '`' || c === '"') {
      const end = pastLiteral(t, j)
      if (end < 0) return [t]
      j = end - 1
    } else if (c === '(') {
      const end = pastGroup(t, j)
      if (end < 0) return [t]
      j = end - 1
    } else if (t.startsWith(' AND ', j)) {
      out.push(t.slice(start, j))
      start = j + 5
      j += 4
    }
  }
  out.push(t.slice(start))
  return out.length > 1 ? out.flatMap(conjuncts) : [t]
}

const STRING = /^'(?:[^'\\]|\\.)*'$/
/** toDate of a text literal: a day */
const DAY_TEXT = /^toDate\('(?:[^'\\]|\\.)*'\)$/
const LITERAL = /^(?:'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?)$/

/**
 * Whether `s` is one call of `fn` (one of `names`) whose arguments are literals or such calls, and
 * the calls' names: a constant that reads no column and, for the names used here, cannot fail
 * differently on different rows.
 */
function literalCall(s: string, names: readonly string[]): boolean {
  const m = /^([A-Za-z]\w*)\(/.exec(s)
  if (!m || !names.includes(m[1]!) || pastGroup(s, m[1]!.length) !== s.length) return false
  const inner = s.slice(m[1]!.length + 1, -1)
  const args: string[] = []
  let start = 0
  for (let j = 0; j < inner.length; j++) {
    const c = inner[j]!
    if (c === "'") j = pastLiteral(inner, j) - 1
    else if (c === '(') j = pastGroup(inner, j) - 1
    else if (c === ',') {
      args.push(inner.slice(start, j).trim())
      start = j + 1
    }
    if (j < 0) return false
  }
  args.push(inner.slice(start).trim())
  return args.every((a) => LITERAL.test(a) || literalCall(a, names))
}

/** `<left> <op> <right>` at the top level of a conjunct, or undefined. */
function comparison(s: string): { left: string; op: Op; right: string } | undefined {
  const t = unwrap(s)
  for (let j = 0; j < t.length; j++) {
    const c = t[j]!
    if (c === "'" || c === '`' || c === '"') {
      j = pastLiteral(t, j) - 1
      if (j < 0) return undefined
    } else if (c === '(') {
      j = pastGroup(t, j) - 1
      if (j < 0) return undefined
    } else {
      const m = / (>=|<=|>|<|=) /y
      m.lastIndex = j
      const hit = m.exec(t)
      if (hit) return { left: t.slice(0, j).trim(), op: hit[1] as Op, right: t.slice(m.lastIndex).trim() }
    }
  }
  return undefined
}

/** A comparison of `subject` (exactly) with a constant accepted by `isConstant`, column on the left. */
function bound(
  s: string,
  subject: (left: string) => boolean,
  isConstant: (c: string) => boolean,
): { left: string; op: Op; constant: string } | undefined {
  const c = comparison(s)
  if (!c) return undefined
  if (subject(c.left) && isConstant(c.right)) return { left: c.left, op: c.op, constant: c.right }
  if (subject(c.right) && isConstant(c.left)) return { left: c.right, op: FLIP[c.op], constant: c.left }
  return undefined
}

// Constructors of DateTime (whole seconds) and DateTime64 from literals, as the printer writes them.
const DATETIME_CALLS = [
  'parseDateTimeBestEffort',
  'toDateTime',
  'parseDateTime64BestEffort',
  'toDateTime64',
] as const
// Constructors of Date from literals (and of their literal DateTime arguments).
const DATE_CALLS = ['toDate', ...DATETIME_CALLS] as const

/**
 * Bounds on the sort key's day implied by the `timestamp` bounds among `conditions` (the guard's
 * PREWHERE conditions of `table`): `timestamp >= C` gives `toDate(timestamp) >= ` the UTC day of
 * C, and so on, with exclusive ends made exact on whole seconds (`timestamp < C` ⇔
 * `timestamp <= C - 1`). Only constants built from literals by parseDateTimeBestEffort or
 * toDateTime (DateTime: whole seconds, any time zone; the day is taken in UTC, the column's and the
 * key's zone) are used. Empty for tables not sorted by day.
 */
export function dayKeyBounds(table: string, conditions: string[]): string[] {
  const column = DAY_SORTED[table.replace(/`/g, '')]
  if (!column) return []
  const col = quoteName(column)
  const out: string[] = []
  for (const cond of conditions.flatMap(conjuncts)) {
    const b = bound(
      cond,
      (l) => l === col,
      (c) => literalCall(c, DATETIME_CALLS),
    )
    if (b) out.push(keyBound(col, b.op, b.constant))
  }
  return out
}

/**
 * The bound on the key `toDate(col)` (UTC days) implied by `col <op> dt`, where `dt` is SQL of a
 * DateTime or a DateTime64. The column holds microseconds (events.timestamp is DateTime64(6)), so
 * `col < dt` ⇔ `col <= dt - 1 µs`; for a DateTime (whole seconds) that is the second before, on
 * the same day as `dt - 1 µs`.
 */
function keyBound(col: string, op: Op, dt: string): string {
  const tick = (sign: string) => ` ${sign} toIntervalMicrosecond(1)`
  const day = (shift: string) => `toDate(toTimeZone(${shift ? `toDateTime64(${dt}, 6)` : dt}, 'UTC')${shift})`
  const key = `toDate(${col})`
  switch (op) {
    case '>=':
      return `${key} >= ${day('')}`
    case '>':
      return `${key} >= ${day(tick('+'))}`
    case '<=':
      return `${key} <= ${day('')}`
    case '<':
      return `${key} <= ${day(tick('-'))}`
    case '=':
      return `${key} = ${day('')}`
  }
}

/**
 * Bounds on `timestamp`, and the key bounds those imply, that follow from a condition on its day,
 * for the guarded read of `table`: `cond` is one conjunct of the query's WHERE as printed inside a
 * guarded read (bare column names). Recognised: `toDate(timestamp)` compared with a day (text or
 * toDate of text); `toStartOfDay`, `toStartOfInterval` by seconds, minutes, hours or days, and
 * `toStartOfHour` … `toStartOfMinute` compared with a literal-built DateTime; each of the column
 * (UTC) or of `toTimeZone(timestamp, 'zone')`. With d the day in that zone and start(D) the first
 * instant of day D there (toDateTime(D, zone)):
 * - d >= D ⇔ timestamp >= start(D); d > D ⇔ timestamp >= start(D + 1)
 * - d <= D ⇔ timestamp < start(D + 1); d < D ⇔ timestamp < start(D); d = D: both ends
 * - start of an n-day bucket >= C ⇒ timestamp >= C (a bucket does not start after the time),
 *   > C ⇒ > C; <= C or < C ⇒ timestamp < start(day of C + n)
 * - start of a shorter bucket of s seconds: >= or > C ⇒ timestamp >= C - 1 h; <= or < C ⇒
 *   timestamp < C + s + 1 h (slack for DST, below)
 * Each timestamp bound is followed by its keyBound. Empty when the condition is anything else
 * (another pairing of day and DateTime converts between zones in ways this does not model).
 */
export function timestampBoundsOfDay(table: string, cond: string): string[] {
  const column = DAY_SORTED[table.replace(/`/g, '')]
  if (!column) return []
  const col = quoteName(column)
  const zoneOf = (inner: string): string | undefined => {
    if (inner === col) return 'UTC'
    const m = /^toTimeZone\((.*), '([A-Za-z0-9_+\-/]+)'\)$/.exec(inner)
    return m && m[1] === col ? m[2] : undefined
  }
  const fnOf = (left: string): Truncation | undefined => {
    const m = /^(\w+)\((.*)\)$/.exec(left)
    if (!m || pastGroup(left, m[1]!.length) !== left.length) return undefined
    const [, name, inner] = m as unknown as [string, string, string]
    if (name === 'toStartOfInterval') {
      const i = /^(.*), toInterval(Second|Minute|Hour|Day)\((\d+)\)$/.exec(inner)
      const zone = i && zoneOf(i[1]!)
      const n = Number(i?.[3])
      if (!zone || !(n >= 1 && n <= 1_000_000)) return undefined
      if (i[2] === 'Day') return { kind: 'days', n, zone }
      return { kind: 'within', seconds: n * UNIT_SECONDS[i[2]!]!, zone }
    }
    const zone = zoneOf(inner)
    if (!zone) return undefined
    if (name === 'toDate') return { kind: 'date', zone }
    if (name === 'toStartOfDay') return { kind: 'days', n: 1, zone }
    const seconds = SUB_DAY[name]
    return seconds ? { kind: 'within', seconds, zone } : undefined
  }
  const out: string[] = []
  const push = (op: Op, dt: string) => out.push(`${col} ${op} ${dt}`, keyBound(col, op, dt))
  for (const c of conjuncts(cond)) {
    const b = bound(
      c,
      (l) => !!fnOf(l),
      (k) => STRING.test(k) || literalCall(k, DATE_CALLS),
    )
    if (!b) continue
    const t = fnOf(b.left)!
    const z = `'${t.zone}'`
    const lower = b.op === '>=' || b.op === '>' || b.op === '='
    const upper = b.op === '<=' || b.op === '<' || b.op === '='
    if (t.kind === 'date') {
      let day: string
      if (STRING.test(b.constant)) day = `toDate(${b.constant})`
      else if (DAY_TEXT.test(b.constant)) day = b.constant
      else continue
      const start = (shift: number) => `toDateTime(${day}${shift ? ` + ${shift}` : ''}, ${z})`
      if (b.op === '>=' || b.op === '=') push('>=', start(0))
      if (b.op === '>') push('>=', start(1))
      if (b.op === '<=' || b.op === '=') push('<', start(1))
      if (b.op === '<') push('<', start(0))
      continue
    }
    // the others return DateTime: compared with a DateTime built from literals only
    if (!literalCall(b.constant, DATETIME_CALLS)) continue
    if (t.kind === 'days') {
      if (lower) push(b.op === '>' ? '>' : '>=', b.constant)
      if (upper) push('<', `toDateTime(toDate(toTimeZone(${b.constant}, ${z})) + ${t.n}, ${z})`)
    } else {
      if (lower) push('>=', `${b.constant} - ${HOUR}`)
      if (upper) push('<', `${b.constant} + ${t.seconds + HOUR}`)
    }
  }
  return out
}

/**
 * A truncation of the time column in a zone: to its day (`date`, a Date), to the start of a bucket
 * of `n` days (`days`), or to the start of a bucket shorter than a day (`within`, `seconds` long).
 */
type Truncation =
  | { kind: 'date'; zone: string }
  | { kind: 'days'; n: number; zone: string }
  | { kind: 'within'; seconds: number; zone: string }

const UNIT_SECONDS: Record<string, number> = { Second: 1, Minute: 60, Hour: 3600 }
const SUB_DAY: Record<string, number> = {
  toStartOfHour: 3600,
  toStartOfFifteenMinutes: 900,
  toStartOfTenMinutes: 600,
  toStartOfFiveMinutes: 300,
  toStartOfMinute: 60,
}
// Buckets shorter than a day are cut in local time: across a DST change a bucket's start can be up
// to an hour away from the instant's own hour, so their bounds keep an hour of slack each way (the
// sort key is by day, so this costs at most the granules of one more hour).
const HOUR = 3600

function quoteName(name: string): string {
  return `\`${name}\``
}

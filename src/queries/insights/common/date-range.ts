// PostHog's date ranges (posthog/hogql_queries/utils/query_date_range.py and
// posthog/utils.py relative_date_parse), in wall-clock time of the project's zone.
//
// date_from / date_to take absolute dates ('2024-01-31', '2024-01-31T10:00:00', with or without
// an offset; without one the project zone applies) or relative ones: `-7d`, `-24h`, `-1w`,
// `-3m`, `-1q` (13 weeks), `-1y`, `-30M` (minutes), `-10s`, with an optional `Start`/`End`
// (`-1mStart`, `dStart`, `-1dEnd`). `date_from: 'all'` starts at the project's earliest event.
import { ValidationError } from '../../../http/errors.ts'
import { str } from './hogql.ts'
import type { DateRange, Interval } from './schema.ts'
import {
  addDays,
  addMonths,
  instantOf,
  startOfDay,
  startOfMonth,
  startOfWeek,
  type Wall,
  wallOf,
  wallString,
} from './time.ts'

/** PostHog's default range when date_from is not given: the last 7 days and today. */
export const DEFAULT_DATE_FROM_DAYS = 7

type Delta = Partial<
  Record<
    | 'years'
    | 'months'
    | 'weeks'
    | 'days'
    | 'hours'
    | 'minutes'
    | 'seconds'
    | 'month'
    | 'day'
    | 'hour'
    | 'minute'
    | 'second'
    | 'ms',
    number
  >
>

const RELATIVE = /^-?(\d+)?([hdwmqysHDWMQY])(Start|End)?$/
const ABSOLUTE =
  /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/

function deltaFor(kind: string, n: number | undefined, position: string | undefined): Delta {
  const d: Delta = {}
  const start = position === 'Start'
  const end = position === 'End'
  switch (kind) {
    case 'h':
      if (n) d.hours = n
      if (start) Object.assign(d, { minute: 0, second: 0, ms: 0 })
      if (end) Object.assign(d, { minute: 59, second: 59, ms: 999 })
      break
    case 'd':
      if (n) d.days = n
      if (start) Object.assign(d, { hour: 0, minute: 0, second: 0, ms: 0 })
      if (end) Object.assign(d, { hour: 23, minute: 59, second: 59, ms: 999 })
      break
    case 'w':
      if (n) d.weeks = n
      break
    case 'm':
      if (n) d.months = n
      if (start) d.day = 1
      if (end) d.day = 31
      break
    case 'M':
      if (n) d.minutes = n
      break
    case 's':
      if (n) d.seconds = n
      break
    case 'q':
      if (n) d.weeks = 13 * n
      break
    case 'y':
      if (n) d.years = n
      if (start) Object.assign(d, { month: 1, day: 1 })
      if (end) d.day = 31
      break
  }
  return d
}

/** dateutil's relativedelta applied with `sign`: absolute fields replace, relative ones add. */
export function applyDelta(w: Wall, d: Delta, sign: 1 | -1): Wall {
  const t = new Date(w)
  let year = t.getUTCFullYear() + sign * (d.years ?? 0)
  let month = (d.month ?? t.getUTCMonth() + 1) - 1 + sign * (d.months ?? 0)
  year += Math.floor(month / 12)
  month = ((month % 12) + 12) % 12
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
  const day = Math.min(last, d.day ?? t.getUTCDate())
  const base = Date.UTC(
    year,
    month,
    day,
    d.hour ?? t.getUTCHours(),
    d.minute ?? t.getUTCMinutes(),
    d.second ?? t.getUTCSeconds(),
    d.ms ?? t.getUTCMilliseconds(),
  )
  const rel =
    ((d.weeks ?? 0) * 7 + (d.days ?? 0)) * 86_400_000 +
    (d.hours ?? 0) * 3_600_000 +
    (d.minutes ?? 0) * 60_000 +
    (d.seconds ?? 0) * 1000
  return base + sign * rel
}

interface Parsed {
  wall: Wall
  /** null for an absolute date */
  delta: Delta | null
}

export function parseDate(input: string, tz: string, now: Wall, truncate: boolean, field: string): Parsed {
  const a = ABSOLUTE.exec(input.trim())
  if (a) {
    const wall = Date.UTC(
      +a[1]!,
      +a[2]! - 1,
      +a[3]!,
      +(a[4] ?? 0),
      +(a[5] ?? 0),
      +(a[6] ?? 0),
      Math.floor(Number(`0.${a[7] ?? 0}`) * 1000),
    )
    if (Number.isNaN(wall)) throw new ValidationError(`Invalid date '${input}'`, field)
    if (!a[8]) return { wall, delta: null }
    // An explicit offset names an instant; the range works in the project's wall clock.
    const offset = a[8] === 'Z' ? 0 : offsetMinutes(a[8])
    return { wall: wallOf(wall - offset * 60_000, tz), delta: null }
  }
  const r = RELATIVE.exec(input.trim())
  if (!r) throw new ValidationError(`Invalid date '${input}'`, field)
  const delta = deltaFor(r[2]!, r[1] ? Number(r[1]) : undefined, r[3])
  let wall = applyDelta(now, delta, -1)
  if (truncate) wall = delta.hours !== undefined ? wall - (wall % 3_600_000) : startOfDay(wall)
  return { wall, delta }
}

function offsetMinutes(s: string): number {
  const m = /^([+-])(\d{2}):?(\d{2})$/.exec(s)!
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]))
}

export function alignToInterval(w: Wall, interval: Interval): Wall {
  switch (interval) {
    case 'minute':
      return w - (((w % 60_000) + 60_000) % 60_000)
    case 'hour':
      return w - (((w % 3_600_000) + 3_600_000) % 3_600_000)
    case 'day':
      return startOfDay(w)
    case 'week':
      return startOfWeek(w)
    case 'month':
      return startOfMonth(w)
  }
}

export function addIntervals(w: Wall, interval: Interval, n: number): Wall {
  switch (interval) {
    case 'minute':
      return w + n * 60_000
    case 'hour':
      return w + n * 3_600_000
    case 'day':
      return addDays(w, n)
    case 'week':
      return addDays(w, 7 * n)
    case 'month':
      return addMonths(w, n)
  }
}

export interface ResolvedRange {
  interval: Interval
  tz: string
  /** date_from() and date_to() of PostHog's QueryDateRange */
  from: Wall
  to: Wall
  /** the lower bound events are read from (date_from_with_adjusted_start_of_interval) */
  lower: Wall
  fromDelta: Delta | null
  toDelta: Delta | null
  /** date_from was 'all': `from` is the earliest event, known only after a query */
  all: boolean
  explicit: boolean
}

export interface RangeOptions {
  now?: number
  /** for date_from 'all': the earliest event's wall time, once known */
  earliest?: Wall
}

export function resolveDateRange(
  dr: DateRange | null | undefined,
  interval: Interval,
  tz: string,
  opts: RangeOptions = {},
): ResolvedRange {
  const now = wallOf(opts.now ?? Date.now(), tz)
  const explicit = !!dr?.explicitDate
  // date_to
  let to = now
  let toDelta: Delta | null = null
  if (dr?.date_to) ({ wall: to, delta: toDelta } = parseDate(dr.date_to, tz, now, false, 'dateRange.date_to'))
  if (!explicit) {
    const relative = !dr?.date_to || toDelta !== null
    if (interval !== 'hour' && interval !== 'minute') to = startOfDay(to) + 86_400_000 - 1
    else if (relative && interval === 'hour') to = alignToInterval(to, 'hour') + 3_600_000 - 1
    else if (relative) to = alignToInterval(to, 'minute') + 59_999
  }
  // date_from
  const all = dr?.date_from === 'all'
  let from: Wall
  let fromDelta: Delta | null = null
  if (all) from = opts.earliest ?? Number.NaN
  else if (dr?.date_from) {
    ;({ wall: from, delta: fromDelta } = parseDate(
      dr.date_from,
      tz,
      now,
      interval !== 'minute',
      'dateRange.date_from',
    ))
  } else {
    from = addDays(startOfDay(now), -DEFAULT_DATE_FROM_DAYS)
    fromDelta = { days: DEFAULT_DATE_FROM_DAYS }
  }
  const range: ResolvedRange = { interval, tz, from, to, lower: from, fromDelta, toDelta, all, explicit }
  range.lower = lowerBound(range, dr?.date_from ?? null)
  return range
}

// PostHog's use_start_of_interval(): relative ranges on day-or-longer intervals read whole
// intervals; hour/minute charts and explicit dates read from the exact instant.
function lowerBound(r: ResolvedRange, dateFrom: string | null): Wall {
  let useStart = true
  if (r.explicit) useStart = false
  else if (dateFrom !== null && (r.fromDelta !== null || r.all)) {
    if (r.interval === 'hour' || r.interval === 'minute') useStart = false
    else if (r.interval === 'day' && r.fromDelta?.hours !== undefined) useStart = false
  }
  if (!useStart || Number.isNaN(r.from)) return r.from
  // Week charts read from the start of date_from's day, not of its week.
  return r.interval === 'week' ? startOfDay(r.from) : alignToInterval(r.from, r.interval)
}

/** Every interval start from date_from's interval to date_to (PostHog's all_values()). */
export function bucketsOf(r: ResolvedRange): Wall[] {
  if (Number.isNaN(r.from)) return []
  const out: Wall[] = []
  for (let w = alignToInterval(r.from, r.interval); w <= r.to; w = addIntervals(w, r.interval, 1)) {
    out.push(w)
    if (out.length > 100_000) throw new ValidationError('The date range has too many intervals.', 'interval')
  }
  return out
}

/**
 * The previous period for compare (posthog/utils.py get_compare_period_dates), or the range
 * shifted by `compare_to` (e.g. '-1w').
 */
export function previousPeriod(r: ResolvedRange, compareTo?: string | null): ResolvedRange {
  if (compareTo) {
    const rel = RELATIVE.exec(compareTo.trim())
    if (!rel) throw new ValidationError(`Invalid compare_to '${compareTo}'`, 'compareFilter.compare_to')
    const d = deltaFor(rel[2]!, rel[1] ? Number(rel[1]) : undefined, rel[3])
    const from = applyDelta(r.from, d, -1)
    const to = applyDelta(r.to, d, -1)
    return { ...r, from, to, lower: applyDelta(r.lower, d, -1) }
  }
  const diff = r.to - r.from
  let from = r.from - diff
  let to = r.from
  const timeOf = (w: Wall) => ((w % 86_400_000) + 86_400_000) % 86_400_000
  if (r.interval === 'hour') {
    from = startOfDay(from) + timeOf(r.from)
    to = from + diff
    to = to - (to % 3_600_000) + (r.to % 3_600_000)
  } else if (r.interval !== 'minute') {
    from = startOfDay(from) + timeOf(r.from)
    const days = r.fromDelta?.days
    if (r.interval === 'day' && days && days % 7 === 0 && !r.toDelta) from = addDays(from, 1)
    to = startOfDay(from + diff) + timeOf(r.to)
  }
  const prev: ResolvedRange = { ...r, from, to, all: false }
  prev.lower =
    r.lower === r.from ? from : r.interval === 'week' ? startOfDay(from) : alignToInterval(from, r.interval)
  return prev
}

/** The wall bound as ClickHouse text: HogQL compares it with `timestamp` in the project zone. */
export const bound = (w: Wall) => wallString(w)

/**
 * HogQL: `field` inside the range, from the lower bound events are read from (minus
 * `lookbackDays`, for active-user windows) to date_to. date_from 'all' has no lower bound.
 */
export function rangeCondition(r: ResolvedRange, field = 'timestamp', lookbackDays = 0): string {
  const upper = `${field} <= ${str(bound(r.to))}`
  if (Number.isNaN(r.lower)) return upper
  return `${field} >= ${str(bound(addDays(r.lower, -lookbackDays)))} AND ${upper}`
}

/** The instant of a wall value (for checks and tests). */
export const instant = (w: Wall, tz: string) => instantOf(w, tz)

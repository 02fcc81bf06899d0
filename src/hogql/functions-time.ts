import { escapeString } from './escape.ts'
import {
  type FnDef,
  type FnPrinter,
  first,
  fixed,
  INF,
  isDateTimeType,
  isDateType,
  isNumericType,
} from './function-defs.ts'

// Allow-listed conversions and date/time functions, printed in forms 18.16 runs (it has no
// toStartOfInterval, toStartOfWeek or toIntervalQuarter).

const INTERVALS: Record<string, string> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  week: 'Week',
  month: 'Month',
  year: 'Year',
}

// 18.16 has no toIntervalQuarter; a quarter is three months everywhere ClickHouse adds intervals.
function intervalOf(unit: string, n: string): string {
  const u = unit.toLowerCase().replace(/s$/, '')
  if (u === 'quarter') return `toIntervalMonth(3 * (${n}))`
  const name = INTERVALS[u]
  if (!name) throw new Error(`unknown interval unit ${unit}`)
  return `toInterval${name}(${n})`
}

// Unit arguments of dateDiff/dateAdd must be string constants; the resolver passes them printed,
// so strip the quotes back off (they were escaped by us, never raw user text).
function unitOf(printed: string): string {
  const m = /^'([a-zA-Z]+)'$/.exec(printed)
  if (!m) throw new Error('the unit must be a string constant')
  return m[1]!
}

const dateAdd =
  (sign: '+' | '-'): FnPrinter =>
  (a) => {
    // dateAdd(unit, n, date) or dateAdd(date, interval)
    if (a.length === 3) return `(${a[2]} ${sign} ${intervalOf(unitOf(a[0]!), a[1]!)})`
    return `(${a[0]} ${sign} ${a[1]})`
  }

// toStartOfWeek(x, mode): 18.16 only has toMonday. Mode 0 (the default) starts weeks on Sunday:
// shift by a day, take the Monday, shift back.
const startOfWeek: FnPrinter = (a) => {
  const mode = a[1] ?? '0'
  if (mode === '1' || mode === '3') return `toMonday(${a[0]})`
  if (mode === '0' || mode === '2') return `toDate(toMonday(toDate(${a[0]}) + 1) - 1)`
  throw new Error('toStartOfWeek supports modes 0-3')
}

// Conversions follow PostHog's mapping (posthog/hogql/functions/mapping.py): a value that does not
// convert gives NULL, never an error (accurateCastOrNull, toUUIDOrNull). Nothing here trusts the inferred argument type to choose a throwing form: inference can be wrong
// (an Unknown type means "any"), and a wrong guess would turn a conversion into an error.
const castOrNull =
  (type: 'Int64' | 'Float64'): FnPrinter =>
  (a) =>
    `accurateCastOrNull(${a[0]}, '${type}')`
const toIntP = castOrNull('Int64')
const toFloatP = castOrNull('Float64')
const toDateP: FnPrinter = (a, _p, ctx) => {
  const t = ctx.argTypes[0]
  if (isDateTimeType(t) || isDateType(t)) return `toDate(${a[0]})`
  return `toDateOrNull(toString(${a[0]}))`
}
const toUUIDP: FnPrinter = (a) => {
  // A literal in UUID form (printed by us, so no quote can hide in it) converts as it is.
  if (/^'[0-9A-Fa-f]{8}(-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}'$/.test(a[0]!)) return `toUUID(${a[0]})`
  return `toUUIDOrNull(toString(${a[0]}))`
}
const toDateTimeP: FnPrinter = (a, _p, ctx) => {
  const t = ctx.argTypes[0]
  const tz = a[1] ?? escapeString(ctx.tz)
  // a DateTime64 (events.timestamp) becomes a DateTime of whole seconds, as in PostHog
  if (t && /DateTime64/.test(t)) return a[1] ? `toDateTime(${a[0]}, ${tz})` : `toDateTime(${a[0]})`
  if (isDateTimeType(t)) return a[1] ? `toTimeZone(${a[0]}, ${tz})` : a[0]!
  if (isNumericType(t) || isDateType(t)) return `toDateTime(${a[0]}, ${tz})`
  return `parseDateTimeBestEffortOrNull(toString(${a[0]}), ${tz})`
}

const dateTimeRet = (): string => 'DateTime'
/** Conversion and date/time functions by HogQL name. */
export const TIME_FUNCTIONS: Record<string, FnDef> = {
  // conversions
  toString: fixed('toString', 1, 1, 'String'),
  toInt: { min: 1, max: 1, print: toIntP, ret: 'Nullable(Int64)' },
  toFloat: { min: 1, max: 1, print: toFloatP, ret: 'Nullable(Float64)' },
  toDate: {
    min: 1,
    max: 1,
    print: toDateP,
    ret: (t) => (isDateTimeType(t[0]) || isDateType(t[0]) ? 'Date' : 'Nullable(Date)'),
  },
  toDateTime: {
    min: 1,
    max: 2,
    print: toDateTimeP,
    ret: (t) =>
      isDateTimeType(t[0]) || isNumericType(t[0]) || isDateType(t[0]) ? 'DateTime' : 'Nullable(DateTime)',
  },
  toUUID: { min: 1, max: 1, print: toUUIDP, ret: 'Nullable(UUID)' },
  toUnixTimestamp: fixed('toUnixTimestamp', 1, 1, 'UInt32'),
  fromUnixTimestamp: {
    min: 1,
    max: 1,
    print: (a, _p, c) => `toDateTime(${a[0]}, ${escapeString(c.tz)})`,
    ret: dateTimeRet,
  },
  toTypeName: fixed('toTypeName', 1, 1, 'String'),
  cityHash64: fixed('cityHash64', 1, INF, 'UInt64'),
  sipHash64: fixed('sipHash64', 1, INF, 'UInt64'),

  // dates and times
  // now('Europe/Berlin'): the current time shown in that zone instead of the project's.
  now: {
    min: 0,
    max: 1,
    print: (a, _p, c) => `toTimeZone(now(), ${a[0] ?? escapeString(c.tz)})`,
    ret: dateTimeRet,
    ci: true,
  },
  today: {
    min: 0,
    max: 0,
    print: (_a, _p, c) => `toDate(toTimeZone(now(), ${escapeString(c.tz)}))`,
    ret: 'Date',
  },
  yesterday: {
    min: 0,
    max: 0,
    print: (_a, _p, c) => `(toDate(toTimeZone(now(), ${escapeString(c.tz)})) - 1)`,
    ret: 'Date',
  },
  toTimeZone: { min: 2, max: 2, print: 'toTimeZone', ret: 'DateTime' },
  toStartOfDay: fixed('toStartOfDay', 1, 1, first),
  toStartOfHour: fixed('toStartOfHour', 1, 1, first),
  toStartOfMinute: fixed('toStartOfMinute', 1, 1, first),
  toStartOfFiveMinutes: fixed('toStartOfFiveMinute', 1, 1, first),
  toStartOfFiveMinute: fixed('toStartOfFiveMinute', 1, 1, first),
  toStartOfFifteenMinutes: fixed('toStartOfFifteenMinutes', 1, 1, first),
  toStartOfWeek: { min: 1, max: 2, print: startOfWeek, ret: 'Date' },
  toMonday: fixed('toMonday', 1, 1, 'Date'),
  toStartOfMonth: fixed('toStartOfMonth', 1, 1, 'Date'),
  toStartOfQuarter: fixed('toStartOfQuarter', 1, 1, 'Date'),
  toStartOfYear: fixed('toStartOfYear', 1, 1, 'Date'),
  toStartOfISOYear: fixed('toStartOfISOYear', 1, 1, 'Date'),
  toYear: fixed('toYear', 1, 1, 'UInt16'),
  toQuarter: fixed('toQuarter', 1, 1, 'UInt8'),
  toMonth: fixed('toMonth', 1, 1, 'UInt8'),
  toDayOfYear: fixed('toDayOfYear', 1, 1, 'UInt16'),
  toDayOfMonth: fixed('toDayOfMonth', 1, 1, 'UInt8'),
  toDayOfWeek: fixed('toDayOfWeek', 1, 1, 'UInt8'),
  toHour: fixed('toHour', 1, 1, 'UInt8'),
  toMinute: fixed('toMinute', 1, 1, 'UInt8'),
  toSecond: fixed('toSecond', 1, 1, 'UInt8'),
  toISOWeek: fixed('toISOWeek', 1, 1, 'UInt8'),
  toISOYear: fixed('toISOYear', 1, 1, 'UInt16'),
  toYYYYMM: fixed('toYYYYMM', 1, 1, 'UInt32'),
  toYYYYMMDD: fixed('toYYYYMMDD', 1, 1, 'UInt32'),
  formatDateTime: fixed('formatDateTime', 2, 3, 'String'),
  dateDiff: fixed('dateDiff', 3, 3, 'Int64'),
  date_diff: fixed('dateDiff', 3, 3, 'Int64'),
  dateAdd: { min: 2, max: 3, print: dateAdd('+'), ret: (t) => t[t.length === 3 ? 2 : 0] ?? 'Unknown' },
  date_add: { min: 2, max: 3, print: dateAdd('+'), ret: (t) => t[t.length === 3 ? 2 : 0] ?? 'Unknown' },
  dateSub: { min: 2, max: 3, print: dateAdd('-'), ret: (t) => t[t.length === 3 ? 2 : 0] ?? 'Unknown' },
  date_sub: { min: 2, max: 3, print: dateAdd('-'), ret: (t) => t[t.length === 3 ? 2 : 0] ?? 'Unknown' },
  date_subtract: { min: 2, max: 3, print: dateAdd('-'), ret: (t) => t[t.length === 3 ? 2 : 0] ?? 'Unknown' },
  addSeconds: fixed('addSeconds', 2, 2, first),
  addMinutes: fixed('addMinutes', 2, 2, first),
  addHours: fixed('addHours', 2, 2, first),
  addDays: fixed('addDays', 2, 2, first),
  addWeeks: fixed('addWeeks', 2, 2, first),
  addMonths: fixed('addMonths', 2, 2, first),
  addYears: fixed('addYears', 2, 2, first),
  subtractSeconds: fixed('subtractSeconds', 2, 2, first),
  subtractMinutes: fixed('subtractMinutes', 2, 2, first),
  subtractHours: fixed('subtractHours', 2, 2, first),
  subtractDays: fixed('subtractDays', 2, 2, first),
  subtractWeeks: fixed('subtractWeeks', 2, 2, first),
  subtractMonths: fixed('subtractMonths', 2, 2, first),
  subtractYears: fixed('subtractYears', 2, 2, first),
  toIntervalSecond: fixed('toIntervalSecond', 1, 1, 'IntervalSecond'),
  toIntervalMinute: fixed('toIntervalMinute', 1, 1, 'IntervalMinute'),
  toIntervalHour: fixed('toIntervalHour', 1, 1, 'IntervalHour'),
  toIntervalDay: fixed('toIntervalDay', 1, 1, 'IntervalDay'),
  toIntervalWeek: fixed('toIntervalWeek', 1, 1, 'IntervalWeek'),
  toIntervalMonth: fixed('toIntervalMonth', 1, 1, 'IntervalMonth'),
  toIntervalQuarter: { min: 1, max: 1, print: (a) => intervalOf('quarter', a[0]!), ret: 'IntervalMonth' },
  toIntervalYear: fixed('toIntervalYear', 1, 1, 'IntervalYear'),
}

import { escapeString } from './escape.ts'
import {
  each,
  type FnDef,
  type FnPrinter,
  first,
  fixed,
  INF,
  isDateTimeType,
  isDateType,
  isNumericType,
  zoned,
} from './function-defs.ts'

// Allow-listed conversions and date/time functions, with PostHog's (posthog/hogql/functions/
// clickhouse/conversions.py, datetime.py) beyond the common ones.

const INTERVALS: Record<string, string> = {
  second: 'Second',
  minute: 'Minute',
  hour: 'Hour',
  day: 'Day',
  week: 'Week',
  month: 'Month',
  quarter: 'Quarter',
  year: 'Year',
}

function intervalOf(unit: string, n: string): string {
  const u = unit.toLowerCase().replace(/s$/, '')
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

// toStartOfWeek(x, mode): the modes that only choose the first day (0 and 2 Sunday, 1 and 3
// Monday); the others number weeks by a rule the start of a week does not need.
const startOfWeek: FnPrinter = (a) => {
  const mode = a[1] ?? '0'
  if (!['0', '1', '2', '3'].includes(mode)) throw new Error('toStartOfWeek supports modes 0-3')
  return `toStartOfWeek(${a[0]}, ${mode})`
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

// date_part's units and the function that reads each (PostHog's list); every branch of multiIf is
// type-checked, so the time-of-day ones read toDateTime(t), which a Date argument also passes.
const DATE_PARTS: [string, string, boolean?][] = [
  ['year', 'toYear'],
  ['month', 'toMonth'],
  ['day', 'toDayOfMonth'],
  ['hour', 'toHour', true],
  ['minute', 'toMinute', true],
  ['second', 'toSecond', true],
  ['dow', 'toDayOfWeek'],
  ['doy', 'toDayOfYear'],
  ['quarter', 'toQuarter'],
]

// toDecimal's scale is part of the type name: a whole-number literal, 0-18 for Decimal64.
function scale(printed: string): string {
  if (!/^\d+$/.test(printed) || Number(printed) > 18)
    throw new Error('the scale must be a number from 0 to 18')
  return printed
}

const n = fixed

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
  toIntervalQuarter: fixed('toIntervalQuarter', 1, 1, 'IntervalQuarter'),
  toIntervalYear: fixed('toIntervalYear', 1, 1, 'IntervalYear'),
  // conversions (PostHog's clickhouse/conversions.py; `_toInt64` and the like are its internal names)
  toIntOrZero: n('toInt64OrZero', 1, 1, 'Int64'),
  toFloatOrZero: n('toFloat64OrZero', 1, 1, 'Float64'),
  ...Object.fromEntries(
    ['Int8', 'Int16', 'Int32', 'Int64', 'UInt64'].map((t) => [`_to${t}`, n(`to${t}`, 1, 1, t)]),
  ),
  _toDate: n('toDate', 1, 1, 'Date'),
  // toString never fails, so its nullable form is PostHog's accurateCastOrNull(x, 'Nullable(String)')
  toNullableString: {
    min: 1,
    max: 1,
    print: (a) => `toNullable(toString(${a[0]}))`,
    ret: 'Nullable(String)',
  },
  ...each(
    ['UInt8', 'UInt16', 'UInt32', 'UInt64', 'Int8', 'Int16', 'Int32', 'Int64'].map(
      (t) => `reinterpretAs${t}`,
    ),
    1,
    1,
    'UInt64',
  ),
  ...each(['reinterpretAsFloat32', 'reinterpretAsFloat64'], 1, 1, 'Float64'),
  ...Object.fromEntries(
    ['Int8', 'Int16', 'Int32', 'Int64', 'UInt8', 'UInt16', 'UInt32', 'UInt64'].flatMap((t) => [
      [`to${t}`, n(`to${t}`, 1, 1, t)],
      [`to${t}OrNull`, n(`to${t}OrNull`, 1, 1, `Nullable(${t})`)],
      [`to${t}OrZero`, n(`to${t}OrZero`, 1, 1, t)],
    ]),
  ),
  ...each(['toFloat32', 'toFloat64'], 1, 1, 'Float64'),
  ...each(['toFloat32OrNull', 'toFloat64OrNull'], 1, 1, 'Nullable(Float64)'),
  ...each(['toFloat32OrZero', 'toFloat64OrZero'], 1, 1, 'Float64'),
  ...each(['toDecimal32', 'toDecimal64', 'toDecimal128'], 2, 2, 'Decimal'),
  toDateOrNull: n('toDateOrNull', 1, 1, 'Nullable(Date)'),
  toDateOrZero: n('toDateOrZero', 1, 1, 'Date'),
  toDateTimeOrNull: n('toDateTimeOrNull', 1, 1, 'Nullable(DateTime)'),
  toDateTimeOrZero: n('toDateTimeOrZero', 1, 1, 'DateTime'),
  parseDateTimeBestEffort: n('parseDateTimeBestEffort', 1, 2, 'DateTime'),
  parseDateTimeBestEffortOrNull: n('parseDateTimeBestEffortOrNull', 1, 2, 'Nullable(DateTime)'),
  parseDateTimeBestEffortOrZero: n('parseDateTimeBestEffortOrZero', 1, 2, 'DateTime'),
  toFixedString: n('toFixedString', 2, 2, 'String'),
  toDecimal32OrNull: n('toDecimal32OrNull', 2, 2, 'Nullable(Decimal)'),
  toDecimal64OrNull: n('toDecimal64OrNull', 2, 2, 'Nullable(Decimal)'),
  toDecimal128OrNull: n('toDecimal128OrNull', 2, 2, 'Nullable(Decimal)'),
  // PostHog's clickhouse/conversions.py: NULL where the value does not convert
  toDecimal: {
    min: 2,
    max: 2,
    print: (a) => `accurateCastOrNull(${a[0]}, 'Decimal64(${scale(a[1]!)})')`,
    ret: 'Nullable(Decimal64)',
  },
  toFloatOrDefault: n('toFloat64OrDefault', 1, 2, 'Float64'),
  toUUIDOrDefault: n('toUUIDOrDefault', 2, 2, 'UUID'),
  toBool: n('toBool', 1, 1, 'Bool'),
  toJSONString: n('toJSONString', 1, 1, 'String'),
  _toUInt128: n('toUInt128', 1, 1, 'UInt128'),
  ...each(
    ['reinterpretAsUInt128', 'reinterpretAsUInt256', 'reinterpretAsInt128', 'reinterpretAsInt256'],
    1,
    1,
    'Unknown',
  ),
  reinterpretAsUUID: n('reinterpretAsUUID', 1, 1, 'UUID'),
  // parseDateTime(text, format[, zone]) and the other zone-aware ones read in the project's zone
  parseDateTime: { min: 2, max: 3, print: zoned('parseDateTimeOrNull', 2), ret: 'Nullable(DateTime)' },
  toDateTimeUS: {
    min: 1,
    max: 2,
    print: zoned('parseDateTime64BestEffortUSOrNull', 2),
    ret: 'Nullable(DateTime64)',
  },
  toDateTime64: { min: 1, max: 3, print: zoned('toDateTime64', 2), ret: 'DateTime64' },
  UUIDv7ToDateTime: { min: 1, max: 1, print: zoned('UUIDv7ToDateTime', 1), ret: 'DateTime64' },
  ...each(
    [
      'toRelativeYearNum',
      'toRelativeQuarterNum',
      'toRelativeMonthNum',
      'toRelativeWeekNum',
      'toRelativeDayNum',
      'toRelativeHourNum',
      'toRelativeMinuteNum',
      'toRelativeSecondNum',
    ],
    1,
    2,
    'UInt32',
  ),
  toYYYYMMDDhhmmss: n('toYYYYMMDDhhmmss', 1, 2, 'UInt64'),
  timeSlot: n('timeSlot', 1, 1, 'DateTime'),
  timeSlots: n('timeSlots', 2, 3, 'Array(DateTime)'),
  // PostgreSQL's names: date_part('unit', t) (NULL for another unit), to_timestamp, to_char, timezone
  date_part: {
    min: 2,
    max: 2,
    print: (a) =>
      `multiIf(${DATE_PARTS.map(([part, fn, time]) => `${a[0]} = '${part}', ${fn}(${time ? `toDateTime(${a[1]})` : a[1]})`).join(', ')}, NULL)`,
    ret: 'Nullable(UInt16)',
  },
  to_timestamp: {
    min: 1,
    max: 2,
    print: (a, _p, c) => `toDateTime(${a[0]}, ${a[1] ?? escapeString(c.tz)})`,
    ret: 'DateTime',
  },
  to_char: { min: 2, max: 3, print: zoned('formatDateTime', 2), ret: 'String' },
  timezone: { min: 2, max: 2, print: (a) => `toTimeZone(${a[1]}, ${a[0]})`, ret: 'DateTime' },
  tumble: n('tumble', 2, 3, 'Unknown'),
  tumbleStart: n('tumbleStart', 2, 3, 'DateTime'),
  tumbleEnd: n('tumbleEnd', 2, 3, 'DateTime'),
  hop: n('hop', 3, 4, 'Unknown'),
  hopStart: n('hopStart', 3, 4, 'DateTime'),
  hopEnd: n('hopEnd', 3, 4, 'DateTime'),
  toStartOfInterval: n('toStartOfInterval', 2, 3, first),
  // PostHog's clickhouse/datetime.py
  timeZoneOf: n('timeZoneOf', 1, 1, 'String'),
  timeZoneOffset: n('timeZoneOffset', 1, 1, 'Int32'),
  // Burrow's timestamps are DateTime (seconds): these take a DateTime64, as PostHog's columns are
  toUnixTimestamp64Milli: {
    min: 1,
    max: 1,
    print: (a) => `toUnixTimestamp64Milli(toDateTime64(${a[0]}, 3))`,
    ret: 'Int64',
  },
  toStartOfSecond: {
    min: 1,
    max: 1,
    print: (a) => `toStartOfSecond(toDateTime64(${a[0]}, 3))`,
    ret: 'DateTime64',
  },
  fromUnixTimestamp64Milli: n('fromUnixTimestamp64Milli', 1, 1, 'DateTime64'),
  toLastDayOfMonth: n('toLastDayOfMonth', 1, 1, 'Date'),
  toLastDayOfWeek: n('toLastDayOfWeek', 1, 2, 'Date'),
  toStartOfTenMinutes: n('toStartOfTenMinutes', 1, 1, 'DateTime'),
  toTime: n('toTime', 1, 1, 'Time'),
  ...each(['toWeek', 'toYearWeek'], 1, 3, 'UInt32'),
  age: n('age', 3, 3, 'Int64'),
  ...each(['timeStampAdd', 'timeStampSub'], 2, 2, first),
  ...each(['addQuarters', 'subtractQuarters'], 2, 2, first),
  dateName: n('dateName', 2, 2, 'String'),
  monthName: n('monthName', 1, 1, 'String'),
  toModifiedJulianDay: n('toModifiedJulianDayOrNull', 1, 1, 'Nullable(Int32)'),
  fromModifiedJulianDay: n('fromModifiedJulianDayOrNull', 1, 1, 'Nullable(Date)'),
  dateTrunc: n('dateTrunc', 2, 3, 'DateTime'),
  date_trunc: n('dateTrunc', 2, 3, 'DateTime'),
  make_date: n('makeDate', 3, 3, 'Date'),
  make_timestamp: { min: 6, max: 7, print: zoned('makeDateTime', 6), ret: 'DateTime' },
  make_interval: {
    min: 6,
    max: 6,
    // parenthesised: `t - make_interval(...)` subtracts the whole sum
    print: (a) =>
      `(${['Year', 'Month', 'Day', 'Hour', 'Minute', 'Second'].map((u, i) => `toInterval${u}(${a[i]})`).join(' + ')})`,
    ret: 'Unknown',
  },
  // date_bin(interval, t, origin): toStartOfInterval with an origin, in the project's zone
  date_bin: {
    min: 3,
    max: 3,
    print: (a, _p, c) => `toStartOfInterval(${a[1]}, ${a[0]}, ${a[2]}, ${escapeString(c.tz)})`,
    ret: 'DateTime',
  },
}

import { escapeString } from './escape.ts'
import { agg, aggs, each, type FnDef, fixed, first, INF, zoned } from './function-defs.ts'
import { searchFrom } from './functions-scalar.ts'

// More of PostHog's function list (posthog/hogql/functions/clickhouse/*.py, aggregations.py), as
// ClickHouse names them: functions both 18.16 and current releases run (checked against
// system.functions of both). Those 18.16 lacks are in functions-newer.ts.

const n = fixed

// date_part's units and the function that reads each (PostHog's list); every branch of multiIf is
// type-checked, and 18.16 reads the time of day of a DateTime only.
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

/** Functions every supported server runs. */
export const EVERYWHERE_FUNCTIONS: Record<string, FnDef> = {
  // arrays
  arrayEnumerateUniq: n('arrayEnumerateUniq', 1, INF, 'Array(UInt32)'),
  arrayEnumerateDense: n('arrayEnumerateDense', 1, 1, 'Array(UInt32)'),
  arrayPopBack: n('arrayPopBack', 1, 1, first),
  arrayPopFront: n('arrayPopFront', 1, 1, first),
  arrayPushBack: n('arrayPushBack', 2, 2, first),
  arrayPushFront: n('arrayPushFront', 2, 2, first),
  arrayResize: n('arrayResize', 2, 3, first),
  arrayDifference: n('arrayDifference', 1, 1, first),
  arrayIntersect: n('arrayIntersect', 1, INF, first),
  arrayCumSum: n('arrayCumSum', 1, INF, 'Unknown'),
  arrayCumSumNonNegative: n('arrayCumSumNonNegative', 1, INF, 'Unknown'),
  // arrayReduce('agg', ...): the resolver checks that the name is an allow-listed aggregate.
  arrayReduce: n('arrayReduce', 2, INF, 'Unknown'),
  isEmpty: n('empty', 1, 1, 'UInt8'),
  isNotEmpty: n('notEmpty', 1, 1, 'UInt8'),
  // maths and bits
  ...each(['exp2', 'exp10', 'cbrt', 'erf', 'erfc', 'lgamma', 'tgamma'], 1, 1, 'Float64'),
  ...Object.fromEntries(
    ['sin', 'cos', 'tan', 'asin', 'acos', 'atan'].map((f) => [f, { ...n(f, 1, 1, 'Float64'), ci: true }]),
  ),
  e: n('e', 0, 0, 'Float64'),
  pi: n('pi', 0, 0, 'Float64'),
  ...each(['intExp2', 'intExp10', 'roundToExp2', 'roundDuration', 'roundAge'], 1, 1, 'UInt64'),
  gcd: n('gcd', 2, 2, first),
  lcm: n('lcm', 2, 2, first),
  trunc: { ...n('trunc', 1, 2, first), ci: true },
  truncate: n('truncate', 1, 2, first),
  ceiling: { ...n('ceil', 1, 2, first), ci: true },
  isInfinite: n('isInfinite', 1, 1, 'UInt8'),
  ...each(
    ['bitAnd', 'bitOr', 'bitXor', 'bitShiftLeft', 'bitShiftRight', 'bitRotateLeft', 'bitRotateRight'],
    2,
    2,
    first,
  ),
  bitNot: n('bitNot', 1, 1, first),
  bitTest: n('bitTest', 2, 2, 'UInt8'),
  bitTestAll: n('bitTestAll', 2, INF, 'UInt8'),
  bitTestAny: n('bitTestAny', 2, INF, 'UInt8'),
  // strings
  lcase: { ...n('lower', 1, 1, first), ci: true },
  ucase: { ...n('upper', 1, 1, first), ci: true },
  // Burrow's other names of substring (PostHog has neither), with its three arguments
  substr: { ...n('substring', 3, 3, 'String'), ci: true },
  mid: { ...n('substring', 3, 3, 'String'), ci: true },
  reverseUTF8: n('reverseUTF8', 1, 1, 'String'),
  positionUTF8: searchFrom('positionUTF8'),
  positionCaseInsensitiveUTF8: searchFrom('positionCaseInsensitiveUTF8'),
  // PostHog prints locate, which its servers (ClickHouse 24.3 and later) read in MySQL's order,
  // needle first; 18.16's locate is position under another name, haystack first. position with
  // the two swapped answers PostHog's way on both.
  locate: { ...searchFrom('position', true), ci: true },
  appendTrailingCharIfAbsent: n('appendTrailingCharIfAbsent', 2, 2, 'String'),
  alphaTokens: n('alphaTokens', 1, 1, 'Array(String)'),
  hex: n('hex', 1, 1, 'String'),
  unhex: n('unhex', 1, 1, 'String'),
  formatReadableSize: n('formatReadableSize', 1, 1, 'String'),
  bar: n('bar', 4, 4, 'String'),
  transform: n('transform', 3, 4, 'Unknown'),
  CHAR_LENGTH: n('lengthUTF8', 1, 1, 'UInt64'),
  CHARACTER_LENGTH: n('lengthUTF8', 1, 1, 'UInt64'),
  // hashes
  ...each(['MD5', 'SHA1', 'SHA224', 'SHA256', 'sipHash128', 'murmurHash3_128'], 1, 1, 'String'),
  ...each(
    ['halfMD5', 'farmHash64', 'metroHash64', 'intHash64', 'murmurHash2_64', 'murmurHash3_64'],
    1,
    INF,
    'UInt64',
  ),
  ...each(['intHash32', 'murmurHash2_32', 'murmurHash3_32'], 1, INF, 'UInt32'),
  URLHash: n('URLHash', 1, 2, 'UInt64'),
  jumpConsistentHash: n('jumpConsistentHash', 2, 2, 'UInt32'),
  // URLs
  ...each(
    [
      'cutFragment',
      'cutQueryString',
      'cutQueryStringAndFragment',
      'cutToFirstSignificantSubdomain',
      'cutWWW',
      'decodeURLComponent',
      'firstSignificantSubdomain',
      'fragment',
      'pathFull',
      'queryString',
      'queryStringAndFragment',
    ],
    1,
    1,
    'String',
  ),
  ...each(
    ['extractURLParameterNames', 'extractURLParameters', 'URLHierarchy', 'URLPathHierarchy'],
    1,
    1,
    'Array(String)',
  ),
  cutURLParameter: n('cutURLParameter', 2, 2, 'String'),
  // IPs, MACs and UUIDs
  ...each(
    ['IPv4NumToString', 'IPv4NumToStringClassC', 'IPv6NumToString', 'MACNumToString', 'UUIDNumToString'],
    1,
    1,
    'String',
  ),
  ...each(['IPv4StringToNum', 'MACStringToNum', 'MACStringToOUI'], 1, 1, 'UInt64'),
  ...each(['IPv4ToIPv6', 'IPv6StringToNum', 'UUIDStringToNum'], 1, 1, 'String'),
  generateUUIDv4: n('generateUUIDv4', 0, 0, 'UUID'),
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
  convertCharset: n('convertCharset', 3, 3, 'String'),
  // PostgreSQL's split_part: the idx-th piece (from 1; negative from the end), '' past the last
  split_part: {
    min: 3,
    max: 3,
    print: (a) =>
      `if(length(splitByString(${a[1]}, ${a[0]})) >= ${a[2]}, arrayElement(splitByString(${a[1]}, ${a[0]}), ${a[2]}), '')`,
    ret: 'String',
  },
  md5: { min: 1, max: 1, print: (a) => `hex(MD5(${a[0]}))`, ret: 'String' },
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
  // PostHog's clickhouse/datetime.py
  ...each(['rowNumberInBlock', 'rowNumberInAllBlocks'], 0, 0, 'UInt64'),
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
  // rows and geometry
  runningDifference: n('runningDifference', 1, 1, first),
  runningDifferenceStartingWithFirstValue: n('runningDifferenceStartingWithFirstValue', 1, 1, first),
  greatCircleDistance: n('greatCircleDistance', 4, 4, 'Float64'),
  rand64: n('rand64', 0, 1, 'UInt64'),
  // aggregates
  anyHeavy: agg('anyHeavy', 1, 1, first),
  groupBitAnd: agg('groupBitAnd', 1, 1, first),
  groupBitOr: agg('groupBitOr', 1, 1, first),
  groupBitXor: agg('groupBitXor', 1, 1, first),
  groupArrayInsertAt: agg('groupArrayInsertAt', 2, 2, (t) => `Array(${t[0] ?? 'Unknown'})`, [0, 2]),
  histogram: agg('histogram', 1, 1, 'Array(Tuple(Float64, Float64, Float64))', [1, 1]),
  maxIntersections: agg('maxIntersections', 2, 2, 'UInt64'),
  maxIntersectionsPosition: agg('maxIntersectionsPosition', 2, 2, first),
  ...aggs(['medianExact', 'medianTDigest', 'medianTiming', 'medianDeterministic'], 1, 2, 'Float64'),
  ...aggs(['medianExactWeighted', 'medianTDigestWeighted', 'medianTimingWeighted'], 2, 2, 'Float64'),
  ...aggs(
    ['quantileDeterministic', 'quantileExactWeighted', 'quantileTDigestWeighted', 'quantileTimingWeighted'],
    2,
    2,
    'Float64',
    [1, 1],
  ),
  ...aggs(['quantilesExact', 'quantilesTDigest', 'quantilesTiming'], 1, 1, 'Array(Float64)', [1, INF]),
  ...aggs(
    [
      'quantilesExactWeighted',
      'quantilesTDigestWeighted',
      'quantilesTimingWeighted',
      'quantilesDeterministic',
    ],
    2,
    2,
    'Array(Float64)',
    [1, INF],
  ),
  sumKahan: agg('sumKahan', 1, 1, 'Float64'),
  // PostHog's aggregations.py: SQL-style names for ClickHouse aggregates
  countDistinct: agg('uniqExact', 1, 1, 'UInt64'),
  countDistinctIf: agg('uniqExactIf', 2, 2, 'UInt64'),
  array_agg: agg('groupArray', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`),
  string_agg: { ...agg('', 2, 2, 'String'), print: (a) => `arrayStringConcat(groupArray(${a[0]}), ${a[1]})` },
  groupUniqArrayArray: agg('groupUniqArrayArray', 1, 1, first, [0, 1]),
  sumWithOverflow: agg('sumWithOverflow', 1, 1, first),
  uniqUpTo: agg('uniqUpTo', 1, INF, 'UInt64', [1, 1]),
  sumMap: agg('sumMap', 1, 2, 'Tuple(Array(Unknown), Array(Unknown))'),
  // PostHog's own (posthog/hogql/functions/...): version text as an array of numbers that sorts
  // as versions do; the first run of dot-separated digits counts, anything after it is ignored.
  sortableSemVer: {
    min: 1,
    max: 1,
    print: (a) =>
      `arrayMap(x -> toInt64OrZero(x), splitByChar('.', extract(assumeNotNull(${a[0]}), '(\\\\d+(\\\\.\\\\d+)+)')))`,
    ret: 'Array(Int64)',
    ci: true,
  },
  // PostHog's HogQLX tag for a sparkline chart: the tuple its UI draws from
  // ('__hx_tag', 'Sparkline', 'data', <values>), as `<Sparkline data={...} />` resolves.
  sparkline: {
    min: 1,
    max: 1,
    print: (a) => `tuple('__hx_tag', 'Sparkline', 'data', ${a[0]})`,
    ret: (t) => `Tuple(String, String, String, ${t[0] ?? 'Unknown'})`,
  },
}

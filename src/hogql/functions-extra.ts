import { escapeString } from './escape.ts'
import { agg, type FnDef, type FnPrinter, first, fixed, INF } from './function-defs.ts'

// More of PostHog's function list (posthog/hogql/functions/clickhouse/*.py, aggregations.py), as
// ClickHouse names them. EVERYWHERE: functions both 18.16 and current releases run (checked against
// system.functions of both). NEWER: functions 18.16 lacks; the resolver refuses them with a 400
// naming the server's release when the query is compiled for one older than `since`.

const n = (name: string, min: number, max: number, ret?: FnDef['ret']) => fixed(name, min, max, ret)
const aggs = (names: string[], min: number, max: number, ret: FnDef['ret'], params?: [number, number]) =>
  Object.fromEntries(names.map((name) => [name, agg(name, min, max, ret, params)]))
const each = (names: string[], min: number, max: number, ret?: FnDef['ret']) =>
  Object.fromEntries(names.map((name) => [name, n(name, min, max, ret)]))

// `f(args..., '<project zone>')` unless the zone (argument `zoneAt`, from 0) is given; a DateTime64
// precision left out before it is 3, the milliseconds Burrow's timestamps keep.
const zoned =
  (name: string, zoneAt: number): FnPrinter =>
  (a, _p, ctx) => {
    if (a.length > zoneAt) return `${name}(${a.join(', ')})`
    const filled = [...a]
    while (filled.length < zoneAt) filled.push('3')
    return `${name}(${[...filled, escapeString(ctx.tz)].join(', ')})`
  }

// toDecimal's scale is part of the type name: a whole-number literal, 0-18 for Decimal64.
function scale(printed: string): string {
  if (!/^\d+$/.test(printed) || Number(printed) > 18)
    throw new Error('the scale must be a number from 0 to 18')
  return printed
}

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
  ...each(
    ['exp2', 'exp10', 'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'cbrt', 'erf', 'erfc', 'lgamma', 'tgamma'],
    1,
    1,
    'Float64',
  ),
  e: n('e', 0, 0, 'Float64'),
  pi: n('pi', 0, 0, 'Float64'),
  ...each(['intExp2', 'intExp10', 'roundToExp2', 'roundDuration', 'roundAge'], 1, 1, 'UInt64'),
  gcd: n('gcd', 2, 2, first),
  lcm: n('lcm', 2, 2, first),
  trunc: n('trunc', 1, 2, first),
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
  substr: { ...n('substring', 2, 3, 'String'), ci: true },
  mid: { ...n('substring', 2, 3, 'String'), ci: true },
  reverseUTF8: n('reverseUTF8', 1, 1, 'String'),
  positionUTF8: n('positionUTF8', 2, 2, 'UInt64'),
  positionCaseInsensitiveUTF8: n('positionCaseInsensitiveUTF8', 2, 2, 'UInt64'),
  locate: { ...n('position', 2, 2, 'UInt64'), ci: true },
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

/** Functions 18.16 lacks (each gets `since: NEWER_FUNCTIONS_SINCE`). */
export const NEWER_FUNCTIONS: Record<string, FnDef> = {
  isValidJSON: n('isValidJSON', 1, 1, 'UInt8'),
  JSONHas: n('JSONHas', 1, INF, 'UInt8'),
  JSONLength: n('JSONLength', 1, INF, 'UInt64'),
  JSONArrayLength: n('JSONArrayLength', 1, INF, 'Nullable(UInt64)'),
  JSONType: n('JSONType', 1, INF, 'String'),
  JSONExtract: n('JSONExtract', 2, INF, 'Unknown'),
  JSONExtractUInt: n('JSONExtractUInt', 1, INF, 'UInt64'),
  JSONExtractInt: n('JSONExtractInt', 1, INF, 'Int64'),
  JSONExtractFloat: n('JSONExtractFloat', 1, INF, 'Float64'),
  JSONExtractBool: n('JSONExtractBool', 1, INF, 'UInt8'),
  JSONExtractString: n('JSONExtractString', 1, INF, 'String'),
  JSONExtractKey: n('JSONExtractKey', 1, INF, 'String'),
  JSONExtractKeys: n('JSONExtractKeys', 1, INF, 'Array(String)'),
  JSONExtractRaw: n('JSONExtractRaw', 1, INF, 'String'),
  JSONExtractArrayRaw: n('JSONExtractArrayRaw', 1, INF, 'Array(String)'),
  JSONExtractKeysAndValues: n('JSONExtractKeysAndValues', 1, 3, 'Unknown'),
  JSONExtractKeysAndValuesRaw: n('JSONExtractKeysAndValuesRaw', 1, INF, 'Array(Tuple(String, String))'),
  JSON_VALUE: n('JSON_VALUE', 2, INF, 'String'),
  arrayZip: n('arrayZip', 2, INF, 'Unknown'),
  arrayAUC: n('arrayAUC', 2, 2, 'Float64'),
  arrayFill: n('arrayFill', 2, INF, 'Unknown'),
  arrayReverseFill: n('arrayReverseFill', 2, INF, 'Unknown'),
  arraySplit: n('arraySplit', 2, INF, 'Unknown'),
  arrayReverseSplit: n('arrayReverseSplit', 2, INF, 'Unknown'),
  arrayRotateLeft: n('arrayRotateLeft', 2, 2, first),
  arrayRotateRight: n('arrayRotateRight', 2, 2, first),
  arrayWithConstant: n('arrayWithConstant', 2, 2, 'Unknown'),
  arrayProduct: n('arrayProduct', 1, 1, 'Float64'),
  arrayFold: n('arrayFold', 3, INF, 'Unknown'),
  // PostHog's clickhouse/arrays.py
  hasSubstr: n('hasSubstr', 2, 2, 'UInt8'),
  arrayFlatten: n('arrayFlatten', 1, 1, 'Unknown'),
  arrayCompact: n('arrayCompact', 1, 1, first),
  arrayLast: n('arrayLast', 2, INF, 'Unknown'),
  arrayLastIndex: n('arrayLastIndex', 2, INF, 'UInt32'),
  ...each(['arrayMin', 'arrayMax'], 1, 2, 'Unknown'),
  arrayAvg: n('arrayAvg', 1, 2, 'Float64'),
  // PostHog's clickhouse/arithmetic.py
  ...each(['moduloOrZero', 'positiveModulo'], 2, 2, first),
  ...each(['multiplyDecimal', 'divideDecimal'], 2, 3, 'Decimal'),
  // PostHog's clickhouse/mathematical.py
  ...each(['cosh', 'acosh', 'sinh', 'asinh', 'atanh', 'log1p'], 1, 1, 'Float64'),
  ...each(['atan2', 'hypot'], 2, 2, 'Float64'),
  sign: { ...n('sign', 1, 1, 'Int8'), ci: true },
  degrees: { ...n('degrees', 1, 1, 'Float64'), ci: true },
  radians: { ...n('radians', 1, 1, 'Float64'), ci: true },
  factorial: { ...n('factorial', 1, 1, 'UInt64'), ci: true },
  width_bucket: n('width_bucket', 4, 4, 'UInt64'),
  roundBankers: n('roundBankers', 1, 2, first),
  roundDown: n('roundDown', 2, 2, first),
  max2: n('max2', 2, 2, 'Float64'),
  min2: n('min2', 2, 2, 'Float64'),
  base64Encode: n('base64Encode', 1, 1, 'String'),
  base64Decode: n('base64Decode', 1, 1, 'String'),
  tryBase64Decode: n('tryBase64Decode', 1, 1, 'String'),
  encodeURLComponent: n('encodeURLComponent', 1, 1, 'String'),
  leftPad: n('leftPad', 2, 3, 'String'),
  rightPad: n('rightPad', 2, 3, 'String'),
  // characters, not bytes, as PostHog maps them
  left: n('leftUTF8', 2, 2, 'String'),
  right: n('rightUTF8', 2, 2, 'String'),
  // PostHog's clickhouse/strings.py
  ...each(['leftPadUTF8', 'rightPadUTF8'], 2, 3, 'String'),
  ...each(['lpad', 'rpad'], 3, 3, 'String'),
  repeat: n('repeat', 2, 2, 'String'),
  isValidUTF8: n('isValidUTF8', 1, 1, 'UInt8'),
  ascii: { ...n('ascii', 1, 1, 'Int32'), ci: true },
  ...each(
    [
      'toValidUTF8',
      'base58Encode',
      'base58Decode',
      'tryBase58Decode',
      'encodeXMLComponent',
      'decodeXMLComponent',
      'extractTextFromHTML',
      'regexpQuoteMeta',
    ],
    1,
    1,
    'String',
  ),
  ...each(['format', 'concatWithSeparator'], 2, INF, 'String'),
  ...each(
    [
      'multiSearchAny',
      'multiSearchAnyUTF8',
      'multiSearchAnyCaseInsensitive',
      'multiSearchAnyCaseInsensitiveUTF8',
      'multiSearchFirstIndex',
      'multiSearchFirstIndexUTF8',
      'multiSearchFirstIndexCaseInsensitive',
      'multiSearchFirstIndexCaseInsensitiveUTF8',
      'multiSearchFirstPosition',
      'multiSearchFirstPositionUTF8',
      'multiSearchFirstPositionCaseInsensitive',
      'multiSearchFirstPositionCaseInsensitiveUTF8',
      'multiMatchAny',
      'multiMatchAnyIndex',
      'countMatches',
      'countMatchesCaseInsensitive',
      'hasSubsequence',
      'hasSubsequenceCaseInsensitive',
      'hasSubsequenceUTF8',
      'hasSubsequenceCaseInsensitiveUTF8',
      'hasToken',
      'hasTokenCaseInsensitive',
      'hasTokenOrNull',
      'hasTokenCaseInsensitiveOrNull',
      'hasAllTokens',
      'hasAnyTokens',
    ],
    2,
    2,
    'UInt64',
  ),
  ...each(
    [
      'multiSearchAllPositions',
      'multiSearchAllPositionsUTF8',
      'multiSearchAllPositionsCaseInsensitive',
      'multiSearchAllPositionsCaseInsensitiveUTF8',
      'multiMatchAllIndices',
    ],
    2,
    2,
    'Array(UInt64)',
  ),
  ...each(['multiFuzzyMatchAny', 'multiFuzzyMatchAnyIndex'], 3, 3, 'UInt64'),
  multiFuzzyMatchAllIndices: n('multiFuzzyMatchAllIndices', 3, 3, 'Array(UInt64)'),
  ...each(
    [
      'ngramDistance',
      'ngramDistanceCaseInsensitive',
      'ngramDistanceUTF8',
      'ngramDistanceCaseInsensitiveUTF8',
      'ngramSearch',
      'ngramSearchCaseInsensitive',
      'ngramSearchUTF8',
      'ngramSearchCaseInsensitiveUTF8',
    ],
    2,
    2,
    'Float32',
  ),
  ...each(['countSubstringsCaseInsensitive', 'countSubstringsCaseInsensitiveUTF8'], 2, 3, 'UInt64'),
  ...each(
    ['extractAllGroups', 'extractAllGroupsHorizontal', 'extractAllGroupsVertical'],
    2,
    2,
    'Array(Array(String))',
  ),
  extractGroups: n('extractGroups', 2, 2, 'Array(String)'),
  regexpExtract: n('regexpExtract', 2, 3, 'String'),
  ...each(['translate', 'translateUTF8'], 3, 3, 'String'),
  splitByRegexp: n('splitByRegexp', 2, 3, 'Array(String)'),
  ...each(['splitByWhitespace', 'splitByNonAlpha'], 1, 2, 'Array(String)'),
  ngrams: n('ngrams', 2, 2, 'Array(String)'),
  tokens: n('tokens', 1, 1, 'Array(String)'),
  initcap: n('initcap', 1, 1, 'String'),
  countSubstrings: n('countSubstrings', 2, 3, 'UInt64'),
  toDecimal32OrNull: n('toDecimal32OrNull', 2, 2, 'Nullable(Decimal)'),
  toDecimal64OrNull: n('toDecimal64OrNull', 2, 2, 'Nullable(Decimal)'),
  toDecimal128OrNull: n('toDecimal128OrNull', 2, 2, 'Nullable(Decimal)'),
  tumble: n('tumble', 2, 3, 'Unknown'),
  tumbleStart: n('tumbleStart', 2, 3, 'DateTime'),
  tumbleEnd: n('tumbleEnd', 2, 3, 'DateTime'),
  hop: n('hop', 3, 4, 'Unknown'),
  hopStart: n('hopStart', 3, 4, 'DateTime'),
  hopEnd: n('hopEnd', 3, 4, 'DateTime'),
  groupArraySample: agg('groupArraySample', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [1, 2]),
  groupArrayMovingAvg: agg('groupArrayMovingAvg', 1, 1, 'Array(Float64)', [0, 1]),
  groupArrayMovingSum: agg('groupArrayMovingSum', 1, 1, 'Unknown', [0, 1]),
  deltaSum: agg('deltaSum', 1, 1, first),
  skewPop: agg('skewPop', 1, 1, 'Float64'),
  skewSamp: agg('skewSamp', 1, 1, 'Float64'),
  kurtPop: agg('kurtPop', 1, 1, 'Float64'),
  kurtSamp: agg('kurtSamp', 1, 1, 'Float64'),
  entropy: agg('entropy', 1, 1, 'Float64'),
  minMap: agg('minMap', 1, 2, 'Tuple(Array(Unknown), Array(Unknown))'),
  maxMap: agg('maxMap', 1, 2, 'Tuple(Array(Unknown), Array(Unknown))'),
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
  simpleLinearRegression: agg('simpleLinearRegression', 2, 2, 'Tuple(Float64, Float64)'),
  // PostHog's aggregations.py
  avgWeighted: agg('avgWeighted', 2, 2, 'Float64'),
  // The -OrNull combinator: NULL over no rows, as PostHog prints them
  avgArray: agg('avgArrayOrNull', 1, 1, 'Nullable(Float64)'),
  medianArray: agg('medianArrayOrNull', 1, 1, 'Nullable(Float64)'),
  ...aggs(['groupBitmap', 'groupBitmapAnd', 'groupBitmapOr', 'groupBitmapXor'], 1, 1, 'UInt64'),
  deltaSumTimestamp: agg('deltaSumTimestamp', 2, 2, first),
  ...aggs(['medianExactLow', 'medianExactHigh', 'medianBFloat16'], 1, 1, 'Float64'),
  ...aggs(['contingency', 'cramersV', 'cramersVBiasCorrected', 'theilsU'], 2, 2, 'Float64'),
  json_agg: { ...agg('', 1, 1, 'String'), print: (a) => `toJSONString(groupArray(${a[0]}))` },
  every: { ...agg('', 1, 1, 'Bool'), print: (a) => `toBool(min(${a[0]}))` },
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
}

/** The release Burrow is tested with that runs NEWER_FUNCTIONS (18.16 runs none of them). */
export const NEWER_FUNCTIONS_SINCE = '26.1'

// One call of each function added from PostHog's list (src/hogql/functions-extra.ts) with what
// ClickHouse answers, written out from the ClickHouse documentation's definitions. Numbers compare
// as text: the servers quote 64-bit integers differently in JSON.
/** Functions every supported server runs: [HogQL, expected value as JSONCompact returns it]. */
export const EVERYWHERE_SAMPLES: [string, unknown][] = [
  ['arrayPushBack([1, 2], 3)', [1, 2, 3]],
  ['arrayPopFront([1, 2, 3])', [2, 3]],
  ['arrayResize([1], 3)', [1, 0, 0]],
  ['arrayDifference([1, 4, 9])', [0, 3, 5]],
  ['arrayCumSum([1, 2, 3])', [1, 3, 6]],
  ['arraySort(arrayIntersect([1, 2, 3], [2, 3, 4]))', [2, 3]],
  ['arrayEnumerateDense([10, 20, 10])', [1, 2, 1]],
  ["arrayReduce('max', [1, 5, 3])", 5],
  ["arrayReduce('uniqExact', [1, 1, 2])", '2'],
  ['gcd(12, 18)', 6],
  ['lcm(4, 6)', 12],
  ['intExp2(3)', '8'],
  ['bitAnd(12, 10)', 8],
  ['bitShiftLeft(1, 4)', 16],
  ['bitTest(5, 0)', 1],
  ['trunc(2.7)', 2],
  ['ceiling(2.1)', 3],
  ["lcase('AbC')", 'abc'],
  ["ucase('AbC')", 'ABC'],
  ["substr('hello', 2, 3)", 'ell'],
  ["locate('hello', 'l')", '3'],
  ["reverseUTF8('abc')", 'cba'],
  ["appendTrailingCharIfAbsent('a/b', '/')", 'a/b/'],
  ["alphaTokens('a1b2')", ['a', 'b']],
  ["hex('A')", '41'],
  ['formatReadableSize(1024)', '1.00 KiB'],
  ["transform(2, [1, 2], ['one', 'two'], 'other')", 'two'],
  ["hex(MD5('a'))", '0CC175B9C0F1B6A831C399E269772661'],
  ["cutQueryString('https://a.com/p?x=1')", 'https://a.com/p'],
  ["queryString('https://a.com/p?x=1#f')", 'x=1'],
  ["fragment('https://a.com/p?x=1#f')", 'f'],
  ["cutToFirstSignificantSubdomain('https://www.news.example.com/')", 'example.com'],
  ["extractURLParameterNames('https://a.com/?x=1&y=2')", ['x', 'y']],
  ["decodeURLComponent('a%20b')", 'a b'],
  ['IPv4NumToString(167772161)', '10.0.0.1'],
  ["IPv4StringToNum('10.0.0.1')", '167772161'],
  ["toInt32('42')", 42],
  ["toUInt8OrNull('x')", null],
  ["toFloat64OrZero('x')", 0],
  ["toString(toDecimal64('1.25', 2))", '1.25'],
  ["toDateOrNull('nope')", null],
  ["toString(parseDateTimeBestEffortOrNull('2024-01-02 03:04:05', 'UTC'))", '2024-01-02 03:04:05'],
  ["toRelativeDayNum(toDate('1970-01-11'))", 10],
  ['greatCircleDistance(toFloat64(0), toFloat64(0), toFloat64(0), toFloat64(0))', 0],
]

/** Aggregates every supported server runs, over (select number ... from numbers(5)) = 0..4. */
export const EVERYWHERE_AGGREGATES: [string, unknown][] = [
  ['groupBitOr(x)', 7],
  ['sumKahan(x)', 10],
  ['medianExact(x)', 2],
  ['quantileExactWeighted(0.5)(x, 1)', 2],
  ['uniqUpTo(3)(x)', 4],
  ['anyHeavy(1)', 1],
  ['countIf(DISTINCT x % 2, x > 0)', '2'],
]

/** Functions only current releases run (refused with a 400 on 18.16). */
export const NEWER_SAMPLES: [string, unknown][] = [
  ["JSONExtractInt('{\"a\": 5}', 'a')", '5'],
  ["JSONHas('{\"a\": 5}', 'a')", 1],
  ['JSONExtractString(\'{"a": "x"}\', \'a\')', 'x'],
  ["JSONLength('[1, 2, 3]')", '3'],
  ['isValidJSON(\'{"a": 1}\')', 1],
  [
    "arrayZip([1, 2], ['a', 'b'])",
    [
      [1, 'a'],
      [2, 'b'],
    ],
  ],
  ['max2(1, 2)', 2],
  ['min2(1, 2)', 1],
  ["base64Encode('abc')", 'YWJj'],
  ["leftPad('7', 3, '0')", '007'],
]

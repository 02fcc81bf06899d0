import { escapeString } from './escape.ts'
import { type FnDef, type FnPrinter, first, fixed, INF, isStringType } from './function-defs.ts'

// Allow-listed scalar functions: logic, conditionals, maths, strings, arrays and tuples.

// trim(LEADING 'x' FROM s) arrives as trimLeft(s, 'x'): the characters become a regex character
// class, so they must be a constant.
const trimP =
  (re: string): FnPrinter =>
  (a) => {
    if (a.length < 2) return `replaceRegexpAll(${a[0]}, ${escapeString(re)}, '')`
    const chars = /^'((?:[^'\\]|\\.)*)'$/.exec(a[1]!)?.[1]?.replace(/\\(.)/g, '$1')
    if (!chars) throw new Error('the characters to trim must be a non-empty constant string')
    const set = `[${chars.replace(/[\\\]^-]/g, '\\$&')}]+`
    return `replaceRegexpAll(${a[0]}, ${escapeString(re.replace(/\\s\+/g, set))}, '')`
  }

const caseWithExpression: FnPrinter = (a) => {
  // _caseWithExpression(x, when1, then1, ..., else)
  const [x, ...rest] = a
  const elseValue = rest.pop()
  const parts: string[] = []
  for (let i = 0; i + 1 < rest.length; i += 2) parts.push(`${x} = ${rest[i]}`, rest[i + 1]!)
  return `multiIf(${[...parts, elseValue].join(', ')})`
}

/**
 * position and its variants, with PostHog's arity (clickhouse/strings.py): haystack, needle and
 * an optional 1-based start. With `needleFirst` the call reads (needle, haystack[, start]) and prints them
 * in position's order.
 */
export function searchFrom(name: string, needleFirst = false): FnDef {
  return {
    min: 2,
    max: 3,
    ret: 'UInt64',
    print: (args) => {
      const a = needleFirst ? [args[1]!, args[0]!, ...args.slice(2)] : args
      return `${name}(${a.join(', ')})`
    },
  }
}

// arraySort([f,] a, b, ...) sorts `a` (by f's values when a lambda comes first): its type is a's.
const sortedArray = (t: string[]): string => t.find((x) => x.startsWith('Array(')) ?? 'Unknown'

/** Scalar functions by HogQL name. */
export const SCALAR_FUNCTIONS: Record<string, FnDef> = {
  // logic and comparison (operators arrive as nodes; these are for people who call them by name)
  not: { ...fixed('not', 1, 1, 'UInt8'), ci: true },
  and: fixed('and', 2, INF, 'UInt8'),
  or: fixed('or', 2, INF, 'UInt8'),
  xor: fixed('xor', 2, INF, 'UInt8'),
  equals: fixed('equals', 2, 2, 'UInt8'),
  notEquals: fixed('notEquals', 2, 2, 'UInt8'),
  less: fixed('less', 2, 2, 'UInt8'),
  greater: fixed('greater', 2, 2, 'UInt8'),
  lessOrEquals: fixed('lessOrEquals', 2, 2, 'UInt8'),
  greaterOrEquals: fixed('greaterOrEquals', 2, 2, 'UInt8'),
  like: fixed('like', 2, 2, 'UInt8'),
  notLike: fixed('notLike', 2, 2, 'UInt8'),
  ilike: { min: 2, max: 2, print: (a) => `lowerUTF8(${a[0]}) LIKE lowerUTF8(${a[1]})`, ret: 'UInt8' },
  notILike: { min: 2, max: 2, print: (a) => `lowerUTF8(${a[0]}) NOT LIKE lowerUTF8(${a[1]})`, ret: 'UInt8' },
  match: fixed('match', 2, 2, 'UInt8'),

  // conditionals and nulls
  if: { ...fixed('if', 3, 3, (t) => t[1] ?? 'Unknown'), ci: true },
  multiIf: fixed('multiIf', 3, INF, (t) => t[1] ?? 'Unknown'),
  _caseWithExpression: { min: 4, max: INF, print: caseWithExpression, ret: (t) => t[2] ?? 'Unknown' },
  coalesce: { ...fixed('coalesce', 1, INF, first), ci: true },
  ifNull: { ...fixed('ifNull', 2, 2, first), ci: true },
  nullIf: { ...fixed('nullIf', 2, 2, first), ci: true },
  isNull: { ...fixed('isNull', 1, 1, 'UInt8'), ci: true },
  isNotNull: { ...fixed('isNotNull', 1, 1, 'UInt8'), ci: true },
  assumeNotNull: fixed('assumeNotNull', 1, 1, first),
  toNullable: fixed('toNullable', 1, 1, first),

  // arithmetic and maths
  plus: fixed('plus', 2, 2, first),
  minus: fixed('minus', 2, 2, first),
  multiply: fixed('multiply', 2, 2, first),
  divide: fixed('divide', 2, 2, 'Float64'),
  intDiv: fixed('intDiv', 2, 2, 'Int64'),
  intDivOrZero: fixed('intDivOrZero', 2, 2, 'Int64'),
  modulo: fixed('modulo', 2, 2, first),
  negate: fixed('negate', 1, 1, first),
  abs: { ...fixed('abs', 1, 1, first), ci: true },
  round: { ...fixed('round', 1, 2, first), ci: true },
  floor: { ...fixed('floor', 1, 2, first), ci: true },
  ceil: { ...fixed('ceil', 1, 2, first), ci: true },
  sqrt: { ...fixed('sqrt', 1, 1, 'Float64'), ci: true },
  pow: { ...fixed('pow', 2, 2, 'Float64'), ci: true },
  power: { ...fixed('pow', 2, 2, 'Float64'), ci: true },
  exp: { ...fixed('exp', 1, 1, 'Float64'), ci: true },
  log: { ...fixed('log', 1, 1, 'Float64'), ci: true },
  ln: { ...fixed('log', 1, 1, 'Float64'), ci: true },
  log2: { ...fixed('log2', 1, 1, 'Float64'), ci: true },
  log10: { ...fixed('log10', 1, 1, 'Float64'), ci: true },
  least: { ...fixed('least', 2, 2, first), ci: true },
  greatest: { ...fixed('greatest', 2, 2, first), ci: true },
  isNaN: fixed('isNaN', 1, 1, 'UInt8'),
  isFinite: fixed('isFinite', 1, 1, 'UInt8'),
  // PostHog's test_mapping.py resolves RAND
  rand: { ...fixed('rand', 0, 0, 'UInt32'), ci: true },

  // strings
  length: { ...fixed('length', 1, 1, 'UInt64'), ci: true },
  lengthUTF8: fixed('lengthUTF8', 1, 1, 'UInt64'),
  empty: fixed('empty', 1, 1, 'UInt8'),
  notEmpty: fixed('notEmpty', 1, 1, 'UInt8'),
  // PostHog prints lower, upper, substring and position as ClickHouse's byte-wise functions
  // (clickhouse/strings.py); the *UTF8 names read characters.
  lower: { ...fixed('lower', 1, 1, 'String'), ci: true },
  upper: { ...fixed('upper', 1, 1, 'String'), ci: true },
  lowerUTF8: fixed('lowerUTF8', 1, 1, 'String'),
  upperUTF8: fixed('upperUTF8', 1, 1, 'String'),
  concat: { ...fixed('concat', 1, INF, 'String'), ci: true },
  // PostHog takes exactly three arguments (a two-argument call is its arity error)
  substring: { ...fixed('substring', 3, 3, 'String'), ci: true },
  substringUTF8: fixed('substringUTF8', 3, 3, 'String'),
  replace: { ...fixed('replaceAll', 3, 3, 'String'), ci: true },
  replaceAll: fixed('replaceAll', 3, 3, 'String'),
  replaceOne: fixed('replaceOne', 3, 3, 'String'),
  replaceRegexpAll: fixed('replaceRegexpAll', 3, 3, 'String'),
  replaceRegexpOne: fixed('replaceRegexpOne', 3, 3, 'String'),
  position: { ...searchFrom('position'), ci: true },
  positionCaseInsensitive: searchFrom('positionCaseInsensitive'),
  startsWith: fixed('startsWith', 2, 2, 'UInt8'),
  endsWith: fixed('endsWith', 2, 2, 'UInt8'),
  splitByChar: fixed('splitByChar', 2, 2, 'Array(String)'),
  splitByString: fixed('splitByString', 2, 2, 'Array(String)'),
  arrayStringConcat: fixed('arrayStringConcat', 1, 2, 'String'),
  // reverse of text keeps UTF-8 characters whole; of an array it reverses the elements.
  reverse: {
    min: 1,
    max: 1,
    print: (a, _p, ctx) => `${isStringType(ctx.argTypes[0]) ? 'reverseUTF8' : 'reverse'}(${a[0]})`,
    ret: (t) => (isStringType(t[0]) ? 'String' : (t[0] ?? 'Unknown')),
    ci: true,
  },
  extract: { ...fixed('extract', 2, 2, 'String'), ci: true },
  extractAll: fixed('extractAll', 2, 2, 'Array(String)'),
  // A regexp replacement: it strips all whitespace, as Burrow always has (ClickHouse's trimBoth and
  // the others strip spaces only), and serves with and without the characters to strip.
  trim: { min: 1, max: 2, print: trimP('^\\s+|\\s+$'), ret: 'String', ci: true },
  trimLeft: { min: 1, max: 2, print: trimP('^\\s+'), ret: 'String' },
  trimRight: { min: 1, max: 2, print: trimP('\\s+$'), ret: 'String' },
  domain: fixed('domain', 1, 1, 'String'),
  domainWithoutWWW: fixed('domainWithoutWWW', 1, 1, 'String'),
  topLevelDomain: fixed('topLevelDomain', 1, 1, 'String'),
  protocol: fixed('protocol', 1, 1, 'String'),
  path: fixed('path', 1, 1, 'String'),
  extractURLParameter: fixed('extractURLParameter', 2, 2, 'String'),
  cutQueryStringAndFragment: fixed('cutQueryStringAndFragment', 1, 1, 'String'),

  // arrays and tuples
  array: fixed('array', 0, INF, (t) => `Array(${t[0] ?? 'Nothing'})`),
  tuple: fixed('tuple', 1, INF, (t) => `Tuple(${t.join(', ')})`),
  tupleElement: fixed('tupleElement', 2, 2),
  arrayElement: fixed('arrayElement', 2, 2, (t) => /^Array\((.*)\)$/.exec(t[0] ?? '')?.[1] ?? 'Unknown'),
  has: fixed('has', 2, 2, 'UInt8'),
  hasAll: fixed('hasAll', 2, 2, 'UInt8'),
  hasAny: fixed('hasAny', 2, 2, 'UInt8'),
  indexOf: fixed('indexOf', 2, 2, 'UInt64'),
  countEqual: fixed('countEqual', 2, 2, 'UInt64'),
  arrayMap: fixed('arrayMap', 2, INF, 'Array(Unknown)'),
  arrayFilter: fixed('arrayFilter', 2, INF, (t) => t[1] ?? 'Unknown'),
  arrayExists: fixed('arrayExists', 1, INF, 'UInt8'),
  arrayAll: fixed('arrayAll', 1, INF, 'UInt8'),
  arrayFirst: fixed('arrayFirst', 2, INF),
  arrayFirstIndex: fixed('arrayFirstIndex', 2, INF, 'UInt32'),
  arrayCount: fixed('arrayCount', 1, INF, 'UInt32'),
  arraySum: fixed('arraySum', 1, INF),
  arraySort: fixed('arraySort', 1, INF, sortedArray),
  arrayReverseSort: fixed('arrayReverseSort', 1, INF, sortedArray),
  arrayReverse: fixed('arrayReverse', 1, 1, first),
  arrayDistinct: fixed('arrayDistinct', 1, 1, first),
  arrayConcat: fixed('arrayConcat', 1, INF, first),
  arraySlice: fixed('arraySlice', 2, 3, first),
  arrayUniq: fixed('arrayUniq', 1, INF, 'UInt64'),
  arrayEnumerate: fixed('arrayEnumerate', 1, 1, 'Array(UInt32)'),
  arrayJoin: fixed('arrayJoin', 1, 1, (t) => /^Array\((.*)\)$/.exec(t[0] ?? '')?.[1] ?? 'Unknown'),
  range: fixed('range', 1, 1, 'Array(UInt64)'),
  emptyArrayString: fixed('emptyArrayString', 0, 0, 'Array(String)'),
}

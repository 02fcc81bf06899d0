import { escapeString } from './escape.ts'

// The allow-list: every HogQL function a user may call, what it prints as on ClickHouse, its arity
// and (best effort) its result type. A name missing here is refused, which is what keeps table
// functions, dictionaries, settings readers and the like out of user queries.

export interface FnCtx {
  tz: string
  argTypes: string[]
}

type Printer = (args: string[], params: string[], ctx: FnCtx) => string

export interface FnDef {
  min: number
  max: number
  print: string | Printer
  ret?: string | ((types: string[]) => string)
  agg?: boolean
  // Parametric aggregates: quantile(0.5)(x).
  params?: [number, number]
  // Names that SQL users habitually type in any case (COUNT, Sum, ...).
  ci?: boolean
}

const INF = Number.POSITIVE_INFINITY

export function isStringType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?(String|FixedString)/.test(t)
}
export function isNumericType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?(U?Int|Float|Decimal)/.test(t)
}
export function isDateTimeType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?DateTime/.test(t)
}
export function isDateType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?Date($|\))/.test(t)
}

const first = (t: string[]) => t[0] ?? 'Unknown'
const call = (name: string) => (a: string[]) => `${name}(${a.join(', ')})`

function fixed(name: string, min: number, max: number, ret?: FnDef['ret']): FnDef {
  return { min, max, print: name, ret }
}

function agg(name: string, min: number, max: number, ret?: FnDef['ret'], params?: [number, number]): FnDef {
  return { min, max, print: name, ret, agg: true, params }
}

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
  (sign: '+' | '-'): Printer =>
  (a) => {
    // dateAdd(unit, n, date) or dateAdd(date, interval)
    if (a.length === 3) return `(${a[2]} ${sign} ${intervalOf(unitOf(a[0]!), a[1]!)})`
    return `(${a[0]} ${sign} ${a[1]})`
  }

// toStartOfWeek(x, mode): 18.16 only has toMonday. Mode 0 (the default) starts weeks on Sunday:
// shift by a day, take the Monday, shift back.
const startOfWeek: Printer = (a) => {
  const mode = a[1] ?? '0'
  if (mode === '1' || mode === '3') return `toMonday(${a[0]})`
  if (mode === '0' || mode === '2') return `toDate(toMonday(toDate(${a[0]}) + 1) - 1)`
  throw new Error('toStartOfWeek supports modes 0-3')
}

// Selected HogQL type-conversion semantics: string inputs that do not parse give NULL.
const toIntP: Printer = (a, _p, ctx) =>
  isNumericType(ctx.argTypes[0]) ? `toInt64(${a[0]})` : `toInt64OrNull(toString(${a[0]}))`
const toFloatP: Printer = (a, _p, ctx) =>
  isNumericType(ctx.argTypes[0]) ? `toFloat64(${a[0]})` : `toFloat64OrNull(toString(${a[0]}))`
const toDateP: Printer = (a, _p, ctx) => {
  const t = ctx.argTypes[0]
  if (isDateTimeType(t) || isDateType(t)) return `toDate(${a[0]})`
  return `toDateOrNull(toString(${a[0]}))`
}
const toDateTimeP: Printer = (a, _p, ctx) => {
  const t = ctx.argTypes[0]
  const tz = a[1] ?? escapeString(ctx.tz)
  if (isDateTimeType(t)) return a[1] ? `toTimeZone(${a[0]}, ${tz})` : a[0]!
  if (isNumericType(t) || isDateType(t)) return `toDateTime(${a[0]}, ${tz})`
  return `parseDateTimeBestEffortOrNull(toString(${a[0]}), ${tz})`
}

const trimP =
  (re: string): Printer =>
  (a) =>
    `replaceRegexpAll(${a[0]}, ${escapeString(re)}, '')`

const caseWithExpression: Printer = (a) => {
  // _caseWithExpression(x, when1, then1, ..., else)
  const [x, ...rest] = a
  const elseValue = rest.pop()
  const parts: string[] = []
  for (let i = 0; i + 1 < rest.length; i += 2) parts.push(`${x} = ${rest[i]}`, rest[i + 1]!)
  return `multiIf(${[...parts, elseValue].join(', ')})`
}

const dateTimeRet = (): string => 'DateTime'

export const FUNCTIONS: Record<string, FnDef> = {
  // logic and comparison (operators arrive as nodes; these are for people who call them by name)
  not: fixed('not', 1, 1, 'UInt8'),
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
  sqrt: fixed('sqrt', 1, 1, 'Float64'),
  pow: fixed('pow', 2, 2, 'Float64'),
  power: fixed('pow', 2, 2, 'Float64'),
  exp: fixed('exp', 1, 1, 'Float64'),
  log: fixed('log', 1, 1, 'Float64'),
  ln: fixed('log', 1, 1, 'Float64'),
  log2: fixed('log2', 1, 1, 'Float64'),
  log10: fixed('log10', 1, 1, 'Float64'),
  least: fixed('least', 2, 2, first),
  greatest: fixed('greatest', 2, 2, first),
  isNaN: fixed('isNaN', 1, 1, 'UInt8'),
  isFinite: fixed('isFinite', 1, 1, 'UInt8'),
  rand: fixed('rand', 0, 0, 'UInt32'),

  // strings
  length: { ...fixed('length', 1, 1, 'UInt64'), ci: true },
  lengthUTF8: fixed('lengthUTF8', 1, 1, 'UInt64'),
  empty: fixed('empty', 1, 1, 'UInt8'),
  notEmpty: fixed('notEmpty', 1, 1, 'UInt8'),
  lower: { ...fixed('lowerUTF8', 1, 1, 'String'), ci: true },
  upper: { ...fixed('upperUTF8', 1, 1, 'String'), ci: true },
  lowerUTF8: fixed('lowerUTF8', 1, 1, 'String'),
  upperUTF8: fixed('upperUTF8', 1, 1, 'String'),
  concat: { ...fixed('concat', 1, INF, 'String'), ci: true },
  substring: { ...fixed('substringUTF8', 2, 3, 'String'), ci: true },
  substringUTF8: fixed('substringUTF8', 2, 3, 'String'),
  replace: fixed('replaceAll', 3, 3, 'String'),
  replaceAll: fixed('replaceAll', 3, 3, 'String'),
  replaceOne: fixed('replaceOne', 3, 3, 'String'),
  replaceRegexpAll: fixed('replaceRegexpAll', 3, 3, 'String'),
  replaceRegexpOne: fixed('replaceRegexpOne', 3, 3, 'String'),
  position: fixed('positionUTF8', 2, 2, 'UInt64'),
  positionCaseInsensitive: fixed('positionCaseInsensitiveUTF8', 2, 2, 'UInt64'),
  startsWith: fixed('startsWith', 2, 2, 'UInt8'),
  endsWith: fixed('endsWith', 2, 2, 'UInt8'),
  splitByChar: fixed('splitByChar', 2, 2, 'Array(String)'),
  splitByString: fixed('splitByString', 2, 2, 'Array(String)'),
  arrayStringConcat: fixed('arrayStringConcat', 1, 2, 'String'),
  reverse: fixed('reverseUTF8', 1, 1, 'String'),
  extract: fixed('extract', 2, 2, 'String'),
  extractAll: fixed('extractAll', 2, 2, 'Array(String)'),
  // 18.16 has no trim functions; a regexp replacement does the same.
  trim: { min: 1, max: 1, print: trimP('^\\s+|\\s+$'), ret: 'String', ci: true },
  trimLeft: { min: 1, max: 1, print: trimP('^\\s+'), ret: 'String' },
  trimRight: { min: 1, max: 1, print: trimP('\\s+$'), ret: 'String' },
  domain: fixed('domain', 1, 1, 'String'),
  domainWithoutWWW: fixed('domainWithoutWWW', 1, 1, 'String'),
  topLevelDomain: fixed('topLevelDomain', 1, 1, 'String'),
  protocol: fixed('protocol', 1, 1, 'String'),
  path: fixed('path', 1, 1, 'String'),
  extractURLParameter: fixed('extractURLParameter', 2, 2, 'String'),
  cutQueryStringAndFragment: fixed('cutQueryStringAndFragment', 1, 1, 'String'),

  // conversions
  toString: fixed('toString', 1, 1, 'String'),
  toInt: { min: 1, max: 1, print: toIntP, ret: 'Nullable(Int64)' },
  toFloat: { min: 1, max: 1, print: toFloatP, ret: 'Nullable(Float64)' },
  toDate: { min: 1, max: 1, print: toDateP, ret: 'Date' },
  toDateTime: { min: 1, max: 2, print: toDateTimeP, ret: dateTimeRet },
  toUUID: { min: 1, max: 1, print: call('toUUID'), ret: 'UUID' },
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
  now: {
    min: 0,
    max: 0,
    print: (_a, _p, c) => `toTimeZone(now(), ${escapeString(c.tz)})`,
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
  arraySort: fixed('arraySort', 1, INF, (t) => t[t.length - 1] ?? 'Unknown'),
  arrayReverseSort: fixed('arrayReverseSort', 1, INF, (t) => t[t.length - 1] ?? 'Unknown'),
  arrayReverse: fixed('arrayReverse', 1, 1, first),
  arrayDistinct: fixed('arrayDistinct', 1, 1, first),
  arrayConcat: fixed('arrayConcat', 1, INF, first),
  arraySlice: fixed('arraySlice', 2, 3, first),
  arrayUniq: fixed('arrayUniq', 1, INF, 'UInt64'),
  arrayEnumerate: fixed('arrayEnumerate', 1, 1, 'Array(UInt32)'),
  arrayJoin: fixed('arrayJoin', 1, 1, (t) => /^Array\((.*)\)$/.exec(t[0] ?? '')?.[1] ?? 'Unknown'),
  range: fixed('range', 1, 1, 'Array(UInt64)'),
  emptyArrayString: fixed('emptyArrayString', 0, 0, 'Array(String)'),

  // aggregates
  count: { ...agg('count', 0, 1, 'UInt64'), ci: true },
  countIf: agg('countIf', 1, 2, 'UInt64'),
  uniq: agg('uniq', 1, INF, 'UInt64'),
  uniqExact: agg('uniqExact', 1, INF, 'UInt64'),
  uniqCombined: agg('uniqCombined', 1, INF, 'UInt64'),
  uniqHLL12: agg('uniqHLL12', 1, INF, 'UInt64'),
  sum: { ...agg('sum', 1, 1, first), ci: true },
  avg: { ...agg('avg', 1, 1, 'Float64'), ci: true },
  min: { ...agg('min', 1, 1, first), ci: true },
  max: { ...agg('max', 1, 1, first), ci: true },
  any: agg('any', 1, 1, first),
  anyLast: agg('anyLast', 1, 1, first),
  argMin: agg('argMin', 2, 2, first),
  argMax: agg('argMax', 2, 2, first),
  groupArray: agg('groupArray', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [0, 1]),
  groupUniqArray: agg('groupUniqArray', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [0, 1]),
  median: agg('median', 1, 1, 'Float64'),
  quantile: agg('quantile', 1, 1, 'Float64', [1, 1]),
  quantiles: agg('quantiles', 1, 1, 'Array(Float64)', [1, INF]),
  quantileExact: agg('quantileExact', 1, 1, first, [1, 1]),
  quantileTDigest: agg('quantileTDigest', 1, 1, 'Float64', [1, 1]),
  quantileTiming: agg('quantileTiming', 1, 1, 'Float32', [1, 1]),
  stddevPop: agg('stddevPop', 1, 1, 'Float64'),
  stddevSamp: agg('stddevSamp', 1, 1, 'Float64'),
  varPop: agg('varPop', 1, 1, 'Float64'),
  varSamp: agg('varSamp', 1, 1, 'Float64'),
  corr: agg('corr', 2, 2, 'Float64'),
  covarPop: agg('covarPop', 2, 2, 'Float64'),
  covarSamp: agg('covarSamp', 2, 2, 'Float64'),
  topK: agg('topK', 1, 1, (t) => `Array(${t[0] ?? 'Unknown'})`, [1, 1]),
  windowFunnel: agg('windowFunnel', 2, INF, 'UInt8', [1, 1]),
  retention: agg('retention', 1, 32, 'Array(UInt8)'),
  sequenceMatch: agg('sequenceMatch', 2, INF, 'UInt8', [1, 1]),
  sequenceCount: agg('sequenceCount', 2, INF, 'UInt64', [1, 1]),
}

const CI_INDEX = new Map(
  Object.entries(FUNCTIONS)
    .filter(([, d]) => d.ci)
    .map(([name, d]) => [name.toLowerCase(), d]),
)

// Aggregates that may take the -If combinator (the condition is one extra argument).
const IF_COMBINABLE = new Set([
  'uniq',
  'uniqExact',
  'sum',
  'avg',
  'min',
  'max',
  'any',
  'anyLast',
  'argMin',
  'argMax',
  'groupArray',
  'groupUniqArray',
  'median',
  'quantile',
  'quantiles',
])

export function lookupFunction(name: string): FnDef | undefined {
  if (Object.hasOwn(FUNCTIONS, name)) return FUNCTIONS[name]
  const ci = CI_INDEX.get(name.toLowerCase())
  if (ci) return ci
  if (name.endsWith('If')) {
    const base = name.slice(0, -2)
    if (IF_COMBINABLE.has(base)) {
      const def = FUNCTIONS[base]!
      return { ...def, min: def.min + 1, max: def.max + 1, print: `${base}If` }
    }
  }
  return undefined
}

export { intervalOf, unitOf }

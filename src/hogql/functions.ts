import { AGGREGATE_FUNCTIONS } from './functions-aggregate.ts'
import { EVERYWHERE_FUNCTIONS, NEWER_FUNCTIONS, NEWER_FUNCTIONS_SINCE } from './functions-extra.ts'
import { SCALAR_FUNCTIONS } from './functions-scalar.ts'
import { TIME_FUNCTIONS } from './functions-time.ts'
import type { FnDef } from './function-defs.ts'

// The allow-list: every HogQL function a user may call, what it prints as on ClickHouse, its arity
// and (best effort) its result type. A name missing here is refused, which is what keeps table
// functions, dictionaries, settings readers and the like out of user queries. The definitions live
// in functions-scalar.ts, functions-time.ts and functions-aggregate.ts.

export {
  type FnCtx,
  type FnDef,
  isDateTimeType,
  isDateType,
  isNumericType,
  isStringType,
  withTimeZone,
} from './function-defs.ts'

/** Every allow-listed function by its HogQL name. */
export const FUNCTIONS: Record<string, FnDef> = {
  ...Object.fromEntries(
    Object.entries(NEWER_FUNCTIONS).map(([name, d]) => [name, { ...d, since: NEWER_FUNCTIONS_SINCE }]),
  ),
  ...EVERYWHERE_FUNCTIONS,
  ...SCALAR_FUNCTIONS,
  ...TIME_FUNCTIONS,
  ...AGGREGATE_FUNCTIONS,
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

/** The definition of `name` (exact, case-insensitive for SQL-style names, or an aggregate with -If). */
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

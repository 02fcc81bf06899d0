import { AGGREGATE_FUNCTIONS } from './functions-aggregate.ts'
import { EXTRA_FUNCTIONS } from './functions-extra.ts'
import { SCALAR_FUNCTIONS } from './functions-scalar.ts'
import { TIME_FUNCTIONS } from './functions-time.ts'
import type { FnDef } from './function-defs.ts'
import { CHANNEL_FUNCTIONS } from '../sessions/channel-type.ts'

// The allow-list: every HogQL function a user may call, what it prints as on ClickHouse, its arity
// and (best effort) its result type. A name missing here is refused, which is what keeps table
// functions, dictionaries, settings readers and the like out of user queries. The definitions live
// in functions-scalar.ts, functions-extra.ts, functions-time.ts and functions-aggregate.ts.

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
  ...EXTRA_FUNCTIONS,
  ...SCALAR_FUNCTIONS,
  ...TIME_FUNCTIONS,
  ...AGGREGATE_FUNCTIONS,
  // PostHog's channel-type lookups (src/sessions/channel-type.ts)
  ...CHANNEL_FUNCTIONS,
  // PostgreSQL's names for the trims (PostHog's clickhouse/strings.py)
  ltrim: SCALAR_FUNCTIONS.trimLeft!,
  rtrim: SCALAR_FUNCTIONS.trimRight!,
  btrim: SCALAR_FUNCTIONS.trim!,
  current_timestamp: { ...TIME_FUNCTIONS.now!, max: 0 },
  current_date: TIME_FUNCTIONS.today!,
  // PostgreSQL's name for toDate (PostHog's clickhouse/conversions.py)
  to_date: TIME_FUNCTIONS.toDate!,
}

// Lower-cased name → the allow-list's spelling, for the names PostHog resolves in any case.
const CI_INDEX = new Map(
  Object.entries(FUNCTIONS)
    .filter(([, d]) => d.ci)
    .map(([name]) => [name.toLowerCase(), name]),
)

// Aggregates printed under another name, or that are conditional already, take no -If here.
const NOT_IF_COMBINABLE = new Set([
  'count',
  'countIf',
  'windowFunnel',
  'retention',
  'sequenceMatch',
  'sequenceCount',
])

/**
 * The definition of `name` (exact, case-insensitive for SQL-style names, or an aggregate with -If:
 * PostHog allows the combinator on its aggregates; the condition is one extra argument and the
 * release that runs the aggregate runs its -If form).
 */
export function lookupFunction(name: string): FnDef | undefined {
  const key = functionKey(name)
  if (Object.hasOwn(FUNCTIONS, key)) return FUNCTIONS[key]
  if (name.endsWith('If')) {
    const base = name.slice(0, -2)
    const def = Object.hasOwn(FUNCTIONS, base) ? FUNCTIONS[base]! : undefined
    if (def?.agg && def.print === base && !NOT_IF_COMBINABLE.has(base)) {
      return { ...def, min: def.min + 1, max: def.max + 1, print: name }
    }
  }
  return undefined
}

/**
 * The allow-list's own spelling of `name` when it is a case-insensitive one (`LENGTH` is `length`,
 * `IfNull` is `ifNull`), else `name` unchanged: the resolver names calls by it, so checks by name
 * (nullability, concat, count) see `LENGTH(x)` as they see `length(x)`.
 */
export function functionKey(name: string): string {
  if (Object.hasOwn(FUNCTIONS, name)) return name
  return CI_INDEX.get(name.toLowerCase()) ?? name
}

import { escapeString } from './escape.ts'

// The vocabulary of the function allow-list (functions.ts): what a function definition says and the
// type predicates the resolver and the coercion rules share.

/** What a function printer knows besides its printed arguments. */
export interface FnCtx {
  tz: string
  argTypes: string[]
}

/** Prints a call from its printed arguments (and parameters, for parametric aggregates). */
export type FnPrinter = (args: string[], params: string[], ctx: FnCtx) => string

/** One allow-listed function: its arity, how it prints, its result type and what kind it is. */
export interface FnDef {
  min: number
  max: number
  print: string | FnPrinter
  ret?: string | ((types: string[]) => string)
  agg?: boolean
  // Parametric aggregates: quantile(0.5)(x).
  params?: [number, number]
  // PostHog resolves the name in any case (its case_sensitive=False: COUNT, Abs, LOG10, ...).
  ci?: boolean
}

/** No upper bound on the number of arguments. */
export const INF = Number.POSITIVE_INFINITY

/** Whether `t` is a (nullable) String or FixedString type. */
export function isStringType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?(String|FixedString)/.test(t)
}
/** Whether `t` is a (nullable) integer, float or decimal type. */
export function isNumericType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?(U?Int|Float|Decimal)/.test(t)
}
/** Whether `t` is a (nullable) DateTime type, with or without a zone. */
export function isDateTimeType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?DateTime/.test(t)
}
/** Whether `t` is a (nullable) Date type. */
export function isDateType(t: string | undefined): boolean {
  return !!t && /^(Nullable\()?Date($|\))/.test(t)
}

/** `DateTime` or `DateTime64(p)` (maybe Nullable) as the project's zone shows it; other types unchanged. */
export function withTimeZone(type: string, tz: string): string {
  const zone = `'${tz.replace(/'/g, '')}'`
  const m = /^(Nullable\()?DateTime(?:64\((\d+)\))?(\))?$/.exec(type)
  if (!m || Boolean(m[1]) !== Boolean(m[3])) return type
  const zoned = m[2] === undefined ? `DateTime(${zone})` : `DateTime64(${m[2]}, ${zone})`
  return m[1] ? `Nullable(${zoned})` : zoned
}

/** The type of the first argument (functions that return what they are given). */
export const first = (t: string[]) => t[0] ?? 'Unknown'

/** A printer that calls ClickHouse function `name` with the arguments as they are. */
export const call = (name: string) => (a: string[]) => `${name}(${a.join(', ')})`

/** A function printed as ClickHouse function `name`. */
export function fixed(name: string, min: number, max: number, ret?: FnDef['ret']): FnDef {
  return { min, max, print: name, ret }
}

/** An aggregate printed as ClickHouse aggregate `name`, optionally parametric. */
export function agg(
  name: string,
  min: number,
  max: number,
  ret?: FnDef['ret'],
  params?: [number, number],
): FnDef {
  return { min, max, print: name, ret, agg: true, params }
}

/** Functions printed as the ClickHouse functions of the same names. */
export const each = (names: string[], min: number, max: number, ret?: FnDef['ret']) =>
  Object.fromEntries(names.map((name) => [name, fixed(name, min, max, ret)]))

/** Aggregates printed as the ClickHouse aggregates of the same names. */
export const aggs = (
  names: string[],
  min: number,
  max: number,
  ret: FnDef['ret'],
  params?: [number, number],
) => Object.fromEntries(names.map((name) => [name, agg(name, min, max, ret, params)]))

/**
 * `f(args..., '<project zone>')` unless the zone (argument `zoneAt`, from 0) is given; a DateTime64
 * precision left out before it is 3, the milliseconds Burrow's timestamps keep.
 */
export const zoned =
  (name: string, zoneAt: number): FnPrinter =>
  (a, _p, ctx) => {
    if (a.length > zoneAt) return `${name}(${a.join(', ')})`
    const filled = [...a]
    while (filled.length < zoneAt) filled.push('3')
    return `${name}(${[...filled, escapeString(ctx.tz)].join(', ')})`
  }

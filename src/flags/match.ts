import { parseDateText, parsePropertyDate } from './dates.ts'
import type { PropertyFilter } from './definition.ts'
import { type RegexAnswers } from '../patterns/regex.ts'
import { regexFinds } from './regex.ts'

// Property matching as PostHog's flags service does it when it has the full property set
// (rust/feature-flags/src/properties/property_matching.rs, match_property with
// partial_props = false). A property the person or group does not have is a definite
// answer, not an unknown: negative operators match, positive ones do not.

export class FlagMatchError extends Error {
  override name = 'FlagMatchError'
}

export interface MatchOptions {
  now?: Date
  /**
   * The request's regex answers, worked out before evaluation off the event loop where they are
   * costly (matchRegexes); without them each pattern is matched here (small patterns only).
   */
  regex?: RegexAnswers
}

// serde_json's rendering for non-strings; JSON.stringify agrees for the values that reach
// here (numbers, booleans, null, arrays, objects).
export function stringRepresentation(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

// Only ASCII letters fold for the substring operators, as in the Rust service.
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
}

// Rust's `str::parse::<f64>`: no surrounding spaces, no hex, but inf/infinity/nan allowed.
const FLOAT_TEXT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return value
  const text = stringRepresentation(value)
  if (!FLOAT_TEXT.test(text)) return null
  const unsigned = text.replace(/^[+-]/, '').toLowerCase()
  const sign = text.startsWith('-') ? -1 : 1
  if (unsigned === 'inf' || unsigned === 'infinity') return sign * Number.POSITIVE_INFINITY
  if (unsigned === 'nan') return Number.NaN
  return Number(text)
}

function isBooleanLike(value: unknown): boolean {
  if (typeof value === 'boolean') return true
  if (typeof value === 'string') {
    const lower = value.toLowerCase()
    return lower === 'true' || lower === 'false'
  }
  return Array.isArray(value) && value.every(isBooleanLike)
}

function isTruthy(value: unknown): boolean {
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') return value.toLowerCase() === 'true'
  return Array.isArray(value) && value.every(isTruthy)
}

// `exact` compares case-insensitively as text; a boolean-like filter ("true", false,
// ["True"]) compares truthiness instead, so "TRUE" equals true and, as in PostHog, any
// non-true value equals false.
function exactMatch(filterValue: unknown, actual: unknown): boolean {
  if (isBooleanLike(filterValue)) return isTruthy(filterValue) === isTruthy(actual)
  const actualText = stringRepresentation(actual).toLowerCase()
  if (Array.isArray(filterValue)) {
    return filterValue.some((item) => stringRepresentation(item).toLowerCase() === actualText)
  }
  return stringRepresentation(filterValue).toLowerCase() === actualText
}

/** Whether `pattern` finds a match in `text` (src/patterns/regex.ts). */
function regexMatch(pattern: string, text: string, answers: RegexAnswers | undefined): boolean {
  try {
    return answers ? answers.finds(pattern, text) : regexFinds(pattern, text)
  } catch (error) {
    throw new FlagMatchError((error as Error).message)
  }
}

// What each operator answers when the property is absent (PostHog: the negated forms match).
const MATCHES_WHEN_ABSENT: Readonly<Record<PropertyFilter['operator'], boolean>> = {
  exact: false,
  is_not: true,
  icontains: false,
  not_icontains: true,
  starts_with: false,
  not_starts_with: true,
  ends_with: false,
  not_ends_with: true,
  regex: false,
  not_regex: true,
  gt: false,
  gte: false,
  lt: false,
  lte: false,
  is_set: false,
  is_not_set: true,
  is_date_before: false,
  is_date_after: false,
  is_date_exact: false,
  // cohort conditions never reach matchProperty (src/flags/evaluate.ts decides them)
  in: false,
  not_in: true,
}

function compareNumbers(
  actual: unknown,
  filterValue: unknown,
  operator: 'gt' | 'gte' | 'lt' | 'lte',
): boolean {
  const left = toNumber(actual)
  const right = toNumber(filterValue)
  // The Rust service treats an unparsable side as a validation error, which a condition
  // reads as "no match"; there is no string comparison fallback.
  if (left === null || right === null) return false
  if (operator === 'gt') return left > right
  if (operator === 'gte') return left >= right
  if (operator === 'lt') return left < right
  return left <= right
}

function compareDates(
  actual: unknown,
  filterValue: unknown,
  operator: 'is_date_before' | 'is_date_after' | 'is_date_exact',
  now: Date,
): boolean {
  const actualDate = parsePropertyDate(actual, now)
  if (!actualDate || typeof filterValue !== 'string') return false
  const bound = parseDateText(filterValue, now)
  if (!bound) return false
  if (operator === 'is_date_before') return actualDate.getTime() < bound.getTime()
  if (operator === 'is_date_after') return actualDate.getTime() > bound.getTime()
  return actualDate.getTime() === bound.getTime()
}

export function matchProperty(
  filter: PropertyFilter,
  properties: Record<string, unknown>,
  options: MatchOptions = {},
): boolean {
  const operator = filter.operator
  const present = Object.hasOwn(properties, filter.key) && properties[filter.key] !== undefined
  if (operator === 'is_set') return present
  if (operator === 'is_not_set') return !present
  // A filter stored with a null or missing value cannot match anything (Rust: value None).
  if (filter.value === undefined || filter.value === null) return false
  if (!present) {
    // The pattern is still checked so a broken regex fails the flag whatever the person has.
    if (operator === 'regex' || operator === 'not_regex')
      regexMatch(stringRepresentation(filter.value), '', options.regex)
    return MATCHES_WHEN_ABSENT[operator]
  }
  const actual = properties[filter.key]
  const value = filter.value
  switch (operator) {
    case 'exact':
      return exactMatch(value, actual)
    case 'is_not':
      return !exactMatch(value, actual)
    case 'icontains':
      return asciiLower(stringRepresentation(actual)).includes(asciiLower(stringRepresentation(value)))
    case 'not_icontains':
      return !asciiLower(stringRepresentation(actual)).includes(asciiLower(stringRepresentation(value)))
    case 'starts_with':
      return asciiLower(stringRepresentation(actual)).startsWith(asciiLower(stringRepresentation(value)))
    case 'not_starts_with':
      return !asciiLower(stringRepresentation(actual)).startsWith(asciiLower(stringRepresentation(value)))
    case 'ends_with':
      return asciiLower(stringRepresentation(actual)).endsWith(asciiLower(stringRepresentation(value)))
    case 'not_ends_with':
      return !asciiLower(stringRepresentation(actual)).endsWith(asciiLower(stringRepresentation(value)))
    case 'regex':
      return regexMatch(stringRepresentation(value), stringRepresentation(actual), options.regex)
    case 'not_regex':
      return !regexMatch(stringRepresentation(value), stringRepresentation(actual), options.regex)
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compareNumbers(actual, value, operator)
    case 'is_date_before':
    case 'is_date_after':
    case 'is_date_exact':
      return compareDates(actual, value, operator, options.now ?? new Date())
    case 'in':
    case 'not_in':
      throw new FlagMatchError('a cohort condition is not a property filter')
  }
}

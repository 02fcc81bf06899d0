// Date parsing for the is_date_* operators, following PostHog's flags service
// (rust/feature-flags/src/properties/property_matching.rs and relative_date.rs).
// Burrow projects run in UTC, so values without an offset are read as UTC wall clock.

const RELATIVE = /^-?(\d+)([hdwmy])$/
// PostHog refuses relative amounts of 10,000 or more.
const MAX_RELATIVE_AMOUNT = 10_000
const DAY_MS = 86_400_000

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/
// Naive wall-clock forms PostHog lists: space or T separator, seconds and fraction optional.
const NAIVE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/
// RFC 3339 with an explicit offset, which is honoured as written.
const WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/
// Rust's f64 grammar; a numeric string is a unix timestamp in seconds.
const FLOAT_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate()
}

// "-7d" and "7d" both mean seven days ago. Months and years step back one at a time and
// clamp the day to the target month, like relativedelta.
export function parseRelativeDate(text: string, now: Date): Date | null {
  const match = RELATIVE.exec(text)
  if (!match) return null
  const amount = Number(match[1])
  if (amount >= MAX_RELATIVE_AMOUNT) return null
  const unit = match[2]
  const nowMs = now.getTime()
  if (unit === 'h') return new Date(nowMs - amount * 3_600_000)
  if (unit === 'd') return new Date(nowMs - amount * DAY_MS)
  if (unit === 'w') return new Date(nowMs - amount * 7 * DAY_MS)
  const result = new Date(nowMs)
  for (let step = 0; step < amount; step++) {
    const year = result.getUTCFullYear()
    const month = result.getUTCMonth()
    const day = result.getUTCDate()
    const targetYear = unit === 'y' ? year - 1 : month === 0 ? year - 1 : year
    const targetMonth = unit === 'y' ? month : (month + 11) % 12
    result.setUTCFullYear(targetYear, targetMonth, Math.min(day, daysInMonth(targetYear, targetMonth)))
  }
  return result
}

function validCalendar(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): boolean {
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month - 1) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59
  )
}

function fractionMs(fraction: string | undefined): number {
  return fraction ? Math.round(Number(`0${fraction}`) * 1000) : 0
}

// A date string as PostHog's parse_date_string_in_tz reads it, with UTC as the team timezone.
export function parseDateText(text: string, now: Date): Date | null {
  const relative = parseRelativeDate(text, now)
  if (relative) return relative
  const offset = WITH_OFFSET.exec(text)
  if (offset) {
    const [, y, mo, d, h, mi, s, fraction, zone] = offset
    if (!validCalendar(+y!, +mo!, +d!, +h!, +mi!, +s!)) return null
    const utc = Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +s!) + fractionMs(fraction)
    if (zone === 'Z' || zone === 'z') return new Date(utc)
    const sign = zone!.startsWith('-') ? -1 : 1
    const minutes = Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6))
    return new Date(utc - sign * minutes * 60_000)
  }
  const dateOnly = DATE_ONLY.exec(text)
  if (dateOnly) {
    const [, y, mo, d] = dateOnly
    if (!validCalendar(+y!, +mo!, +d!)) return null
    return new Date(Date.UTC(+y!, +mo! - 1, +d!))
  }
  const naive = NAIVE.exec(text)
  if (naive) {
    const [, y, mo, d, h, mi, s, fraction] = naive
    if (!validCalendar(+y!, +mo!, +d!, +h!, +mi!, +(s ?? 0))) return null
    return new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +(s ?? 0)) + fractionMs(fraction))
  }
  return null
}

function fromUnixSeconds(seconds: number): Date | null {
  if (!Number.isFinite(seconds)) return null
  const date = new Date(seconds * 1000)
  return Number.isNaN(date.getTime()) ? null : date
}

// The person/group side: numbers and numeric strings are unix seconds, other strings are
// dates; anything else (booleans, null, objects) has no date.
export function parsePropertyDate(value: unknown, now: Date): Date | null {
  if (typeof value === 'number') return fromUnixSeconds(value)
  if (typeof value !== 'string') return null
  if (FLOAT_TEXT.test(value)) return fromUnixSeconds(Number(value))
  return parseDateText(value, now)
}

// Wall-clock time in the project's time zone, as PostHog's date ranges use it.
//
// A "wall" value is epoch milliseconds of the wall-clock reading taken as if it were UTC: wall
// arithmetic (add a day, go to the first of the month) is then plain UTC Date arithmetic, and
// DST never shifts a day boundary. PostHog does the same with zone-aware Python datetimes, whose
// arithmetic is wall-clock too, and hands the results to ClickHouse as wall strings to be read
// in the project's zone.

import { LRUCache } from 'lru-cache'

export type Wall = number

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
    formatters.set(tz, f)
  }
  return f
}

/**
 * Readings already made: Intl's formatToParts costs ~20 µs a call, and a trends query's closed
 * buckets (day-cache cells) ask for the same few hundred instants on every request.
 */
const readings = new LRUCache<string, Wall>({ max: 50_000 })

/** The wall-clock reading of an instant in `tz`. */
export function wallOf(instantMs: number, tz: string): Wall {
  if (tz === 'UTC') return instantMs
  const key = `${tz} ${instantMs}`
  let wall = readings.get(key)
  if (wall === undefined) {
    wall = readWall(instantMs, tz)
    readings.set(key, wall)
  }
  return wall
}

function readWall(instantMs: number, tz: string): Wall {
  const parts: Record<string, number> = {}
  for (const p of formatter(tz).formatToParts(new Date(instantMs))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value)
  }
  const ms = ((instantMs % 1000) + 1000) % 1000
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!, ms)
}

/** The instant a wall-clock reading in `tz` stands for (the later one in a DST overlap). */
export function instantOf(wall: Wall, tz: string): number {
  let guess = wall
  for (let i = 0; i < 3; i++) {
    const offset = wallOf(guess, tz) - guess
    const next = wall - offset
    if (next === guess) break
    guess = next
  }
  return guess
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0')

/** 'YYYY-MM-DD hh:mm:ss' (what ClickHouse reads as a DateTime in the project zone). */
export function wallString(w: Wall): string {
  const d = new Date(w)
  return (
    `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
    `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`
  )
}

export function dateString(w: Wall): string {
  return wallString(w).slice(0, 10)
}

/** Reads 'YYYY-MM-DD' or 'YYYY-MM-DD hh:mm:ss' (as ClickHouse prints Date/DateTime) as a wall value. */
export function parseWall(s: string): Wall {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(s)
  if (!m) throw new Error(`not a date: ${s}`)
  return Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +(m[4] ?? 0), +(m[5] ?? 0), +(m[6] ?? 0))
}

// ---- wall arithmetic ------------------------------------------------------------------------

const DAY = 86_400_000

export function addDays(w: Wall, n: number): Wall {
  return w + n * DAY
}

/** Month arithmetic clamps the day to the target month's length (as dateutil's relativedelta). */
export function addMonths(w: Wall, n: number): Wall {
  const d = new Date(w)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth() + n
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
  return Date.UTC(
    y,
    m,
    Math.min(d.getUTCDate(), last),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  )
}

export function startOfDay(w: Wall): Wall {
  return Math.floor(w / DAY) * DAY
}

/** Weeks start on Sunday (PostHog's default week_start_day, and HogQL's toStartOfWeek mode 0). */
export function startOfWeek(w: Wall): Wall {
  const d = startOfDay(w)
  return addDays(d, -new Date(d).getUTCDay())
}

export function startOfMonth(w: Wall): Wall {
  const d = new Date(w)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** strftime-like pieces PostHog's labels use: %-d, %b, %Y, %H, %M. */
export function fmt(w: Wall, pattern: string): string {
  const d = new Date(w)
  return pattern.replace(/%(-d|b|Y|H|M|m|d)/g, (_, k: string) => {
    switch (k) {
      case '-d':
        return String(d.getUTCDate())
      case 'd':
        return pad(d.getUTCDate())
      case 'b':
        return MONTHS[d.getUTCMonth()]!
      case 'Y':
        return String(d.getUTCFullYear())
      case 'm':
        return pad(d.getUTCMonth() + 1)
      case 'H':
        return pad(d.getUTCHours())
      default:
        return pad(d.getUTCMinutes())
    }
  })
}

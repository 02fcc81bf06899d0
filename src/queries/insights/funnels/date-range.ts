// PostHog dateRange ({date_from, date_to, explicitDate}) as wall-clock bounds in the project's time
// zone. Relative values: -Nh/-Nd/-Nw/-Nm/-Ny (a day or longer starts at 00:00), `…Start` / `…End`
// suffixes snap to the start/end of the unit, `all` is no lower bound; absolute dates are read in
// the project time zone. (Written for funnels and retention; the trends colleague's common module
// is the long-term home.)
import { z } from 'zod'
import { ValidationError } from '../../../errors.ts'

export const DateRange = z
  .object({
    date_from: z.string().nullable().optional(),
    date_to: z.string().nullable().optional(),
    explicitDate: z.boolean().nullable().optional(),
  })
  .passthrough()
export type DateRange = z.infer<typeof DateRange>

/** A wall-clock time: what the clock on the wall of the project's time zone shows. */
export interface Wall {
  y: number
  m: number // 1..12
  d: number
  h: number
  mi: number
  s: number
}

export function wallNow(tz: string, now = new Date()): Wall {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(now)
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value)
  return {
    y: get('year'),
    m: get('month'),
    d: get('day'),
    h: get('hour'),
    mi: get('minute'),
    s: get('second'),
  }
}

// Wall times do arithmetic as if they were UTC; the time zone is applied only when printed.
const toMs = (w: Wall) => Date.UTC(w.y, w.m - 1, w.d, w.h, w.mi, w.s)
function fromMs(ms: number): Wall {
  const d = new Date(ms)
  return {
    y: d.getUTCFullYear(),
    m: d.getUTCMonth() + 1,
    d: d.getUTCDate(),
    h: d.getUTCHours(),
    mi: d.getUTCMinutes(),
    s: d.getUTCSeconds(),
  }
}
export const startOfDay = (w: Wall): Wall => ({ ...w, h: 0, mi: 0, s: 0 })
export const endOfDay = (w: Wall): Wall => ({ ...w, h: 23, mi: 59, s: 59 })
export const addDays = (w: Wall, n: number): Wall => fromMs(toMs(w) + n * 86_400_000)
export function addMonths(w: Wall, n: number): Wall {
  const total = w.y * 12 + (w.m - 1) + n
  const y = Math.floor(total / 12)
  const m = (total % 12) + 1
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate()
  return { ...w, y, m, d: Math.min(w.d, last) }
}
export const wallMs = toMs
export const wallFromMs = fromMs

const pad = (n: number, l = 2) => String(n).padStart(l, '0')
export const wallText = (w: Wall) =>
  `${pad(w.y, 4)}-${pad(w.m)}-${pad(w.d)} ${pad(w.h)}:${pad(w.mi)}:${pad(w.s)}`

const RELATIVE = /^-?(\d+)?([hdwmyq])(Start|End)?$/

function relative(text: string, now: Wall, isTo: boolean): Wall | undefined {
  const m = RELATIVE.exec(text)
  if (!m) return undefined
  const n = Number(m[1] ?? 0) * (text.startsWith('-') ? 1 : -1)
  const unit = m[2]!
  let w: Wall
  if (unit === 'h') w = fromMs(toMs(now) - n * 3_600_000)
  else if (unit === 'd') w = addDays(now, -n)
  else if (unit === 'w') w = addDays(now, -7 * n)
  else if (unit === 'm') w = addMonths(now, -n)
  else if (unit === 'q') w = addMonths(now, -3 * n)
  else w = addMonths(now, -12 * n)
  if (m[3] === 'Start') {
    if (unit === 'm') w = { ...w, d: 1 }
    if (unit === 'y') w = { ...w, m: 1, d: 1 }
    if (unit === 'w') w = addDays(w, -((new Date(toMs(w)).getUTCDay() + 6) % 7))
    return startOfDay(w)
  }
  if (m[3] === 'End') {
    if (unit === 'm') w = addDays(addMonths({ ...w, d: 1 }, 1), -1)
    if (unit === 'y') w = { ...w, m: 12, d: 31 }
    return endOfDay(w)
  }
  if (unit === 'h') return w
  return isTo ? endOfDay(w) : startOfDay(w)
}

function absolute(text: string, isTo: boolean, explicit: boolean): Wall | undefined {
  const m =
    /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(text)
  if (!m) return undefined
  const day: Wall = { y: +m[1]!, m: +m[2]!, d: +m[3]!, h: 0, mi: 0, s: 0 }
  if (m[4] === undefined) return isTo ? endOfDay(day) : day
  const w = { ...day, h: +m[4], mi: +m[5]!, s: +(m[6] ?? 0) }
  // PostHog snaps a date-time to its day unless explicitDate asks for the exact time.
  if (!explicit) return isTo ? endOfDay(w) : startOfDay(w)
  return w
}

export interface ResolvedRange {
  from: Wall | null
  to: Wall
}

export function resolveDateRange(range: DateRange | null | undefined, tz: string, fallbackFrom = '-7d') {
  const now = wallNow(tz)
  const explicit = !!range?.explicitDate
  const parse = (text: string, isTo: boolean) => {
    const w = relative(text, now, isTo) ?? absolute(text, isTo, explicit)
    if (!w)
      throw new ValidationError(`Invalid date '${text}'.`, isTo ? 'dateRange.date_to' : 'dateRange.date_from')
    return w
  }
  const fromText = range?.date_from ?? fallbackFrom
  const from = fromText === 'all' ? null : parse(fromText, false)
  const to = range?.date_to ? parse(range.date_to, true) : endOfDay(now)
  return { from, to } satisfies ResolvedRange
}

/** HogQL condition on `field` (a DateTime) for the range, bounds read in the project time zone. */
export function rangeCondition(r: ResolvedRange, field = 'timestamp'): string {
  const parts: string[] = []
  if (r.from) parts.push(`${field} >= '${wallText(r.from)}'`)
  parts.push(`${field} <= '${wallText(r.to)}'`)
  return parts.join(' AND ')
}

/** The UTC instant (epoch ms) of a wall time in `tz` (the earlier one when a clock change repeats it). */
export function wallToUtcMs(w: Wall, tz: string): number {
  const offsetAt = (utc: number) => wallMs(wallNow(tz, new Date(utc))) - utc
  const guess = wallMs(w)
  return guess - offsetAt(guess - offsetAt(guess))
}

// Which buckets of a trends query may be answered from stored values (src/queries/day-cache.ts),
// and the rows those values stand for. A bucket qualifies when its value depends on its own events
// alone and on nothing a stored value could miss:
// - no breakdown (the top values are ranked over the whole range), no total-value display, no
//   cumulative unique actors, no weekly/monthly-active window (each reaches back before its bucket);
//   formulas and cumulative sums are applied to the values afterwards, so they qualify;
// - series whose events are filtered on event fields only, with math over events (no HogQL, no
//   person property): persons, groups and cohorts change without any event being written;
// - hour, day, week or month buckets wholly inside the range (a partial first or last bucket counts
//   only part of its events) and closed: ended before now, in the project's time zone;
// - no change of UTC offset within three hours of the bucket (DST): its bounds are then
//   unambiguous wall times, so the statement can ask for the buckets around it on their own.
import { withTestAccounts } from '../../test-accounts.ts'
import { createHash } from 'node:crypto'
import type { Project } from '../../../accounts/documents.ts'
import { canonical } from '../../cache.ts'
import type { BucketCell } from '../../day-cache.ts'
import {
  addIntervals,
  breakdownEnabled,
  bucketsOf,
  bucketWall,
  instantOf,
  type Properties,
  type PropertyFilter,
  MATHS,
  type PropertyGroup,
  type ResolvedRange,
  wallOf,
  wallString,
} from '../common/index.ts'
import { activeWindowDays, effectiveMath } from './aggregation.ts'
import { trendsRanges } from './query.ts'
import { type TrendsQuery, TrendsQuerySchema } from './schema.ts'

/** Bump when a change to the trends SQL changes what a stored value means. */
const VALUES_FORMAT = 1

// Every math whose bucket value depends on that bucket's events alone: not the active-user windows
// (they reach back before the bucket) nor HogQL math (any expression).
const UNCACHED_MATHS: ReadonlySet<string> = new Set(['weekly_active', 'monthly_active', 'hogql'])
const CACHED_MATHS = new Set<string>(MATHS.filter((m) => !UNCACHED_MATHS.has(m)))

function eventFieldsOnly(props: Properties): boolean {
  if (!props) return true
  const all = (xs: (PropertyGroup | PropertyFilter)[]): boolean =>
    xs.every((x) =>
      'values' in x && Array.isArray(x.values) && !(x as PropertyFilter).key
        ? all((x as PropertyGroup).values)
        : ['event', 'event_metadata'].includes((x as PropertyFilter).type ?? 'event'),
    )
  return Array.isArray(props) ? all(props) : all(props.values)
}

const HOUR = 3_600_000
const DAY = 86_400_000
const offsetAt = (instant: number, tz: string) => wallOf(instant, tz) - instant

/** The UTC days ('YYYY-MM-DD') of [from, to) (instants), when no offset change is near. */
function steadyUtcDays(start: number, end: number, tz: string): string[] | undefined {
  const i0 = instantOf(start, tz)
  const i1 = instantOf(end, tz)
  const o = offsetAt(i0, tz)
  if ([i0 - 3 * HOUR, i1, i1 + 3 * HOUR].some((i) => offsetAt(i, tz) !== o)) return undefined
  if (i1 - i0 !== end - start) return undefined
  const days: string[] = []
  for (let d = Math.floor(i0 / DAY) * DAY; d < i1; d += DAY) days.push(new Date(d).toISOString().slice(0, 10))
  return days
}

function seriesKey(q: TrendsQuery, i: number, project: Project, server: string, interval: string): string {
  // Everything in the query that is not the range, the display or the other series: unknown fields
  // only split the cache, they never merge two meanings.
  const { series, dateRange, compareFilter, trendsFilter, ...rest } = q
  void dateRange
  void compareFilter
  void trendsFilter
  const def = {
    v: VALUES_FORMAT,
    team: project.id,
    tz: project.timezone,
    server,
    interval,
    series: series[i],
    rest,
  }
  return createHash('sha256')
    .update(JSON.stringify(canonical(def)))
    .digest('hex')
    .slice(0, 40)
}

/**
 * The cells of a trends query whose closed buckets may come from stored values, at `now`; undefined
 * when none may (the query then runs as one statement over its whole range, as before).
 */
export function trendsBucketCells(
  raw: unknown,
  project: Project,
  server: string,
  now: number,
): BucketCell[] | undefined {
  const parsed = TrendsQuerySchema.safeParse(raw)
  if (!parsed.success) return undefined
  // the filters are part of the series' definition (seriesKey reads them in `properties`)
  const q = withTestAccounts(parsed.data, project)
  if (breakdownEnabled(q.breakdownFilter) || !eventFieldsOnly(q.properties)) return undefined
  let plan
  try {
    plan = trendsRanges(q, project.timezone, now)
  } catch {
    return undefined // the compile reports it
  }
  const { interval, totalValue, cumulative, ranges } = plan
  if (totalValue || interval === 'minute' || ranges[0]!.all) return undefined
  const cells: BucketCell[] = []
  for (let i = 0; i < q.series.length; i++) {
    const node = q.series[i]!
    // an action's definition can change without any event being written
    if (node.kind === 'ActionsNode') continue
    let math
    try {
      math = effectiveMath(node, interval)
    } catch {
      return undefined
    }
    if (!CACHED_MATHS.has(math) || activeWindowDays(math) !== undefined) continue
    if (cumulative && (math === 'dau' || math === 'unique_group')) continue
    if (node.math_property_type && node.math_property_type !== 'event_properties') continue
    if (!eventFieldsOnly(node.properties)) continue
    const series = seriesKey(q, i, project, server, interval)
    for (const [c, r] of ranges.entries()) {
      cells.push({ id: `${c}|${i}`, series, total: bucketsOf(r).length, buckets: closedBuckets(r, now) })
    }
  }
  return cells.length ? cells : undefined
}

function closedBuckets(r: ResolvedRange, now: number): BucketCell['buckets'] {
  const out: BucketCell['buckets'] = []
  for (const start of bucketsOf(r)) {
    const end = addIntervals(start, r.interval, 1)
    // whole (timestamps are whole seconds: the last one of the bucket is end - 1 s) and closed
    if (start < r.lower || end - 1000 > r.to || instantOf(end, r.tz) > now) continue
    const days = steadyUtcDays(start, end, r.tz)
    if (days) out.push({ start: wallString(start), days })
  }
  return out
}

/** Values per cell and bucket start text, read from the trends statement's rows. */
export function trendsBucketValues(rows: unknown[][]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>()
  for (const row of rows) {
    if (row[0] !== 'row' || row[3] !== '' || !/^\d{4}-\d{2}-\d{2}/.test(String(row[4]))) continue
    const id = `${Number(row[2])}|${Number(row[1])}`
    let cell = out.get(id)
    if (!cell) out.set(id, (cell = new Map()))
    const start = wallString(bucketWall(String(row[4])))
    cell.set(start, (cell.get(start) ?? 0) + Number(row[5]))
  }
  return out
}

/** The statement's rows for stored values (period|series → bucket start text → value). */
export function trendsRowsOf(values: Map<string, Map<string, number>>): unknown[][] {
  const rows: unknown[][] = []
  for (const [id, cell] of values) {
    const [c, s] = id.split('|').map(Number)
    for (const [start, value] of cell) rows.push(['row', s, c, '', start, value])
  }
  return rows
}

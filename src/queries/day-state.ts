import { createHash } from 'node:crypto'
import { z } from 'zod'
import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'

// The state stored trends values are checked against and stored with: one ClickHouse statement's
// reading of what could have changed them, and the epoch each value carries. What makes a value
// stale, and why, is said at the top of day-cache.ts.

/** The materialized view and its table (schema/clickhouse/0011_events_changed_days.sql). */
export const CHANGED_DAYS = { table: 'events_changed_days', view: 'events_changed_days_mv' }

/** What readDayState found: the time values computed now are stored with, and what makes them stale. */
export interface DayState {
  /** server time (epoch seconds) values computed after this read are valid from */
  asOf: number
  /** what every value's epoch holds besides its months' partitions: mutations, person overrides */
  base: string
  /** partition id of `events` (its month, 'YYYYMM') → its identity: id and lowest block number */
  partitions: Map<string, string>
  /** whether the project had person overrides (read with the epoch: no value stored under an epoch
   * counting a merge its computation did not join) */
  personOverrides: boolean
  /**
   * UTC day ('YYYY-MM-DD') → the latest insert into it (epoch seconds); undefined when not read (a
   * read for force_ requests only, which use no stored value: no value is then still valid)
   */
  changed: Map<string, number> | undefined
  /** the latest change of every day (a replay's swap), 0 if none */
  everything: number
}

const StateRow = z.object({
  now: z.coerce.number(),
  inflight: z.coerce.number(),
  events_table: z.string(),
  mutations: z.string(),
  partitions: z.array(z.string()),
  overrides: z.string(),
  markers: z.array(z.string()).optional(),
})

const isoDay = /^\d{4}-\d{2}-\d{2}$/

/**
 * The one statement readDayState sends (system tables and two small tables; no events are read).
 * `markers` false leaves out the days' changes, which only a check of stored values needs (a
 * third of the statement's time when measured, on 18.16).
 */
export function dayStateSql(teamId: number, firstDay: string, lastDay: string, markers = true): string {
  if (!Number.isSafeInteger(teamId)) throw new Error('teamId must be an integer')
  if (!isoDay.test(firstDay) || !isoDay.test(lastDay)) throw new Error('days must be YYYY-MM-DD')
  const here = 'database = currentDatabase()'
  return (
    'SELECT toUInt32(now()) AS now,' +
    ` (SELECT max(elapsed) FROM system.processes WHERE match(query, '(?i)^\\\\s*insert')) AS inflight,` +
    ` (SELECT concat(any(engine), '/', toString(any(has(dependencies_table, '${CHANGED_DAYS.view}'))))` +
    ` FROM system.tables WHERE ${here} AND name = 'events') AS events_table,` +
    " (SELECT concat(toString(max(toUInt64OrZero(extract(mutation_id, '[0-9]+')))), '/', toString(sum(is_done = 0)))" +
    ` FROM system.mutations WHERE ${here} AND table = 'events') AS mutations,` +
    " (SELECT groupArray(concat(partition_id, ':', toString(b))) FROM (SELECT partition_id, min(min_block_number) AS b" +
    ` FROM system.parts WHERE ${here} AND table = 'events' AND active GROUP BY partition_id)) AS partitions,` +
    " (SELECT concat(toString(count()), '/', toString(max(version)))" +
    ` FROM person_overrides WHERE team_id = ${teamId}) AS overrides` +
    (markers ? markersSql(teamId, firstDay, lastDay) : '')
  )
}

function markersSql(teamId: number, firstDay: string, lastDay: string): string {
  return (
    ", (SELECT groupArray(concat(toString(team_id), '/', toString(day), '=', toString(toUInt32(at))))" +
    ` FROM (SELECT team_id, day, max(at) AS at FROM ${CHANGED_DAYS.table}` +
    ` WHERE (team_id = ${teamId} AND day >= toDate('${firstDay}') AND day <= toDate('${lastDay}'))` +
    ' OR team_id = -1 GROUP BY team_id, day)) AS markers'
  )
}

/**
 * The state values of `teamId`'s buckets over UTC days `firstDay`..`lastDay` are checked against and
 * stored with (only stored with when `markers` is false); undefined when the cache must stay off
 * (cluster mode, the view not attached) or the state cannot be read.
 */
export async function readDayState(
  ch: ClickHouseClient,
  teamId: number,
  firstDay: string,
  lastDay: string,
  markers = true,
): Promise<DayState | undefined> {
  let row
  try {
    ;[row] = await selectRows<unknown>(ch, dayStateSql(teamId, firstDay, lastDay, markers))
  } catch {
    return undefined
  }
  const parsed = StateRow.safeParse(row)
  if (!parsed.success) return undefined
  const s = parsed.data
  const [engine, attached] = s.events_table.split('/')
  if (engine === 'Distributed' || attached !== '1') return undefined
  const changed = s.markers && new Map<string, number>()
  let everything = 0
  for (const m of s.markers ?? []) {
    const match = /^(-?\d+)\/(\d{4}-\d{2}-\d{2})=(\d+)$/.exec(m)
    if (!match) continue
    const at = Number(match[3])
    if (match[1] === '-1') everything = Math.max(everything, at)
    else changed?.set(match[2]!, Math.max(changed.get(match[2]!) ?? 0, at))
  }
  const partitions = new Map<string, string>()
  for (const p of s.partitions) partitions.set(p.slice(0, p.indexOf(':')), p)
  const base = JSON.stringify([s.events_table, s.mutations, s.overrides])
  const personOverrides = Number(s.overrides.split('/')[0]) !== 0
  return { asOf: s.now - Math.ceil(s.inflight), base, partitions, personOverrides, changed, everything }
}

// Epochs hashed per state and months: a request's buckets (up to 4,000 hours) share a few months,
// and a bucket's epoch is asked for when it is checked and when it is stored.
const epochs = new WeakMap<DayState, Map<string, string>>()

const monthOf = (day: string) => day.slice(0, 4) + day.slice(5, 7)

/** The epoch of a bucket over UTC days `days`: the state's base and its months' partitions, hashed. */
export function epochOf(state: DayState, days: readonly string[]): string {
  const months = days.length === 1 ? monthOf(days[0]!) : [...new Set(days.map(monthOf))].sort().join()
  let known = epochs.get(state)
  if (!known) epochs.set(state, (known = new Map()))
  let epoch = known.get(months)
  if (epoch === undefined) {
    const ids = months.split(',').map((m) => state.partitions.get(m) ?? `${m}:-`)
    epoch = createHash('sha256')
      .update(JSON.stringify([state.base, ids]))
      .digest('hex')
      .slice(0, 16)
    known.set(months, epoch)
  }
  return epoch
}

/** Whether a stored value still answers for a bucket overlapping UTC days `days`. */
export function stillValid(v: [number, number, string], days: string[], state: DayState): boolean {
  const [, asOf, epoch] = v
  const changed = state.changed
  if (!changed || state.everything >= asOf || epoch !== epochOf(state, days)) return false
  return days.every((d) => (changed.get(d) ?? 0) < asOf)
}

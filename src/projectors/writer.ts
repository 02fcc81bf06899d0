import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { BatchRows, BatchWriter, EventRow, RefusedRow, TableLines } from './batch.ts'
import { insertTsv } from './clickhouse-io.ts'
import { contentRefusal } from './errors.ts'
import { EVENT_COLUMNS, type ProjectionTables } from './tables.ts'

// The batch's rows into ClickHouse. Two rules of the server shape it:
// - Current releases refuse an INSERT whose rows touch more than `max_partitions_per_insert_block`
//   (100) partitions; `events` is partitioned by toYYYYMM(timestamp) (schema/clickhouse/0001), so a
//   historical batch is written in groups of at most 100 months. An INSERT is atomic per partition
//   only, so this changes nothing for reconciliation, which already reasons per month.
// - An INSERT is refused whole when one row cannot be stored (a value that does not fit its column):
//   the rows are then split in halves until the refused ones stand alone, and only those are returned
//   (the projector dead-letters them); the others are written.

/** Partitions one INSERT may touch on current ClickHouse (its default `max_partitions_per_insert_block`). */
export const MAX_PARTITIONS_PER_INSERT = 100

const eventTimeMs = (r: EventRow) => r.timestampMs

/** toYYYYMM of an epoch-milliseconds time in UTC: the `events` partition of a row. */
export function monthOf(ms: number): number {
  const d = new Date(ms)
  return d.getUTCFullYear() * 100 + d.getUTCMonth() + 1
}

/**
 * The rows (of `events`, their time in epoch milliseconds from `timeMs`) in groups that each touch
 * at most `max` months (in month order when a split is needed; as they came otherwise, which is the
 * common case: one group).
 */
export function partitionGroups<T>(
  rows: T[],
  timeMs: (row: T) => number,
  max = MAX_PARTITIONS_PER_INSERT,
): T[][] {
  if (rows.length === 0) return []
  // The common case without a Date per row: the rows' time range spans at most `max` months.
  let lo = Number.POSITIVE_INFINITY
  let hi = Number.NEGATIVE_INFINITY
  for (const r of rows) {
    const t = timeMs(r)
    if (t < lo) lo = t
    if (t > hi) hi = t
  }
  const span = (m: number) => Math.floor(m / 100) * 12 + (m % 100)
  if (span(monthOf(hi)) - span(monthOf(lo)) < max) return [rows]
  const byMonth = new Map<number, T[]>()
  for (const r of rows) {
    const m = monthOf(timeMs(r))
    let list = byMonth.get(m)
    if (!list) byMonth.set(m, (list = []))
    list.push(r)
  }
  if (byMonth.size <= max) return [rows]
  const months = [...byMonth.keys()].sort((a, b) => a - b)
  const groups: T[][] = []
  for (let i = 0; i < months.length; i += max) {
    groups.push(months.slice(i, i + max).flatMap((m) => byMonth.get(m)!))
  }
  return groups
}

/**
 * Inserts `items` (their `line`s) into `table`; when ClickHouse refuses them for their content, splits
 * them in halves until each refused row stands alone, and reports those through `refused`. Any other
 * failure is thrown (rows of earlier halves may be written by then).
 */
export async function insertIsolating<T>(
  insert: (lines: string[]) => Promise<void>,
  items: T[],
  lineOf: (item: T) => string,
  refused: (item: T, reason: string) => void,
): Promise<void> {
  if (items.length === 0) return
  try {
    await insert(items.map(lineOf))
  } catch (err) {
    const reason = contentRefusal(err)
    if (reason === undefined) throw err
    if (items.length === 1) return refused(items[0]!, reason)
    const half = Math.ceil(items.length / 2)
    await insertIsolating(insert, items.slice(0, half), lineOf, refused)
    await insertIsolating(insert, items.slice(half), lineOf, refused)
  }
}

/** The production BatchWriter: TabSeparated INSERTs into the projection's tables. */
export class ClickHouseWriter implements BatchWriter {
  constructor(
    private readonly ch: ClickHouseClient,
    private readonly tables: ProjectionTables,
    private readonly maxPartitions = MAX_PARTITIONS_PER_INSERT,
  ) {}

  /** Identity rows per table, then event rows per group of months; returns the rows refused. */
  async write(rows: BatchRows): Promise<RefusedRow[]> {
    const refused: RefusedRow[] = []
    for (const t of rows.identity) await this.writeTable(t, refused)
    const table = this.tables.events
    const insert = (lines: string[]) => insertTsv(this.ch, table, EVENT_COLUMNS, lines)
    for (const group of partitionGroups(rows.events, eventTimeMs, this.maxPartitions)) {
      await insertIsolating(
        insert,
        group,
        (r) => r.line,
        (r, reason) => refused.push({ table: 'events', reason, line: r.line, event: r }),
      )
    }
    return refused
  }

  private async writeTable(t: TableLines, refused: RefusedRow[]): Promise<void> {
    const insert = (lines: string[]) => insertTsv(this.ch, this.tables[t.table], t.columns, lines)
    await insertIsolating(
      insert,
      t.lines,
      (line) => line,
      (line, reason) => refused.push({ table: t.table, reason, line }),
    )
  }
}

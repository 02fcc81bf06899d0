import type { ClickHouseClient } from '../../clickhouse/client.ts'
import { selectRows } from '../../clickhouse/client.ts'
import type { LogMessage } from '../batch.ts'
import type { DecodedEvent } from '../decode.ts'
import { DROPS, drop, ok, type StepResult } from './results.ts'

// Reconciliation (docs/projectors.md, "Exactly once"): for messages that may have been written
// before, the rows ClickHouse already holds are read by their log position, and only the others are
// written. It depends only on (stream sequence, offset), never on what plugins made of the event.

/** The positions (`seq:offset`) of event rows already in ClickHouse. */
export type WrittenRows = ReadonlySet<string>

/** Key of an event's row in WrittenRows. */
export const positionKey = (seq: number, offset: number) => `${seq}:${offset}`

/**
 * Which rows of `suspects` (messages that may have been written before) `table` holds, read with
 * one query bounded by team, sequence and the events' time range (the table's partition key).
 */
export async function findWrittenRows(
  ch: ClickHouseClient,
  table: string,
  suspects: { msg: Pick<LogMessage, 'seq'>; teamId: number; events: Pick<DecodedEvent, 'timestampMs'>[] }[],
): Promise<WrittenRows> {
  if (suspects.length === 0) return new Set()
  const teams = new Set<number>()
  const seqs = new Set<number>()
  let min = Number.POSITIVE_INFINITY
  let max = 0
  for (const w of suspects) {
    teams.add(w.teamId)
    seqs.add(w.msg.seq)
    for (const e of w.events) {
      min = Math.min(min, e.timestampMs)
      max = Math.max(max, e.timestampMs)
    }
  }
  if (max === 0) return new Set()
  const rows = await selectRows<{ _seq: string; _offset: number }>(
    ch,
    `SELECT _seq, _offset FROM ${table}
     WHERE team_id IN (${[...teams].join(',')}) AND _seq IN (${[...seqs].join(',')})
       AND timestamp >= toDateTime(${Math.floor(min / 1000)})
       AND timestamp <= toDateTime(${Math.floor(max / 1000)})`,
  )
  return new Set(rows.map((r) => positionKey(Number(r._seq), r._offset)))
}

/** Passes an event whose row is missing; drops one whose row ClickHouse already holds. */
export function skipWritten<T>(value: T, written: WrittenRows, seq: number, offset: number): StepResult<T> {
  // (no key made for the usual batch, one nothing of which was written before)
  return written.size > 0 && written.has(positionKey(seq, offset)) ? drop(DROPS.written) : ok(value)
}

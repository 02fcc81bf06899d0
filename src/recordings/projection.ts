import type { JetStreamClient } from '@nats-io/jetstream'
import { type ClickHouseClient, selectRows } from '../clickhouse/client.ts'
import { sqlNumber, sqlString } from '../clickhouse/sql.ts'
import type { TableAdmin } from '../clickhouse/table-admin.ts'
import type { Logger } from '../observability/logger.ts'
import { DeadLetterList, publishDeadLetter } from '../projectors/dead-letters.ts'
import { io } from '../projectors/errors.ts'
import { type ChunkHeader, decodeMessage, type DeleteHeader } from './message.ts'
import { insertSnapshotRows, type SnapshotRow } from './rows.ts'
import type { RecordingTables } from './tables.ts'

// One batch of RECORDINGS messages into ClickHouse, exactly once (docs/recordings.md, "Exactly
// once"). In order: (1) decode, poison to the dead letters; (2) drop chunks of deleted sessions and
// chunks already stored (same content: a resent request; or this message's own row from an attempt
// that crashed before its ack); (3) insert the new chunk rows; (4) add the summaries of the chunks
// whose summary has not landed: a session's summary rows carry the highest sequence applied, and one
// INSERT lands atomically per partition (day of receipt), so max_seq >= seq means applied; (5) record
// deletions and start the mutations that remove the deleted sessions' rows.

/** The dead letter of a whole message that could not be read. */
function deadMessage(m: { subject: string; seq: number; data: Uint8Array }, reason: string) {
  const list = new DeadLetterList()
  list.message(m, reason)
  return list.items[0]!
}

export const DLQ_RECORDINGS_SUBJECT = 'dlq.recordings'

export interface RecordingLogMessage {
  seq: number
  subject: string
  data: Uint8Array
}

export interface RecordingProjectionContext {
  ch: ClickHouseClient
  /** where the deletes' mutations run (every shard in cluster mode) */
  admin: TableAdmin
  js: JetStreamClient
  tables: RecordingTables
  log: Logger
  /** project only these teams (replay of one project) */
  teams?: ReadonlySet<number>
  /** where poison messages go; none: they are logged and skipped (replay) */
  dlqSubject?: string
  /** fault injection for tests: runs after each write step (throw SimulatedCrash to stop dead) */
  afterStep?: (step: 'snapshots' | 'summary' | 'deletes') => Promise<void> | void
}

export interface RecordingBatchOutcome {
  poison: Set<number>
  chunks: number
  deletes: number
}

type Chunk = { seq: number; header: ChunkHeader; data: Buffer }
type Delete = { seq: number; header: DeleteHeader }

const dayOf = (iso: string) => iso.slice(0, 10)

/** `(team_id = A AND session_id IN (...)) OR ...` for the pairs given. */
export function sessionsWhere(pairs: Iterable<{ team_id: number; session_id: string }>): string {
  const byTeam = new Map<number, Set<string>>()
  for (const p of pairs) {
    let s = byTeam.get(p.team_id)
    if (!s) byTeam.set(p.team_id, (s = new Set()))
    s.add(p.session_id)
  }
  if (byTeam.size === 0) return '0'
  return [...byTeam]
    .map(
      ([t, ids]) => `(team_id = ${sqlNumber(t)} AND session_id IN (${[...ids].map(sqlString).join(', ')}))`,
    )
    .join(' OR ')
}

const sessionKey = (team: number, session: string) => `${team}\u0000${session}`

/** Projects a batch; `mayBeWritten` says which messages an earlier attempt may have written. */
export async function projectRecordings(
  ctx: RecordingProjectionContext,
  msgs: RecordingLogMessage[],
  mayBeWritten: (m: RecordingLogMessage) => boolean,
): Promise<RecordingBatchOutcome> {
  const { ch, tables } = ctx
  const poison = new Set<number>()
  const chunks: Chunk[] = []
  const deletes: Delete[] = []
  const inDoubt = new Set<number>()
  for (const m of msgs) {
    let decoded
    try {
      decoded = decodeMessage(m.data)
    } catch (err) {
      poison.add(m.seq)
      const reason = `not a recordings message: ${(err as Error).message}`
      if (ctx.dlqSubject) {
        await io(() => publishDeadLetter(ctx.js, ctx.dlqSubject!, deadMessage(m, reason)))
      } else ctx.log.warn({ seq: m.seq, reason }, 'recordings: skipped an unreadable message')
      continue
    }
    if (ctx.teams && !ctx.teams.has(decoded.header.team_id)) continue
    if (mayBeWritten(m)) inDoubt.add(m.seq)
    if ('data' in decoded) chunks.push({ seq: m.seq, header: decoded.header, data: decoded.data })
    else deletes.push({ seq: m.seq, header: decoded.header })
  }
  if (chunks.length === 0 && deletes.length === 0) return { poison, chunks: 0, deletes: 0 }

  const all = [...chunks.map((c) => c.header), ...deletes.map((d) => d.header)]
  const where = sessionsWhere(all)
  const deleted = new Set(
    (
      await io(() =>
        selectRows<{ team_id: string; session_id: string }>(
          ch,
          `SELECT DISTINCT team_id, session_id FROM ${tables.deleted} WHERE ${where}`,
        ),
      )
    ).map((r) => sessionKey(Number(r.team_id), r.session_id)),
  )
  for (const d of deletes) deleted.add(sessionKey(d.header.team_id, d.header.session_id))

  // Chunks already stored, by content; and which of them are this very message's row.
  const live = chunks.filter((c) => !deleted.has(sessionKey(c.header.team_id, c.header.session_id)))
  const stored = new Map<string, number>()
  if (live.length) {
    const ids = [...new Set(live.map((c) => c.header.chunk_id))].map(sqlString).join(', ')
    const rows = await io(() =>
      selectRows<{ team_id: string; session_id: string; chunk_id: string; part: number; s: string }>(
        ch,
        `SELECT team_id, session_id, chunk_id, part, min(_seq) AS s FROM ${tables.snapshots}
         WHERE (${sessionsWhere(live.map((c) => c.header))}) AND chunk_id IN (${ids})
         GROUP BY team_id, session_id, chunk_id, part`,
      ),
    )
    for (const r of rows) {
      stored.set(
        `${sessionKey(Number(r.team_id), r.session_id)}\u0000${r.chunk_id}\u0000${r.part}`,
        Number(r.s),
      )
    }
  }
  const toInsert: SnapshotRow[] = []
  const toSummarize: Chunk[] = []
  for (const c of live) {
    const key = `${sessionKey(c.header.team_id, c.header.session_id)}\u0000${c.header.chunk_id}\u0000${c.header.part}`
    const first = stored.get(key)
    if (first !== undefined && first !== c.seq) continue // the same chunk, sent again
    if (first === undefined) {
      stored.set(key, c.seq)
      toInsert.push({ header: c.header, data: c.data, seq: c.seq })
    }
    if (c.header.part === 0) toSummarize.push(c)
  }
  await io(() => insertSnapshotRows(ch, tables.snapshots, toInsert))
  await ctx.afterStep?.('snapshots')

  // Summaries: skip those of in-doubt chunks whose session/day already shows their sequence.
  const doubtful = toSummarize.filter((c) => inDoubt.has(c.seq))
  const applied = new Map<string, number>()
  if (doubtful.length) {
    const rows = await io(() =>
      selectRows<{ team_id: string; session_id: string; day: string; m: string }>(
        ch,
        `SELECT team_id, session_id, toString(day) AS day, maxMerge(max_seq) AS m FROM ${tables.summary}
         WHERE ${sessionsWhere(doubtful.map((c) => c.header))} GROUP BY team_id, session_id, day`,
      ),
    )
    for (const r of rows)
      applied.set(`${sessionKey(Number(r.team_id), r.session_id)}\u0000${r.day}`, Number(r.m))
  }
  const summarize = toSummarize.filter((c) => {
    const m = applied.get(
      `${sessionKey(c.header.team_id, c.header.session_id)}\u0000${dayOf(c.header.received_at)}`,
    )
    return m === undefined || m < c.seq
  })
  if (summarize.length) {
    await io(() =>
      ch.command({
        query: summaryInsert(
          tables,
          sessionsWhere(summarize.map((c) => c.header)),
          summarize.map((c) => c.seq),
        ),
      }),
    )
  }

  await ctx.afterStep?.('summary')
  if (deletes.length) {
    await applyDeletes(ctx, deletes)
    await ctx.afterStep?.('deletes')
  }
  return { poison, chunks: toInsert.length, deletes: deletes.length }
}

/** INSERT ... SELECT of the summary states of the chunk rows with the given sequences. */
export function summaryInsert(tables: RecordingTables, where: string, seqs: number[]): string {
  const sum = (c: string) => `sumState(toUInt64(${c}))`
  return `INSERT INTO ${tables.summary} (team_id, day, session_id, distinct_id, first_ms, last_ms, first_url,
  click_count, keypress_count, mouse_activity_count, active_ms, console_log_count, console_warn_count,
  console_error_count, size, event_count, message_count, snapshot_source, snapshot_library, max_seq)
SELECT team_id, toDate(received_at) AS day, session_id,
  argMinState(distinct_id, first_ms), minState(first_ms), maxState(last_ms),
  argMinState(first_url, if(first_url = '', toInt64(9223372036854775807), first_ms)),
  ${sum('click_count')}, ${sum('keypress_count')}, ${sum('mouse_activity_count')}, ${sum('active_ms')},
  ${sum('console_log_count')}, ${sum('console_warn_count')}, ${sum('console_error_count')},
  ${sum('size')}, ${sum('event_count')}, sumState(toUInt64(1)),
  argMinState(snapshot_source, first_ms), argMinState(snapshot_library, first_ms), maxState(_seq)
FROM ${tables.snapshots}
WHERE (${where}) AND part = 0 AND _seq IN (${seqs.map((s) => sqlNumber(s)).join(', ')})
GROUP BY team_id, day, session_id`
}

/**
 * The row of `tables.deleted` for a delete message at stream sequence `seq`. The API writes the same
 * row when it publishes the delete (so the recording is hidden at once); the table keeps one per
 * session, so the projector's copy, if both land, is the same row.
 */
export function deletedRow(header: DeleteHeader, seq: number): Record<string, unknown> {
  return {
    team_id: header.team_id,
    session_id: header.session_id,
    deleted_at: new Date(header.deleted_at).toISOString().slice(0, 19).replace('T', ' '),
    deleted_by: header.deleted_by ?? 0,
    _seq: seq,
  }
}

async function applyDeletes(ctx: RecordingProjectionContext, deletes: Delete[]): Promise<void> {
  const { ch, tables } = ctx
  const where = sessionsWhere(deletes.map((d) => d.header))
  const have = new Set(
    (
      await io(() =>
        selectRows<{ team_id: string; session_id: string }>(
          ch,
          `SELECT DISTINCT team_id, session_id FROM ${tables.deleted} WHERE ${where}`,
        ),
      )
    ).map((r) => sessionKey(Number(r.team_id), r.session_id)),
  )
  const rows: Record<string, unknown>[] = []
  for (const d of deletes) {
    const key = sessionKey(d.header.team_id, d.header.session_id)
    if (have.has(key)) continue
    have.add(key)
    rows.push(deletedRow(d.header, d.seq))
  }
  if (rows.length) await io(() => ch.insert({ table: tables.deleted, values: rows, format: 'JSONEachRow' }))
  // Issued again on a redelivery: removing rows that are already gone is harmless.
  await io(() => removeSessions(ctx.admin, tables, where))
}

/** Starts the mutations that remove the sessions' chunk and summary rows. */
export async function removeSessions(
  admin: TableAdmin,
  tables: Pick<RecordingTables, 'snapshots' | 'summary'>,
  where: string,
): Promise<void> {
  for (const t of [tables.snapshots, tables.summary]) await admin.alter(t, `DELETE WHERE ${where}`)
}

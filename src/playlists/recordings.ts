import { z } from 'zod'
import { type ClickHouseClient } from '../clickhouse/client.ts'
import { sqlString } from '../clickhouse/sql.ts'

// What the events projection knows of a session recording: a recording id is a `$session_id`
// seen on events (the `session_id` column), so its bounds and person come from those events.

export const RecordingSummary = z.object({
  id: z.string(),
  distinct_id: z.string().nullable(),
  start_time: z.string().nullable(),
  end_time: z.string().nullable(),
  /** seconds between the first and the last event of the session */
  recording_duration: z.number(),
  event_count: z.number().int(),
})
export type RecordingSummary = z.infer<typeof RecordingSummary>

interface Row {
  session_id: string
  start_ms: string | number
  end_ms: string | number
  distinct_id: string
  event_count: string | number
}

/** Summaries keyed by session id; sessions without events are absent. */
export async function summarizeSessions(
  ch: ClickHouseClient,
  teamId: number,
  sessionIds: string[],
): Promise<Map<string, RecordingSummary>> {
  const out = new Map<string, RecordingSummary>()
  if (sessionIds.length === 0) return out
  // uniqExact(uuid): the replacing table may still hold a not yet merged copy of an event.
  const rs = await ch.query({
    query: `SELECT session_id, min(timestamp_ms) AS start_ms, max(timestamp_ms) AS end_ms,
      argMin(distinct_id, timestamp_ms) AS distinct_id, uniqExact(uuid) AS event_count
      FROM events
      WHERE team_id = ${Math.trunc(teamId)} AND session_id IN (${sessionIds.map(sqlString).join(', ')})
      GROUP BY session_id`,
    format: 'JSONEachRow',
  })
  for (const r of await rs.json<Row>()) {
    const start = Number(r.start_ms)
    const end = Number(r.end_ms)
    out.set(r.session_id, {
      id: r.session_id,
      distinct_id: r.distinct_id,
      start_time: new Date(start).toISOString(),
      end_time: new Date(end).toISOString(),
      recording_duration: Math.round((end - start) / 1000),
      event_count: Number(r.event_count),
    })
  }
  return out
}

/** A recording pinned before any of its events arrived: known by id only. */
export const unknownRecording = (id: string): RecordingSummary => ({
  id,
  distinct_id: null,
  start_time: null,
  end_time: null,
  recording_duration: 0,
  event_count: 0,
})

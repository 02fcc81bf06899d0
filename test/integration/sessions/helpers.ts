// Runs HogQL for one project on the suite's ClickHouse, and writes the events PostHog's session
// tests create (straight into `events`, whose view feeds raw_sessions as the projector's inserts do).
import { v4 as uuidv4 } from 'uuid'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { insertEvents } from '../hogql/fixtures.ts'

// 64-bit integers come back quoted or not depending on the server's settings: numbers as text.
const asText = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(asText) : typeof v === 'number' ? String(v) : v

/** The rows a HogQL statement returns for `team` (JSONCompact rows, numbers as text). */
export async function hogql(
  ch: ClickHouseClient,
  team: number,
  query: string,
  values?: Record<string, unknown>,
): Promise<unknown[][]> {
  const compiled = await compileHogQL(query, {
    teamId: team,
    values,
  })
  const result = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  return asText(((await result.json()) as { data: unknown[][] }).data) as unknown[][]
}

let clock = Date.UTC(2024, 0, 10, 12, 0, 0)

/** An event of `session` (its $session_id), one second after the previous one unless `at` is given. */
export interface SessionEvent {
  event: string
  distinctId?: string
  session: string
  properties?: Record<string, unknown>
  /** 'YYYY-MM-DD HH:MM:SS' (UTC) */
  at?: string
  uuid?: string
  /** the person the event is stamped with (default: one for every event) */
  personId?: string
}

/** Inserts the events for `team`, one INSERT (as one projected batch would be). */
export async function insertSessionEvents(
  ch: ClickHouseClient,
  team: number,
  events: SessionEvent[],
): Promise<void> {
  await insertEvents(
    ch,
    events.map((e) => {
      clock += 1000
      const at = e.at ?? new Date(clock).toISOString().slice(0, 19).replace('T', ' ')
      return {
        team,
        uuid: e.uuid ?? uuidv4(),
        event: e.event,
        distinctId: e.distinctId ?? 'd1',
        personId: e.personId ?? '00000000-0000-4000-8000-000000000000',
        timestamp: at,
        properties: { $session_id: e.session, ...e.properties },
        sessionId: e.session,
      }
    }),
  )
}

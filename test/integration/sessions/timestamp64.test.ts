// raw_sessions_mv must be right for `events.timestamp` as it is (DateTime('UTC')) and as it becomes
// (DateTime64(6, 'UTC'), with no epoch-ms twin): the view's statement, on an events table of the
// new shape, keeps the microseconds of the first and last event.
import { describe, expect, it } from 'vitest'
import { selectRows } from '../../../src/clickhouse/client.ts'
import { sessionsViewDDL } from '../../../src/sessions/replay.ts'
import { ownDatabase } from '../../harness/index.ts'

describe('raw_sessions_mv over a DateTime64(6) timestamp', () => {
  it('builds the session from an events table without timestamp_ms', async () => {
    const ch = (await ownDatabase('burrow_sessions_ts64')).client
    // the events table as it will be: timestamp DateTime64(6, 'UTC'), timestamp_ms gone
    const [row] = await selectRows<{ statement: string }>(ch, 'SHOW CREATE TABLE events')
    const ddl = row!.statement
      .replace(/CREATE TABLE \S+/, 'CREATE TABLE events64')
      .replace("`timestamp` DateTime('UTC')", "`timestamp` DateTime64(6, 'UTC')")
      .replace(/\s*`timestamp_ms` Int64,/, '')
    expect(ddl).toContain("`timestamp` DateTime64(6, 'UTC')")
    expect(ddl).not.toContain('timestamp_ms')
    await ch.command({ query: ddl })
    await ch.command({ query: 'CREATE TABLE raw_sessions64 AS raw_sessions' })
    await ch.command({
      query: sessionsViewDDL({ view: 'raw_sessions64_mv', events: 'events64', sessions: 'raw_sessions64' }),
    })
    await ch.command({
      query: `INSERT INTO events64 (team_id, uuid, event, distinct_id, timestamp, properties, session_id) VALUES
        (7, generateUUIDv4(), '$pageview', 'd', '2024-05-01 10:00:00.123456', '{"$current_url":"https://a.io/1"}', 's'),
        (7, generateUUIDv4(), '$pageview', 'd', '2024-05-01 10:00:04.654321', '{"$current_url":"https://a.io/2"}', 's')`,
    })
    const rows = await selectRows<Record<string, string>>(
      ch,
      `SELECT toString(min(min_timestamp)) AS start, toString(max(max_timestamp)) AS end,
         argMinMerge(entry_url) AS entry, argMaxMerge(end_url) AS exit, toString(uniqMerge(pageview_uniq)) AS views
       FROM raw_sessions64 WHERE team_id = 7 GROUP BY session_id`,
    )
    expect(rows).toEqual([
      {
        start: '2024-05-01 10:00:00.123456',
        end: '2024-05-01 10:00:04.654321',
        entry: 'https://a.io/1',
        exit: 'https://a.io/2',
        views: '2',
      },
    ])
  })
})

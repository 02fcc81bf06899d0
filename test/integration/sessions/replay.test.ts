// Sessions survive `burrow replay`: the fresh events table feeds a fresh raw_sessions through a view
// of its own, both swap in together, and afterwards live projection feeds the new table. Runs the
// real projector and replay on a database of its own (replay swaps tables), with this file's log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectRows, type ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import type { RunningProjector } from '../../../src/projectors/index.ts'
import { replay } from '../../../src/projectors/replay.ts'
import { createTestProject, nats, ownDatabase } from '../../harness/index.ts'
import { ev, runProjector, type TestLog, testLog, waitIdle } from '../projectors/helpers.ts'
import { hogql } from './helpers.ts'

let ch: ClickHouseClient
let log: TestLog
let projector: RunningProjector
let X: number
let Y: number

beforeAll(async () => {
  ch = (await ownDatabase('burrow_sessions_replay')).client
  log = await testLog(await nats())
  X = (await createTestProject('sessions replay x')).id
  Y = (await createTestProject('sessions replay y')).id
  projector = await runProjector(log, ch, [X, Y])
})
afterAll(async () => {
  await projector?.stop()
})

const FIELDS = `session_id, distinct_id, $start_timestamp, $end_timestamp, $entry_current_url, $end_current_url,
  $pageview_count, $autocapture_count, $event_count, $channel_type, $is_bounce, $entry_utm_source, arraySort($urls)`

const sessions = async (team: number) => hogql(ch, team, `select ${FIELDS} from sessions order by session_id`)

function visits(team: number) {
  const url = (p: string) => `https://shop-${team}.io${p}`
  return [
    ev(
      team,
      '$pageview',
      'a',
      { $session_id: 's1', $current_url: url('/'), utm_source: 'google', utm_medium: 'cpc' },
      '2024-01-31T23:59:00.000Z',
    ),
    ev(team, '$autocapture', 'a', { $session_id: 's1', $current_url: url('/') }, '2024-02-01T00:00:30.000Z'),
    ev(team, '$pageview', 'a', { $session_id: 's1', $current_url: url('/cart') }, '2024-02-01T00:01:00.000Z'),
    ev(
      team,
      '$pageview',
      'b',
      { $session_id: 's2', $current_url: url('/'), $referring_domain: 'www.bing.com' },
      '2024-02-03T10:00:00.000Z',
    ),
    ev(team, 'no session', 'b', {}, '2024-02-03T10:00:01.000Z'),
  ]
}

describe('sessions through replay', () => {
  it('a replay gives the same sessions, and live projection feeds the swapped table', async () => {
    // one event per message, so the live sessions come from many inserts
    for (const e of [...visits(X), ...visits(Y)]) await log.publish('live', [e])
    await waitIdle(log, projector)
    const liveX = await sessions(X)
    const liveY = await sessions(Y)
    expect(liveX.map((r) => r.slice(0, 2))).toEqual([
      ['s1', 'a'],
      ['s2', 'b'],
    ])
    // worked out by hand from visits(): s1 spans midnight (two days' rows), 3 events, 2 page views
    expect(liveX[0]).toEqual([
      's1',
      'a',
      '2024-01-31 23:59:00.000000',
      '2024-02-01 00:01:00.000000',
      `https://shop-${X}.io/`,
      `https://shop-${X}.io/cart`,
      '2',
      '1',
      '3',
      'Paid Search',
      '0',
      'google',
      expect.arrayContaining([`https://shop-${X}.io/`, `https://shop-${X}.io/cart`]),
    ])
    expect(liveX[1]!.slice(6, 11)).toEqual(['1', '0', '1', 'Organic Search', '1'])

    const opts = {
      nc: log.nc,
      ch,
      log: createLogger('silent'),
      stream: log.stream,
      subjectPrefix: log.prefix,
      durablePrefix: `${log.prefix}-projector`,
      batchSize: 4,
    }
    // the whole log, then one project (the other project's sessions come with its copied events)
    for (const o of [opts, { ...opts, project: X }]) {
      const done = await replay(o)
      expect(done.swapped).toBe(true)
      expect(await sessions(X)).toEqual(liveX)
      expect(await sessions(Y)).toEqual(liveY)
    }

    // one view feeds raw_sessions, from the live events table; the replays' tables and views are gone
    const objects = await selectRows<{ name: string }>(
      ch,
      `SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 'raw_sessions%' ORDER BY name`,
    )
    expect(objects.map((o) => o.name)).toEqual(['raw_sessions', 'raw_sessions_mv'])
    const [deps] = await selectRows<{ d: string[] }>(
      ch,
      "SELECT dependencies_table AS d FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
    )
    expect(
      deps!.d.filter((d) => d.startsWith('raw_sessions')),
      JSON.stringify(deps),
    ).toEqual(['raw_sessions_mv'])

    // live projection continues into the swapped tables: the session gets its new last page
    const later = ev(
      X,
      '$pageview',
      'a',
      { $session_id: 's1', $current_url: 'https://later.io/' },
      '2024-02-01T00:02:00.000Z',
    )
    await log.publish('live', [later])
    await waitIdle(log, projector)
    expect(
      await hogql(ch, X, "select $end_current_url, $pageview_count from sessions where session_id = 's1'"),
    ).toEqual([['https://later.io/', '3']])
  })
})

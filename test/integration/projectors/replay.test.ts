import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createLogger } from '../../../src/observability/logger.ts'
import type { RunningProjector } from '../../../src/projectors/index.ts'
import { type ReplayProgress, replay } from '../../../src/projectors/replay.ts'
import { type ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { createTestProject, nats, ownDatabase } from '../../harness/index.ts'
import { ev, PERSON_NAMESPACE, rows, runProjector, type TestLog, testLog, waitIdle } from './helpers.ts'

// Replay swaps tables, so it runs on a database of its own; the log is this file's own stream.
let ch: ClickHouseClient
let log: TestLog
let projector: RunningProjector
let X: number
let Y: number

beforeAll(async () => {
  ch = (await ownDatabase('burrow_replay')).client
  log = await testLog(await nats())
  X = (await createTestProject('replay x')).id
  Y = (await createTestProject('replay y')).id
  projector = await runProjector(log, ch, [X, Y])
})
afterAll(async () => {
  await projector?.stop()
})

async function views(teams: number[]) {
  const t = teams.join(',')
  return {
    events: await rows(
      ch,
      `SELECT toString(uuid) AS u, event, distinct_id, toString(person_id) AS p, timestamp,
              properties, person_properties, elements_chain, session_id,
              "$group_0", "$group_1", "$group_2", "$group_3", "$group_4", created_at, _seq, _offset
       FROM events WHERE team_id IN (${t}) ORDER BY u`,
    ),
    persons: await rows(
      ch,
      `SELECT team_id, toString(id) AS i, argMax(properties, version) AS props, argMax(is_identified, version) AS ident,
              argMax(is_deleted, version) AS del, argMax(created_at, version) AS created
       FROM person WHERE team_id IN (${t}) GROUP BY team_id, id ORDER BY team_id, i`,
    ),
    distinctIds: await rows(
      ch,
      `SELECT team_id, distinct_id, toString(argMax(person_id, version)) AS p FROM person_distinct_id
       WHERE team_id IN (${t}) GROUP BY team_id, distinct_id ORDER BY team_id, distinct_id`,
    ),
    overrides: await rows(
      ch,
      `SELECT team_id, toString(old_person_id) AS o, toString(argMax(override_person_id, version)) AS n
       FROM person_overrides WHERE team_id IN (${t}) GROUP BY team_id, old_person_id ORDER BY team_id, o`,
    ),
    groups: await rows(
      ch,
      `SELECT team_id, group_type_index, group_key, argMax(properties, version) AS props FROM groups
       WHERE team_id IN (${t}) GROUP BY team_id, group_type_index, group_key ORDER BY team_id, group_type_index, group_key`,
    ),
    types: await rows(
      ch,
      `SELECT DISTINCT team_id, group_type, group_type_index FROM group_type_mapping
       WHERE team_id IN (${t}) ORDER BY team_id, group_type_index`,
    ),
    usage: await rows(
      ch,
      `SELECT * FROM feature_flag_usage WHERE team_id IN (${t}) ORDER BY team_id, flag, variant, day, source`,
    ),
  }
}

function history(team: number) {
  return [
    ev(
      team,
      '$pageview',
      'anon-1',
      { $current_url: 'https://x.io/', $session_id: 's1' },
      '2023-12-30T10:00:00Z',
    ),
    ev(team, '$pageview', 'user-1', { $set: { plan: 'free' } }, '2024-01-02T10:00:00.000Z'),
    ev(
      team,
      '$identify',
      'user-1',
      { $anon_distinct_id: 'anon-1', $set: { email: `u@${team}.io` } },
      '2024-01-02T10:01:00.000Z',
    ),
    ev(
      team,
      '$groupidentify',
      'user-1',
      { $group_type: 'org', $group_key: 'o1', $group_set: { n: 1 } },
      '2024-01-03T00:00:00.000Z',
    ),
    ev(
      team,
      '$feature_flag_called',
      'user-1',
      { $feature_flag: 'f', $feature_flag_response: 'a', $groups: { org: 'o1' } },
      '2024-02-01T00:00:00.000Z',
    ),
    ev(team, '$pageview', 'pl', { $process_person_profile: false }, '2024-02-02T00:00:00.000Z'),
    ev(team, '$create_alias', 'user-1', { alias: 'pl' }, '2024-02-03T00:00:00.000Z'),
  ]
}

describe('replay', () => {
  it('rebuilds a project into fresh tables and swaps them in; twice gives identical views', async () => {
    for (const e of history(X)) await log.publish('live', [e])
    for (const e of history(Y)) await log.publish('live', [e])
    await log.publish('historical', [ev(X, 'imported', 'anon-1', {}, '2020-01-01T00:00:00.000Z')])
    await waitIdle(log, projector)
    const live = await views([X, Y])
    expect(live.events).toHaveLength(15)

    const seen: ReplayProgress[] = []
    const opts = {
      nc: log.nc,
      ch,
      log: createLogger('silent'),
      project: X,
      stream: log.stream,
      subjectPrefix: log.prefix,
      durablePrefix: `${log.prefix}-projector`,
      batchSize: 3,
      progress: (p: ReplayProgress) => seen.push(p),
    }
    const first = await replay(opts)
    expect(first.swapped).toBe(true)
    expect(first.events).toBe(8)
    expect(seen.at(-1)).toMatchObject({ phase: 'done' })
    expect(seen.some((p) => p.phase === 'build' && p.position > 0 && p.end >= p.position)).toBe(true)
    // the running projector switches to the replayed identity namespace when it sees the resume (a
    // KV watch: it may arrive just after replay() returned)
    await vi.waitFor(async () => expect(await projector.store.namespaceOf(X)).toBe(`r${first.id}`), {
      timeout: 10_000,
      interval: 50,
    })
    const afterFirst = await views([X, Y])
    // the rebuilt views equal what live projection built, batch boundaries notwithstanding
    expect(afterFirst).toEqual(live)

    // live projection continues on the swapped tables and the replayed identity state
    const later = ev(X, '$pageview', 'pl', {}, '2024-03-01T00:00:00.000Z')
    await log.publish('live', [later])
    await waitIdle(log, projector)
    const [row] = await rows<{ p: string }>(
      ch,
      `SELECT toString(person_id) AS p FROM events WHERE uuid = '${later.uuid}'`,
    )
    // $identify merged anon-1's person into user-1's (both had one), then the alias added 'pl' to it
    expect(row!.p).toBe(uuidv5(`${X}:user-1`, PERSON_NAMESPACE))
    const before = await views([X, Y])

    const second = await replay({ ...opts, progress: undefined })
    expect(second.swapped).toBe(true)
    expect(await views([X, Y])).toEqual(before)
  })
})

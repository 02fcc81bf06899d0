import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningProjector } from '../../../src/projectors/index.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import { ev, PERSON_NAMESPACE, rows, runProjector, type TestLog, testLog, waitIdle } from './helpers.ts'

const ch = clickhouse()
let log: TestLog
let team: number
let projector: RunningProjector

beforeAll(async () => {
  log = await testLog(await nats())
  team = (await createTestProject('flag usage')).id
  projector = await runProjector(log, ch, team)
})
afterAll(async () => {
  await projector?.stop()
})

describe('feature flag usage', () => {
  it('counts $feature_flag_called events and $feature/ properties per flag, variant and day', async () => {
    const day1 = '2024-03-01T10:00:00.000Z'
    const day1b = '2024-03-01T18:00:00.000Z'
    const day2 = '2024-03-02T09:00:00.000Z'
    const called = (d: string, flag: string, response: unknown, at: string) =>
      ev(team, '$feature_flag_called', d, { $feature_flag: flag, $feature_flag_response: response }, at)
    const events = [
      called('ff-a', 'beta', true, day1),
      called('ff-a', 'beta', true, day1b),
      called('ff-b', 'beta', true, day1),
      called('ff-c', 'beta', false, day1),
      called('ff-a', 'exp', 'test', day2),
      called('ff-b', 'exp', 'control', day2),
      ev(team, '$pageview', 'ff-a', { '$feature/exp': 'test', '$feature/beta': true }, day2),
      ev(team, '$pageview', 'ff-b', { '$feature/exp': 'control' }, day2),
      // ff-a and ff-b become one person: the view counts persons after the merge
      ev(team, '$pageview', 'ff-b', {}, day2),
      ev(team, '$identify', 'ff-a', { $anon_distinct_id: 'ff-b' }, day2),
    ]
    for (const e of events) await log.publish('live', [e])
    await waitIdle(log, projector)

    const usage = await rows<Record<string, string>>(
      ch,
      `SELECT source, flag, variant, toString(day) AS day, calls, unique_persons FROM feature_flag_usage
       WHERE team_id = ${team} ORDER BY source, flag, day, variant`,
    )
    expect(
      usage.map((u) => [u.source, u.flag, u.variant, u.day, Number(u.calls), Number(u.unique_persons)]),
    ).toEqual([
      ['called', 'beta', 'false', '2024-03-01', 1, 1],
      ['called', 'beta', 'true', '2024-03-01', 3, 1],
      ['called', 'exp', 'control', '2024-03-02', 1, 1],
      ['called', 'exp', 'test', '2024-03-02', 1, 1],
      ['property', 'beta', 'true', '2024-03-02', 1, 1],
      ['property', 'exp', 'control', '2024-03-02', 1, 1],
      ['property', 'exp', 'test', '2024-03-02', 1, 1],
    ])
    // before the merge ff-a and ff-b were two persons: 'beta'/'true' on day 1 had two stamped ids
    const stamped = await rows<{ n: string }>(
      ch,
      `SELECT uniqExact(person_id) AS n FROM events WHERE team_id = ${team} AND distinct_id IN ('ff-a', 'ff-b')`,
    )
    expect(Number(stamped[0]!.n)).toBe(2)
    expect(uuidv5(`${team}:ff-a`, PERSON_NAMESPACE)).not.toBe(uuidv5(`${team}:ff-b`, PERSON_NAMESPACE))
  })
})

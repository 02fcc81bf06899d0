import { v5 as uuidv5 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import { connectNats } from '../../../src/jetstream/connection.ts'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { createTestProject, mutationsDone, nats, ownDatabase, stack } from '../../harness/index.ts'
import {
  ev,
  rows,
  runProjector,
  type TestLog,
  testLog,
  waitForRows,
  waitIdle,
  writerWithFault,
} from './helpers.ts'

let ch: ClickHouseClient
let log: TestLog

beforeAll(async () => {
  // a database of its own: the test mutates `events`, which rewrites every part of the table
  ch = (await ownDatabase('burrow_exactly_once')).client
  log = await testLog(await nats())
})

// Three months, four chunks, identity changes in the middle: the batch writes several parts.
function publishBatch(team: number) {
  const months = ['2023-11-20T10:00:00.000Z', '2023-12-20T10:00:00.000Z', '2024-01-20T10:00:00.000Z']
  const chunks = months.map((m, i) =>
    Array.from({ length: 5 }, (_, j) =>
      ev(team, 'step', `anon-${i}`, { i, j }, new Date(Date.parse(m) + j * 1000).toISOString()),
    ),
  )
  const identify = [
    ev(
      team,
      '$identify',
      'user-1',
      { $anon_distinct_id: 'anon-0', $set: { email: 'u@x.io' } },
      '2024-01-21T00:00:00.000Z',
    ),
    ev(team, 'after', 'anon-0', {}, '2024-01-22T00:00:00.000Z'),
  ]
  return [...chunks, identify]
}

describe('exactly once into ClickHouse', () => {
  it('after a crash between insert and ack, with one month half-written, every event is there once', async () => {
    const team = (await createTestProject('exactly once')).id
    const batches = publishBatch(team)
    for (const b of batches) await log.publish('live', b)
    const total = batches.flat().length

    const ncA = await connectNats(stack().natsUrl, 'projector-a')
    let crashed = false
    const a = await runProjector(log, ch, team, {
      nc: ncA,
      lanes: ['live'],
      maxWaitMs: 500,
      ackWaitMs: 5000,
      writer: writerWithFault(ch, async ({ events }) => {
        if (crashed) return
        crashed = true
        expect(events.length).toBe(total)
        // The insert of December "did not land": its part is gone, the other months' parts stayed.
        await ch.command({
          query: `ALTER TABLE events DELETE WHERE team_id = ${team} AND toYYYYMM(timestamp) = 202312`,
        })
        await mutationsDone(ch, 'events')
        // The process dies: its connection is gone before anything is acknowledged.
        await ncA.close()
        throw new Error('simulated crash')
      }),
    })
    await waitForRows(ch, `SELECT 1 FROM events WHERE team_id = ${team}`, total - 5)
    for (let i = 0; i < 100 && !ncA.isClosed(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(crashed).toBe(true)
    await a.stop()

    const b = await runProjector(log, ch, team, { lanes: ['live'], ackWaitMs: 5000 })
    try {
      await waitIdle(log, b)
      const counts = await rows<{ uuid: string; n: string }>(
        ch,
        `SELECT uuid, count() AS n FROM events WHERE team_id = ${team} GROUP BY uuid`,
      )
      expect(counts).toHaveLength(total)
      expect(counts.every((c) => Number(c.n) === 1)).toBe(true)
      // The redelivered batch was stamped as the first attempt: anon-0 got a person on its first event
      // (uuid v5 of "<team>:anon-0" in PostHog's namespace); $identify added user-1 to that person, so
      // every event of both ids carries it, before and after the identify.
      const expected = uuidv5(`${team}:anon-0`, '932979b4-65c3-4424-8467-0b66ec27bc22')
      const persons = await rows<{ person_id: string }>(
        ch,
        `SELECT DISTINCT toString(person_id) AS person_id FROM events
         WHERE team_id = ${team} AND distinct_id IN ('anon-0', 'user-1')`,
      )
      expect(persons).toEqual([{ person_id: expected }])
      const [pdi] = await rows<{ n: string }>(
        ch,
        `SELECT uniqExact(person_id) AS n FROM (
           SELECT distinct_id, argMax(person_id, version) AS person_id FROM person_distinct_id
           WHERE team_id = ${team} AND distinct_id IN ('anon-0', 'user-1') GROUP BY distinct_id)`,
      )
      expect(Number(pdi!.n)).toBe(1)
    } finally {
      await b.stop()
    }
  })
})

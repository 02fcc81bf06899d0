import { v5 as uuidv5 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import { BUCKETS } from '../../../schema/jetstream.ts'
import { type ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { bucket } from '../../../src/jetstream/connection.ts'
import { watermarkKey } from '../../../src/projectors/identity-keys.ts'
import { readJson } from '../../../src/projectors/identity-store/pointers.ts'
import type { BatchWriter } from '../../../src/projectors/batch.ts'
import { replay } from '../../../src/projectors/replay.ts'
import { REPLAY_STATE_KEY, type ReplayState } from '../../../src/projectors/replay-state.ts'
import { createTestProject, nats, ownDatabase } from '../../harness/index.ts'
import { ClickHouseWriter } from '../../../src/projectors/writer.ts'
import { ev, PERSON_NAMESPACE, replayOptions, rows, type TestLog, testLog } from './helpers.ts'

// A replay decides a batch while the rows of the one before are written and the one before that is
// committed (replay-pass.ts). A replay that dies there leaves rows in its tables beyond its
// watermark; run again, it resumes and every event is there once, with the persons an uninterrupted
// projection gives them.

let ch: ClickHouseClient
let log: TestLog
let team: number

beforeAll(async () => {
  ch = (await ownDatabase('burrow_replay_resume')).client
  log = await testLog(await nats())
  team = (await createTestProject('replay resume')).id
})

const person = (distinctId: string) => uuidv5(`${team}:${distinctId}`, PERSON_NAMESPACE)

describe('a replay that crashed mid-pipeline', () => {
  it('resumes with every event once and the same person ids', async () => {
    // Each user is first anonymous, identifies one message later and goes on as itself, so that the
    // identity decisions cross the batches (two messages each) and the crash.
    const users = [1, 2, 3, 4, 5]
    const expected = new Map<string, string>()
    let last = 0
    for (const k of users) {
      const anon = ev(team, '$pageview', `anon-${k}`, { $session_id: `s${k}` })
      last = await log.publish('live', [anon])
      expected.set(anon.uuid, person(`anon-${k}`))
    }
    for (const k of users) {
      const identify = ev(team, '$identify', `user-${k}`, { $anon_distinct_id: `anon-${k}` })
      const after = ev(team, '$pageview', `user-${k}`, { $set: { n: k } })
      last = await log.publish('live', [identify, after])
      // user-k had no person: it joins anon-k's
      expected.set(identify.uuid, person(`anon-${k}`))
      expected.set(after.uuid, person(`anon-${k}`))
    }
    for (const k of users) {
      const later = ev(team, 'later', `user-${k}`)
      last = await log.publish('live', [later])
      expected.set(later.uuid, person(`anon-${k}`))
    }

    const opts = { ...replayOptions(log, ch, team), to: last, batchSize: 2 }
    // Every event row sent to ClickHouse, by log position: a background merge of the
    // ReplacingMergeTree would hide a row written twice from a count in the table.
    const sent = new Map<string, number>()
    const counting = (inner: BatchWriter): BatchWriter => ({
      async write(batch) {
        for (const r of batch.events)
          sent.set(`${r.seq}:${r.offset}`, (sent.get(`${r.seq}:${r.offset}`) ?? 0) + 1)
        return inner.write(batch)
      },
    })
    let writes = 0
    await expect(
      replay({
        ...opts,
        // The third batch's INSERT lands with its first event row only, then the process dies: the
        // batch before it may be committing, the one after it being decided.
        writer: (tables) => {
          const real = new ClickHouseWriter(ch, tables)
          return {
            async write(batch) {
              if (++writes !== 3) return counting(real).write(batch)
              await counting(real).write({ ...batch, events: batch.events.slice(0, 1) })
              throw new Error('simulated crash')
            },
          }
        },
      }),
    ).rejects.toThrow('simulated crash')

    const kv = await bucket(log.nc, BUCKETS.identity)
    const state = (await kv.get(REPLAY_STATE_KEY))!.json<ReplayState>()
    const table = `events_replay_${state.id}`
    const [{ n: writtenBefore } = { n: '0' }] = await rows<{ n: string }>(
      ch,
      `SELECT count() AS n FROM ${table}`,
    )
    // two batches of up to two messages (a batch is taken as the feed has it) and a row were written
    expect(Number(writtenBefore)).toBeGreaterThanOrEqual(3)
    const committed = (await readJson<{ seq: number }>(kv, watermarkKey(`r${state.id}`, 'replay')))?.seq ?? 0
    // the crashed batch's rows are in the table, its identity state not committed
    const [{ m } = { m: '0' }] = await rows<{ m: string }>(ch, `SELECT max(_seq) AS m FROM ${table}`)
    expect(committed).toBeLessThan(Number(m))

    const resumed = await replay({ ...opts, writer: (tables) => counting(new ClickHouseWriter(ch, tables)) })
    expect(resumed.resumed).toBe(true)
    expect(resumed.id).toBe(state.id)
    expect(resumed.swapped).toBe(false)
    const got = await rows<{ u: string; p: string; c: string }>(
      ch,
      `SELECT toString(uuid) AS u, toString(any(person_id)) AS p, count() AS c FROM ${resumed.tables.events}
       GROUP BY u ORDER BY u`,
    )
    // each event sent once over both runs: the crashed batch's row was reconciled, not sent again
    expect([...sent.values()]).toEqual(Array.from({ length: expected.size }, () => 1))
    expect(got.map((r) => [r.u, r.p, Number(r.c)])).toEqual(
      [...expected].sort(([a], [b]) => a.localeCompare(b)).map(([u, p]) => [u, p, 1]),
    )
  })
})

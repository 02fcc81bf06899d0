// The recordings projector under crash: a batch whose rows half landed (one month's part missing)
// is redelivered and reconciled, so every chunk is stored once and counted once in the summary.
// This file has a log, a consumer and tables of its own (the shared ones belong to every Burrow).
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectRows } from '../../../src/clickhouse/client.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { SimulatedCrash } from '../../../src/recordings/projector.ts'
import {
  type RecordingsProjectorOptions,
  startRecordingsProjector,
} from '../../../src/recordings/projector.ts'
import { ensureRecordingsLog } from '../../../src/recordings/stream.ts'
import {
  LIVE_RECORDING_TABLES,
  RECORDING_TABLE_KINDS,
  suffixedRecordingTables,
} from '../../../src/recordings/tables.ts'
import { clickhouse, mutationsDone, nats, stack, uniqueTeamId } from '../../harness/index.ts'
import { chunkMessages, rr } from './helpers.ts'

const id = randomBytes(4).toString('hex')
const stream = `RTEST_${id}`
const prefix = `rtest_${id}`
const tables = suffixedRecordingTables(`_test_${id}`)
const ch = clickhouse()
let nc: NatsConnection

beforeAll(async () => {
  nc = await nats()
  await ensureRecordingsLog(nc, { maxAgeDays: 0 })
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], duplicate_window: 120e9 })
  for (const k of RECORDING_TABLE_KINDS) {
    await ch.command({ query: `CREATE TABLE IF NOT EXISTS ${tables[k]} AS ${LIVE_RECORDING_TABLES[k]}` })
  }
})
afterAll(async () => {
  for (const k of RECORDING_TABLE_KINDS) await ch.command({ query: `DROP TABLE IF EXISTS ${tables[k]}` })
})

/** One request's messages (a full snapshot and a click), received at `at`, events a minute earlier. */
const request = (team: number, session: string, at: string, t: number) =>
  chunkMessages(team, session, at, [rr.full(t), rr.click(t + 1000)])

async function publish(msgs: { payload: Buffer; msgId: string }[], suffix = '') {
  const js = jetstream(nc)
  for (const m of msgs) await js.publish(`${prefix}.0`, m.payload, { msgID: m.msgId + suffix })
}

async function idle(durable: string) {
  const jsm = await jetstreamManager(nc)
  for (let i = 0; i < 300; i++) {
    const info = await jsm.consumers.info(stream, durable)
    if (info.num_pending === 0 && info.num_ack_pending === 0) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('recordings projector not idle')
}

const projector = (durable: string, team: number, extra: Partial<RecordingsProjectorOptions> = {}) =>
  startRecordingsProjector({
    nc,
    ch,
    log: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    batchSize: 50,
    maxWaitMs: 300,
    ackWaitMs: 5000,
    stream,
    filterSubject: `${prefix}.>`,
    durable,
    tables,
    teams: new Set([team]),
    ...extra,
  })

async function state(team: number, session: string) {
  const chunks = await selectRows<{ chunk_id: string; n: string }>(
    ch,
    `SELECT chunk_id, count() AS n FROM ${tables.snapshots} WHERE team_id = ${team} AND session_id = '${session}'
     GROUP BY chunk_id ORDER BY chunk_id`,
  )
  const [summary] = await selectRows<{ clicks: string; messages: string; seq: string }>(
    ch,
    `SELECT sumMerge(click_count) AS clicks, sumMerge(message_count) AS messages, maxMerge(max_seq) AS seq
     FROM ${tables.summary} WHERE team_id = ${team} AND session_id = '${session}'`,
  )
  return {
    chunks: chunks.map((c) => Number(c.n)),
    clicks: Number(summary!.clicks),
    messages: Number(summary!.messages),
  }
}

describe('the recordings projector, exactly once', () => {
  for (const step of ['snapshots', 'summary'] as const) {
    it(`after a crash following the ${step} insert, with one month's part lost, stores and counts each chunk once`, async () => {
      const team = uniqueTeamId()
      const session = `s-${step}`
      const durable = `${prefix}-${step}`
      // four requests of one session, received in January and February: parts in two partitions
      const msgs = [
        ...(await request(team, session, '2024-01-31T23:00:00Z', Date.parse('2024-01-31T22:59:00Z'))),
        ...(await request(team, session, '2024-01-31T23:30:00Z', Date.parse('2024-01-31T23:29:00Z'))),
        ...(await request(team, session, '2024-02-01T00:10:00Z', Date.parse('2024-02-01T00:09:00Z'))),
        ...(await request(team, session, '2024-02-01T00:20:00Z', Date.parse('2024-02-01T00:19:00Z'))),
      ]
      await publish(msgs)

      const own = await connectNats(stack().natsUrl, 'recordings-projector-a')
      let crashed = false
      const table = step === 'snapshots' ? tables.snapshots : tables.summary
      const month = step === 'snapshots' ? 'toYYYYMM(received_at) = 202401' : 'toYYYYMM(day) = 202402'
      const a = await projector(durable, team, {
        nc: own,
        afterStep: async (s) => {
          if (s !== step || crashed) return
          crashed = true
          // this month's part of the INSERT "did not land"
          await ch.command({ query: `ALTER TABLE ${table} DELETE WHERE team_id = ${team} AND ${month}` })
          await mutationsDone(ch, tables.snapshots)
          await mutationsDone(ch, tables.summary)
          throw new SimulatedCrash()
        },
        onCrash: () => own.close(),
      })
      for (let i = 0; i < 200 && !own.isClosed(); i++) await new Promise((r) => setTimeout(r, 50))
      expect(crashed).toBe(true)
      await a.stop()

      const b = await projector(durable, team)
      try {
        await idle(durable)
        expect(await state(team, session)).toEqual({ chunks: [1, 1, 1, 1], clicks: 4, messages: 4 })
        // a request resent after JetStream's duplicate window: same chunks, new message ids
        await publish(msgs, '-resent')
        await idle(durable)
        expect(await state(team, session)).toEqual({ chunks: [1, 1, 1, 1], clicks: 4, messages: 4 })
      } finally {
        await b.stop()
      }
    })
  }

  it('sends an unreadable message to the dead letters and projects its neighbours', async () => {
    const team = uniqueTeamId()
    const durable = `${prefix}-poison`
    const js = jetstream(nc)
    const before = await request(team, 'p', '2024-03-01T10:00:00Z', Date.parse('2024-03-01T09:59:00Z'))
    const after = await request(team, 'p', '2024-03-01T10:05:00Z', Date.parse('2024-03-01T10:04:00Z'))
    await publish(before)
    const bad = await js.publish(`${prefix}.0`, Buffer.from('not a recording'))
    await publish(after)
    const sub = nc.subscribe('dlq.recordings', { max: 1, timeout: 20_000 })
    const p = await projector(durable, team)
    try {
      for await (const m of sub) {
        expect(m.headers?.get('Burrow-Dlq-Seq')).toBe(String(bad.seq))
        expect(m.string()).toBe('not a recording')
        break
      }
      await idle(durable)
      expect(await state(team, 'p')).toEqual({ chunks: [1, 1], clicks: 2, messages: 2 })
    } finally {
      await p.stop()
    }
  })
})

// `burrow replay` for recordings: fresh tables rebuilt from the log, retention applied, swapped in.
// Replay swaps tables, so this file runs on a database of its own, with its own log and consumer.
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ClickHouseClient, selectRows } from '../../../src/clickhouse/client.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { PlaylistStore } from '../../../src/playlists/store.ts'
import { encodeMessage } from '../../../src/recordings/message.ts'
import {
  type RunningRecordingsProjector,
  startRecordingsProjector,
} from '../../../src/recordings/projector.ts'
import { replayRecordings } from '../../../src/recordings/replay.ts'
import { ensureRecordingsLog } from '../../../src/recordings/stream.ts'
import { mutationsDone, nats, ownDatabase, uniqueTeamId } from '../../harness/index.ts'
import { chunkMessages, rr } from './helpers.ts'

const id = randomBytes(4).toString('hex')
const stream = `RREPLAY_${id}`
const prefix = `rreplay_${id}`
const durable = `${prefix}-projector`
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent')
let ch: ClickHouseClient
let nc: NatsConnection
let live: RunningRecordingsProjector
const [X, Y] = [uniqueTeamId(), uniqueTeamId()].sort((a, b) => a - b) as [number, number]

const startLive = () =>
  startRecordingsProjector({
    nc,
    ch,
    log,
    batchSize: 50,
    maxWaitMs: 100,
    stream,
    filterSubject: `${prefix}.>`,
    durable,
    teams: new Set([X, Y]),
  })

beforeAll(async () => {
  ch = (await ownDatabase('burrow_rec_replay')).client
  nc = await nats()
  await ensureRecordingsLog(nc, { maxAgeDays: 0 })
  await (
    await jetstreamManager(nc)
  ).streams.add({ name: stream, subjects: [`${prefix}.>`], duplicate_window: 120e9 })
  live = await startLive()
})
afterAll(async () => {
  await live?.stop()
})

async function publish(msgs: { payload: Buffer }[]) {
  const js = jetstream(nc)
  for (const m of msgs) await js.publish(`${prefix}.0`, m.payload)
}

async function idle() {
  const jsm = await jetstreamManager(nc)
  for (let i = 0; i < 400; i++) {
    const info = await jsm.consumers.info(stream, durable)
    if (info.num_pending === 0 && info.num_ack_pending === 0) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('projector not idle')
}

type Row = Record<string, string | number>

async function views() {
  return {
    chunks: await selectRows<Row>(
      ch,
      `SELECT team_id, session_id, chunk_id, part, cityHash64(data) AS h, _seq FROM session_replay_snapshots
       WHERE team_id IN (${X}, ${Y}) ORDER BY team_id, session_id, chunk_id, part`,
    ),
    sessions: await selectRows<Row>(
      ch,
      `SELECT team_id, session_id, minMerge(first_ms) AS s, maxMerge(last_ms) AS e, sumMerge(click_count) AS c,
              sumMerge(message_count) AS m, argMinMerge(first_url) AS u
       FROM session_replay_events WHERE team_id IN (${X}, ${Y}) GROUP BY team_id, session_id ORDER BY team_id, session_id`,
    ),
    deleted: await selectRows<Row>(
      ch,
      `SELECT team_id, session_id FROM session_replay_deleted WHERE team_id IN (${X}, ${Y}) ORDER BY team_id, session_id`,
    ),
  }
}

const recent = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000).toISOString()

describe('replaying recordings', () => {
  it('rebuilds the same views, applies retention (playlists keep theirs), and live projection continues', async () => {
    const t = (iso: string) => Date.parse(iso) - 30_000
    for (const team of [X, Y]) {
      for (const [session, at] of [
        ['recent', recent(10)],
        ['recent', recent(5)],
        ['deleted', recent(9)],
        ['old', '2023-03-01T10:00:00Z'],
        ['old-pinned', '2023-03-01T11:00:00Z'],
      ] as const) {
        await publish(
          await chunkMessages(team, session, at, [
            rr.meta(t(at), `https://${session}.io`),
            rr.full(t(at)),
            rr.click(t(at) + 1),
          ]),
        )
      }
      await publish([
        {
          payload: encodeMessage({
            v: 1,
            kind: 'delete',
            team_id: team,
            session_id: 'deleted',
            deleted_at: new Date().toISOString(),
            deleted_by: 1,
          }),
        },
      ])
      await (await PlaylistStore.open(nc)).addRecording(team, 'keepthem', 'old-pinned', 1)
    }
    await idle()
    // the delete message's ALTER … DELETE runs in the background after its ack
    await mutationsDone(ch, 'session_replay_events')
    await mutationsDone(ch, 'session_replay_snapshots')
    const before = await views()
    expect(before.sessions.map((s) => `${s.team_id}/${s.session_id}`)).toEqual(
      [X, Y].flatMap((team) => ['old', 'old-pinned', 'recent'].map((s) => `${team}/${s}`)),
    )
    expect(before.deleted).toHaveLength(2)

    const common = { nc, ch, log, retentionDays: 30, stream, filterSubject: `${prefix}.>`, durable }
    const first = await replayRecordings({ ...common, project: X })
    expect(first).toMatchObject({ swapped: true, resumed: false })
    const after = await views()
    // X rebuilt, Y carried over, retention applied to both before the swap: 'old' is gone, the
    // pinned one stays
    expect(after).toEqual({
      chunks: before.chunks.filter((c) => c.session_id !== 'old'),
      sessions: before.sessions.filter((s) => s.session_id !== 'old'),
      deleted: before.deleted,
    })

    const second = await replayRecordings({ ...common, project: X })
    expect(second.swapped).toBe(true)
    expect(await views()).toEqual(after)

    // the live projector resumes on the swapped tables, from where the replay stopped
    await publish(await chunkMessages(X, 'later', recent(1), [rr.full(Date.now() - 60_000)]))
    await idle()
    const later = await views()
    expect(later.sessions.filter((s) => s.session_id === 'later')).toHaveLength(1)
    expect(later.chunks.length).toBe(after.chunks.length + 1)
  })
})

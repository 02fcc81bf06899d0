import { jetstreamManager } from '@nats-io/jetstream'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { createTestProject, nats, ownDatabase } from '../../harness/index.ts'
import { ev, runProjector, type TestLog, testLog, waitForRows, writerWithFault } from './helpers.ts'

let ch: ClickHouseClient
let log: TestLog

beforeAll(async () => {
  ch = (await ownDatabase('burrow_hold_bytes')).client
  log = await testLog(await nats())
})

const CHUNKS = 80
const EVENTS_PER_CHUNK = 4
// each event carries ~64 KB, so a chunk is ~256 KB: more than the lane's byte bound below
const PAD = 'x'.repeat(64_000)
const HOLD = 64 * 1024
// what a projector may hold delivered and unacknowledged: the bound, the message that crossed it,
// and the pull that was in flight (pullBytes: eight times the server's max_payload, 1 MiB, plus
// 4 KiB each)
const PULL = 8 * (1024 * 1024 + 4096)

describe('a lane consumer bounded by bytes', () => {
  it('holds no more than its bound (plus one message and one pull) while stuck, and then projects everything, each message larger than the bound', async () => {
    const team = (await createTestProject('hold bytes')).id
    let chunkBytes = 0
    for (let c = 0; c < CHUNKS; c++) {
      const events = Array.from({ length: EVENTS_PER_CHUNK }, (_, i) =>
        ev(team, 'padded', `user-${c}`, { c, i, pad: PAD }),
      )
      chunkBytes = Math.max(chunkBytes, JSON.stringify(events).length)
      await log.publish('live', events)
    }
    expect(chunkBytes).toBeGreaterThan(HOLD)
    // the whole log is larger than what may be held, so holding all of it would show
    expect(CHUNKS * chunkBytes).toBeGreaterThan(2 * (HOLD + chunkBytes + PULL))

    // The first batch's write waits until released: the lane holds what it was delivered.
    let release!: () => void
    const released = new Promise<void>((r) => {
      release = r
    })
    const projector = await runProjector(log, ch, team, {
      lanes: ['live'],
      holdBytes: HOLD,
      writer: writerWithFault(ch, () => released),
    })
    try {
      const jsm = await jetstreamManager(log.nc)
      const durable = `${log.prefix}-projector-live`
      let most = 0
      // Long enough for the client to have been delivered the whole log had nothing held it back
      // (unbounded, it is, well within this).
      for (let i = 0; i < 30; i++) {
        const info = await jsm.consumers.info(log.stream, durable)
        most = Math.max(most, info.num_ack_pending)
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(most).toBeGreaterThan(0)
      expect(most * chunkBytes).toBeLessThanOrEqual(HOLD + chunkBytes + PULL)

      release()
      const written = await waitForRows(
        ch,
        `SELECT uuid FROM events WHERE team_id = ${team}`,
        CHUNKS * EVENTS_PER_CHUNK,
      )
      expect(written).toHaveLength(CHUNKS * EVENTS_PER_CHUNK)
    } finally {
      release()
      await projector.stop()
    }
  })
})

// A lane consumer bounded by bytes must not sit idle while its consumer has messages (src/projectors/feed.ts).
// With @nats-io/jetstream 3.4's defaults it did, now and then, for 30-45 s: a pull ends (409, "message
// size exceeds maxbytes") when the next message is larger than the bytes it has left, and when the
// client holds no message at that moment it does not pull again until two idle heartbeats (15 s each
// by default) have been missed. Messages near max_payload, as a web SDK's batches make, meet it.
// The stall is a race: this test feeds rounds of near-max_payload messages through a MessageFeed,
// worked on as a projector would, for ~20 s, and fails when a batch is waited for 8 s. Against the
// old options it failed 6 runs of 6 (a stall in round 6 to 10); with heartbeats every second a
// stall ends within about two seconds, and it passed 4 of 4.
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream'
import { afterAll, describe, expect, it } from 'vitest'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { pullBytes } from '../../../src/projectors/batch-cut.ts'
import { MessageFeed } from '../../../src/projectors/feed.ts'
import { stack } from '../../harness/index.ts'
import { sleep } from './helpers.ts'

const STREAM = 'FEED_STALL'
const MESSAGES = 40
/** what the feed holds before it stops reading: a projector's batch of 4 MiB */
const HOLD = 4 * 1024 * 1024
/** the longest a batch may be waited for while the log has messages: a stall took 30-45 s */
const BOUND_MS = 8000
const RUN_MS = 20_000

let nc: NatsConnection | undefined
afterAll(async () => {
  await nc?.close()
})

describe('a lane consumer bounded by bytes', () => {
  it('takes every round of near-max_payload messages without waiting out missed heartbeats', async () => {
    nc = await connectNats(stack().natsUrl, 'feed-stall-test')
    const jsm = await jetstreamManager(nc)
    const js = jetstream(nc)
    await jsm.streams.add({ name: STREAM, subjects: [`${STREAM}.>`] })
    await jsm.consumers.add(STREAM, {
      durable_name: 'lane',
      ack_policy: AckPolicy.Explicit,
      max_ack_pending: 400,
    })
    const maxPayload = nc.info!.max_payload
    const feed = new MessageFeed({
      batchSize: 100,
      maxWaitMs: 200,
      log: createLogger('warn'),
      reply: (m) => m.nak(),
      refusing: () => false,
      bytes: { hold: HOLD, pull: pullBytes(maxPayload) },
    })
    await feed.open(js, STREAM, 'lane')
    const started = Date.now()
    let rounds = 0
    let longest = 0
    try {
      while (rounds < 5 || Date.now() - started < RUN_MS) {
        // 35-100% of the largest message the server takes (less the headers' room), as capture's
        // chunks of large events are
        const sizes = Array.from({ length: MESSAGES }, (_, i) =>
          Math.floor((maxPayload - 4096) * (0.35 + 0.65 * (((i * 7919) % 101) / 100))),
        )
        const published = sizes.map((n, i) => js.publish(`${STREAM}.${i % 4}`, new Uint8Array(n)))
        let taken = 0
        let last = Date.now()
        while (taken < MESSAGES) {
          let timer: NodeJS.Timeout | undefined
          const batch = await Promise.race([
            feed.next(() => false),
            new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`no batch for ${BOUND_MS} ms in round ${rounds}`)),
                BOUND_MS,
              )
            }),
          ]).finally(() => clearTimeout(timer))
          longest = Math.max(longest, Date.now() - last)
          // worked on for a while, as a projector decodes and writes a batch, then acknowledged
          await sleep(20 + 30 * batch.length)
          for (const m of batch) {
            m.ack()
            feed.settled(m)
          }
          taken += batch.length
          last = Date.now()
        }
        await Promise.all(published)
        rounds++
        await sleep(300)
      }
    } finally {
      await feed.close()
    }
    expect(rounds).toBeGreaterThanOrEqual(5)
    expect(longest).toBeLessThan(BOUND_MS)
  })
})

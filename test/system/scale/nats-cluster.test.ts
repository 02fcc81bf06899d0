// Burrow on a 3-node JetStream cluster (three real nats-servers on loopback): streams and buckets
// keep 3 copies; killing the EVENTS stream's leader during a /batch/ flood loses no acknowledged
// event and stores none twice; capture answers 503 while no quorum exists, and only then.
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest'
import { BUCKETS, EVENTS_STREAM } from '../../../schema/jetstream.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { parseLogMessage } from '../../../src/jetstream/messages.ts'
import { type NatsCluster, startNatsCluster } from '../../../src/stack/nats-cluster.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { stack, startTestBurrow, tempDir } from '../../harness/index.ts'
import { Ledger, makeEvents, sendBatch, sleep } from '../reliability/helpers.ts'

let cluster: NatsCluster
let burrow: RunningBurrow
let nc: NatsConnection

beforeAll(async () => {
  cluster = await startNatsCluster({
    bin: stack().bins.nats,
    dataDir: join(tempDir('burrow-nats3-'), 'n'),
    size: 3,
  })
  burrow = await startTestBurrow({ NATS_URL: cluster.url, ROLE: 'capture', CAPTURE_ACK_TIMEOUT_MS: '2000' })
  nc = await connectNats(cluster.url, 'scale-test')
})

afterAll(async () => {
  await nc?.close()
  await burrow?.stop()
  await cluster?.stop()
})

/** `call`'s answer, asked up to 5 times half a second apart. */
async function retried<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call()
    } catch (err) {
      if (attempt >= 5) throw err
      await sleep(500)
    }
  }
}

/**
 * Occurrences of each event uuid in the EVENTS stream, read message by message (direct gets need
 * no consumer, whose creation can stall on a busy machine while the cluster misses a node).
 */
async function uuidsInLog(): Promise<Map<string, number>> {
  // (each JetStream API call is tried again: after a node was killed the API can go unanswered for a
  // while on a busy machine, and one call timed out in a CI run)
  const jsm = await retried(() => jetstreamManager(nc, { timeout: 10_000 }))
  const { first_seq, last_seq } = (await retried(() => jsm.streams.info(EVENTS_STREAM))).state
  const counts = new Map<string, number>()
  for (let seq = first_seq; seq <= last_seq && last_seq > 0; seq++) {
    const m = await retried(() => jsm.streams.getMessage(EVENTS_STREAM, { seq }))
    const chunk = parseLogMessage(m!.data) as { envelope: { events: { uuid: string }[] } }
    for (const e of chunk.envelope.events) {
      counts.set(e.uuid, (counts.get(e.uuid) ?? 0) + 1)
    }
  }
  return counts
}

describe('a 3-node NATS cluster', () => {
  it('keeps three copies of every stream and bucket', async () => {
    const jsm = await jetstreamManager(nc)
    for (const name of [EVENTS_STREAM, `KV_${BUCKETS.identity.name}`, `KV_${BUCKETS.config.name}`]) {
      const info = await jsm.streams.info(name)
      expect(info.config.num_replicas, name).toBe(3)
      expect(info.cluster?.replicas?.length, name).toBe(2)
    }
  })

  it('loses and duplicates nothing acknowledged when the stream leader is killed mid-flood', async () => {
    const token = burrow.credentials.project_api_key
    const ledger = new Ledger()
    const jsm = await jetstreamManager(nc)
    const leaderName = (await jsm.streams.info(EVENTS_STREAM)).cluster?.leader
    const leader = cluster.nodes.find((n) => n.name === leaderName)!
    expect(leader).toBeDefined()
    // The flood runs until 3 s after capture first answers 200 again after the kill (at most 60 s).
    let floodEnds = Date.now() + 60_000
    let killedAt = 0
    let backAt = 0
    const after: { at: number; status: number | 'error' }[] = []
    const worker = async (w: number) => {
      for (let i = 0; Date.now() < floodEnds; i++) {
        const events = makeEvents(20, `w${w}-${i}`, 50)
        await ledger.sendUntilAcked(() => burrow.url, token, events, {
          deadline: Date.now() + 30_000,
          onResult: (status, startedAt) => {
            if (!killedAt || startedAt <= killedAt) return
            after.push({ at: startedAt, status })
            if (status === 200 && !backAt) {
              backAt = Date.now()
              floodEnds = backAt + 3000
            }
          },
        })
      }
    }
    const killer = (async () => {
      await sleep(2500)
      killedAt = Date.now()
      leader.process!.kill()
    })()
    // (restarted even when a check below fails, once killed: the next test needs all three nodes)
    onTestFinished(async () => {
      await killer
      await leader.start()
    })
    await Promise.all([killer, ...[0, 1, 2, 3].map(worker)])

    expect(ledger.acked.size).toBeGreaterThan(200)
    // The two remaining nodes are a quorum: after the leader election capture answers 200 again, and
    // only 200 (a request started after the first 200 back).
    expect(backAt).toBeGreaterThan(0)
    const settled = after.filter((r) => r.at > backAt)
    expect(settled.length).toBeGreaterThan(0)
    expect(settled.filter((r) => r.status !== 200)).toEqual([])

    const log = await uuidsInLog()
    const lost = [...ledger.acked].filter((u) => !log.has(u))
    const twice = [...log].filter(([, n]) => n > 1)
    expect(lost).toEqual([])
    expect(twice).toEqual([])
    // nothing in the log that no client sent
    expect([...log.keys()].every((u) => ledger.sent.has(u))).toBe(true)
  })

  it('answers 503 while no quorum exists, and 200 again once a quorum is back', async () => {
    const token = burrow.credentials.project_api_key
    const [a, b] = cluster.nodes.filter((n) => n.url !== cluster.nodes[0]!.url)
    // wait until the restarted node is current again, so the stream has three live copies
    const jsm = await jetstreamManager(nc)
    for (let i = 0; i < 100; i++) {
      const info = await jsm.streams.info(EVENTS_STREAM)
      if ((info.cluster?.replicas ?? []).every((r) => r.current) && info.cluster?.replicas?.length === 2)
        break
      await sleep(200)
    }
    expect(await sendBatch(burrow.url, token, makeEvents(5, 'q0'))).toBe(200)
    a!.process!.kill()
    b!.process!.kill()
    const noQuorum: (number | 'error')[] = []
    for (let i = 0; i < 5; i++) noQuorum.push(await sendBatch(burrow.url, token, makeEvents(5, `q1-${i}`)))
    expect(noQuorum).toEqual([503, 503, 503, 503, 503])
    await a!.start()
    let status: number | 'error' = 'error'
    // a new stream leader on a busy machine can take most of a minute
    const until = Date.now() + 90_000
    while (Date.now() < until && status !== 200) {
      status = await sendBatch(burrow.url, token, makeEvents(5, 'q2'))
      if (status !== 200) {
        expect(status).toBe(503)
        await sleep(250)
      }
    }
    expect(status).toBe(200)
    await b!.start()
  })
})

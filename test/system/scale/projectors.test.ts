// Several projector processes sharing the log's partitions (leases) reach exactly the state one
// projector reaches: the same persons (as sets of distinct ids, with their properties), the same
// overrides, and every event resolved to the same person, for generated histories full of merges
// ($identify, $create_alias, $merge_dangerously), with 1, 2 and 4 processes and one of the 4
// killed mid-run (its NATS connection closed, as a crash). Each "process" is a PartitionLeases
// with a NATS connection of its own. A run's teams are the same history under other team ids.
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  chunkMessageId,
  encodeChunk,
  type EventChunk,
  LOG_FORMAT_VERSION,
  partitionOf,
} from '../../../src/jetstream/messages.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import { startProjector } from '../../../src/projectors/index.ts'
import { PartitionLeases } from '../../../src/projectors/partition-leases.ts'
import { clickhouse, nats, stack } from '../../harness/index.ts'
import { sleep } from '../reliability/helpers.ts'
import { eventsStored as stored, history, outcome } from '../../harness/identity-history.ts'

const PARTITIONS = 4
const TEAMS = 8
const id = randomBytes(4).toString('hex')
const STREAM = `SCALE_${id}`
const PREFIX = `scale_${id}`
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent')
const ch = clickhouse()
let nc: NatsConnection

beforeAll(async () => {
  nc = await nats()
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: STREAM, subjects: [`${PREFIX}.>`], duplicate_window: 120 * 1e9 })
})

const HISTORIES = Array.from({ length: TEAMS }, (_, t) => history(t + 1))
const TOTAL = HISTORIES.reduce((n, h) => n + h.length, 0)

/** Publishes each team's history in chunks of 10 events, teams interleaved. */
async function publish(teams: number[], from: number, to: number): Promise<void> {
  const js = jetstream(nc)
  for (let start = from; start < to; start += 10) {
    for (const [t, team] of teams.entries()) {
      const events = HISTORIES[t]!.slice(start, Math.min(start + 10, to)).map((e) => ({
        ...e,
        team_id: team,
      }))
      if (events.length === 0) continue
      const chunk: EventChunk = { v: LOG_FORMAT_VERSION, team_id: team, lane: 'live', events }
      await js.publish(`${PREFIX}.live.${partitionOf(team, PARTITIONS)}`, encodeChunk(chunk), {
        msgID: chunkMessageId(chunk),
      })
    }
  }
}

interface Process {
  conn: NatsConnection
  leases: PartitionLeases
}

async function startProcess(bucketName: string, n: number): Promise<Process> {
  const conn = await connectNats(stack().natsUrl, `scale-projector-${n}`)
  const leases = new PartitionLeases({
    kv: await new Kvm(conn).open(bucketName),
    partitions: PARTITIONS,
    log,
    renewMs: 500,
    start: (partition, fence) =>
      startProjector({
        nc: conn,
        ch,
        log,
        batchSize: 5,
        maxWaitMs: 20,
        stream: STREAM,
        subjectPrefix: PREFIX,
        durablePrefix: `${PREFIX}-${bucketName}-p${partition}`,
        dlqSubject: `dlq.${PREFIX}`,
        partition,
        takeOver: true,
        fence,
        plugins: false,
      }),
  })
  await leases.start()
  return { conn, leases }
}

/** Runs the history for fresh team ids with `processes` projector processes; kills one mid-run. */
async function run(processes: number, killOne: boolean) {
  const base = 5_000_000 + Math.floor(Math.random() * 1_000_000_000)
  const teams = Array.from({ length: TEAMS }, (_, t) => base + t)
  const bucketName = `scale_leases_${id}_${processes}`
  const kvm = new Kvm(nc)
  await kvm.create(bucketName, { history: 1, ttl: 3000 })
  const procs: Process[] = []
  for (let n = 0; n < processes; n++) procs.push(await startProcess(bucketName, n))
  const half = HISTORIES[0]!.length / 2
  await publish(teams, 0, half)
  if (killOne) {
    // the leases settle first (every process holds its share, so no partition moves any more and
    // the victim still holds its own when it dies); then wait until it has projected something of
    // them, and crash it
    const settled = () => procs.every((p) => p.leases.owned.length === PARTITIONS / processes)
    for (let i = 0; i < 100 && !settled(); i++) await sleep(100)
    expect(settled()).toBe(true)
    const victim = procs[processes - 1]!
    for (let i = 0; i < 100 && (await stored(ch, teams)) < TOTAL / 8; i++) await sleep(100)
    expect(victim.leases.owned.length).toBeGreaterThan(0)
    await victim.conn.close()
  }
  await publish(teams, half, HISTORIES[0]!.length)
  for (let i = 0; i < 600 && (await stored(ch, teams)) < TOTAL; i++) await sleep(200)
  expect(await stored(ch, teams)).toBe(TOTAL)
  const outcomes = []
  for (const [t, team] of teams.entries()) outcomes.push(await outcome(ch, team, HISTORIES[t]!))
  await Promise.all(procs.map((p) => Promise.race([p.leases.stop().catch(() => undefined), sleep(5000)])))
  for (const p of procs) await p.conn.close().catch(() => undefined)
  return { outcomes, teams }
}

afterAll(async () => {
  await jetstreamManager(nc)
    .then((jsm) => jsm.streams.delete(STREAM))
    .catch(() => undefined)
})

describe('projector processes sharing partitions', () => {
  it('reach one projector’s persons, mappings, overrides and event persons with 2 and 4 (one killed)', async () => {
    const one = await run(1, false)
    // the histories really merge: persons with several distinct ids, overrides written
    expect(one.outcomes.some((o) => o.overrides.length > 0)).toBe(true)
    expect(
      one.outcomes.every((o) => o.persons.some((p) => (JSON.parse(p) as string[][])[0]!.length > 2)),
    ).toBe(true)
    const two = await run(2, false)
    expect(two.outcomes).toEqual(one.outcomes)
    const four = await run(4, true)
    expect(four.outcomes).toEqual(one.outcomes)
  })
})

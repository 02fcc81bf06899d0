// `burrow replay` under partition leases and team spread (docs/scaling.md): after the swap, every
// durable that projects into the swapped tables — the leases' per-partition lane consumers, the
// identity stages, the row writers — goes on from the right position: no event is lost, none is
// written twice. The log holds events the projectors had not projected when the replay ran (they
// were stopped), and with team spread resolved messages the row writers had not written yet; once
// they run again, every event of the log is in the tables exactly once (counted as sent to
// ClickHouse: the events table's merges would hide a duplicate), and the replayed project's later
// events go to the persons the replay decided.
import { randomBytes } from 'node:crypto'
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import type { CapturedEvent } from '../../../src/jetstream/messages.ts'
import { partitionOf } from '../../../src/jetstream/messages.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import type { BatchWriter } from '../../../src/projectors/batch.ts'
import { startProjector, startSpreadUnit, spreadUnits } from '../../../src/projectors/index.ts'
import { PartitionLeases } from '../../../src/projectors/partition-leases.ts'
import { replay } from '../../../src/projectors/replay.ts'
import { LIVE_TABLES } from '../../../src/projectors/tables.ts'
import { ClickHouseWriter } from '../../../src/projectors/writer.ts'
import { sleep } from '../../../src/retry/backoff.ts'
import { createTestProject, nats, ownDatabase, stack } from '../../harness/index.ts'
import { ev, PERSON_NAMESPACE, rows, type TestLog, testLog } from './helpers.ts'

const PARTITIONS = 2
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent')
let ch: ClickHouseClient
let X: number
let Y: number

beforeAll(async () => {
  ch = (await ownDatabase('burrow_replay_modes')).client
})

/** Rows sent to ClickHouse by the live projectors, by log position (`<seq>:<offset>`): after the swap. */
const sent = new Map<string, number>()
/** The same, before the swap (into the tables swapped out) */
const sentBefore = new Map<string, number>()
/** the replay is swapping: the projectors are paused (or stopped) */
let swapped = false
/** While set, each insert of event rows waits this long (a row writer falling behind). */
let slowMs = 0
const counting = (inner: BatchWriter): BatchWriter => ({
  async write(rows) {
    if (slowMs > 0 && rows.events.length > 0) await sleep(slowMs)
    const refused = await inner.write(rows)
    const into = swapped ? sent : sentBefore
    for (const r of rows.events) into.set(`${r.seq}:${r.offset}`, (into.get(`${r.seq}:${r.offset}`) ?? 0) + 1)
    return refused
  },
})

type Mode = 'leases' | 'spread'

interface Setup {
  log: TestLog
  mode: Mode
  bucket: string
  resolvedStream: string
  /** published events: their log position */
  published: { team: number; event: CapturedEvent; pos: string }[]
}

async function setup(mode: Mode): Promise<Setup> {
  const tl = await testLog(await nats())
  const id = randomBytes(3).toString('hex')
  const bucket = `replay_modes_${mode}_${id}`
  await new Kvm(tl.nc).create(bucket, { history: 1, ttl: 3000 })
  const resolvedStream = `RRES_${id}`
  await (await jetstreamManager(tl.nc)).streams.add({ name: resolvedStream, subjects: [`rres_${id}.>`] })
  return { log: tl, mode, bucket, resolvedStream, published: [] }
}

/** Two projector processes of `mode` (each its own NATS connection and leases). */
async function startProcesses(s: Setup) {
  const procs: { conn: NatsConnection; leases: PartitionLeases }[] = []
  for (let n = 0; n < 2; n++) {
    const conn = await connectNats(stack().natsUrl, `replay-modes-${n}`)
    const common = {
      nc: conn,
      ch,
      log,
      batchSize: 2,
      maxWaitMs: 20,
      stream: s.log.stream,
      subjectPrefix: s.log.prefix,
      dlqSubject: s.log.dlqSubject,
      plugins: false as const,
      teams: new Set([X, Y]),
      takeOver: true,
      writer: counting(new ClickHouseWriter(ch, LIVE_TABLES)),
    }
    const leases = new PartitionLeases({
      kv: await new Kvm(conn).open(s.bucket),
      partitions: s.mode === 'leases' ? PARTITIONS : spreadUnits(PARTITIONS),
      log,
      renewMs: 500,
      start: (unit, fence) =>
        s.mode === 'leases'
          ? startProjector({
              ...common,
              fence,
              partition: unit,
              durablePrefix: `${s.log.prefix}-projector-p${unit}`,
            })
          : startSpreadUnit(
              {
                ...common,
                fence,
                partitions: PARTITIONS,
                durablePrefix: `${s.log.prefix}-spread`,
                resolvedStream: s.resolvedStream,
                resolvedPrefix: `rres_${s.resolvedStream.slice(5)}`,
              },
              unit,
            ),
    })
    await leases.start()
    procs.push({ conn, leases })
  }
  return {
    async stop() {
      for (const p of procs) await p.leases.stop()
      for (const p of procs) await p.conn.close()
    },
  }
}

/** Publishes each event as a chunk of its own, in its team's partition. */
async function publish(s: Setup, events: CapturedEvent[]) {
  for (const event of events) {
    const seq = await s.log.publish('live', [event], { partition: partitionOf(event.team_id, PARTITIONS) })
    s.published.push({ team: event.team_id, event, pos: `${seq}:0` })
  }
}

function history(team: number, tag: string, pageviews = 0): CapturedEvent[] {
  return [
    ...Array.from({ length: pageviews }, (_, i) => ev(team, '$pageview', `anon-${tag}`, { i })),
    ev(team, '$pageview', `anon-${tag}`, { $set: { tag } }),
    ev(team, '$identify', `user-${tag}`, {
      $anon_distinct_id: `anon-${tag}`,
      $set: { email: `${tag}@x.io` },
    }),
    ev(team, '$pageview', `user-${tag}`, { n: 1 }),
    ev(team, '$create_alias', `user-${tag}`, { alias: `other-${tag}` }),
    ev(team, '$pageview', `other-${tag}`, { n: 2 }),
  ]
}

async function stored(teams: number[]): Promise<number> {
  const [r] = await rows<{ n: string }>(
    ch,
    `SELECT count(DISTINCT uuid) AS n FROM events WHERE team_id IN (${teams.join(',')})`,
  )
  return Number(r!.n)
}

async function waitStored(s: Setup) {
  const want = s.published.length
  for (let i = 0; i < 600 && (await stored([X, Y])) < want; i++) await sleep(100)
  expect(await stored([X, Y])).toBe(want)
}

/** Waits until the consumers named `<prefix>…` of `stream` have nothing to deliver or acknowledge. */
async function drained(s: Setup, stream: string, prefix: string) {
  const jsm = await jetstreamManager(s.log.nc)
  for (let i = 0; i < 600; i++) {
    let busy = false
    for await (const c of jsm.consumers.list(stream))
      if (c.name.startsWith(prefix) && (c.num_pending > 0 || c.num_ack_pending > 0)) busy = true
    if (!busy) return
    await sleep(100)
  }
  throw new Error(`${prefix} did not drain`)
}

/** Rows per log position in the events table (a duplicate counts twice, merged or not yet). */
async function positions(): Promise<Map<string, number>> {
  const r = await rows<{ p: string; n: string }>(
    ch,
    `SELECT concat(toString(_seq), ':', toString(_offset)) AS p, count() AS n FROM events
     WHERE team_id IN (${X}, ${Y}) GROUP BY p`,
  )
  return new Map(r.map((x) => [x.p, Number(x.n)]))
}

/**
 * `stopped`: the projectors are stopped while the replay runs (and events arrive they have not
 * projected); otherwise they run through it, projecting events that arrive while the replay builds,
 * and the replay pauses them for its swap.
 */
async function run(mode: Mode, stopped: boolean) {
  X = (await createTestProject(`replay ${mode} x`)).id
  Y = (await createTestProject(`replay ${mode} y`)).id
  const s = await setup(mode)
  sent.clear()
  sentBefore.clear()
  swapped = false
  let procs = await startProcesses(s)
  // 1. both projects projected live
  if (mode === 'spread' && stopped) slowMs = 300
  await publish(s, [...history(X, 'a', 40), ...history(Y, 'a', 40)])
  if (mode === 'spread' && stopped) {
    // the identity stages are done, the row writers behind: resolved messages wait in their stream,
    // some not even delivered to a writer yet (a writer reconciles what it was delivered anyway)
    await drained(s, s.log.stream, `${s.log.prefix}-spread-identity`)
    const jsm = await jetstreamManager(s.log.nc)
    let undelivered = 0
    for await (const c of jsm.consumers.list(s.resolvedStream)) undelivered += c.num_pending
    expect(undelivered).toBeGreaterThan(0)
  } else {
    await waitStored(s)
  }
  // 2. events the projectors have not projected (stopped) or are projecting when the replay runs
  if (stopped) await procs.stop()
  slowMs = 0
  await publish(s, [...history(X, 'b'), ...history(Y, 'b')])
  const result = await replay({
    nc: s.log.nc,
    ch,
    log,
    project: X,
    stream: s.log.stream,
    subjectPrefix: s.log.prefix,
    durablePrefix: `${s.log.prefix}-projector`,
    spreadPrefix: `${s.log.prefix}-spread`,
    resolvedStream: s.resolvedStream,
    partitions: PARTITIONS,
    batchSize: 3,
    plugins: false,
    pauseTimeoutMs: 20_000,
    // the projectors are paused from here until the replay returns (or stopped)
    progress: (p) => void (p.phase === 'swap' && (swapped = true)),
  })
  expect(result.swapped).toBe(true)
  // 3. the projectors (again) go on from where the replay left each of them
  if (stopped) procs = await startProcesses(s)
  await publish(s, [...history(X, 'c'), ...history(Y, 'c')])
  const later = ev(X, '$pageview', 'other-a', {})
  await publish(s, [later])
  await waitStored(s)
  await drained(s, s.log.stream, s.log.prefix)
  if (mode === 'spread') await drained(s, s.resolvedStream, s.log.prefix)
  await procs.stop()
  // every event of the log once in the tables swapped in: X's up to the replay's end replayed, Y's
  // sent before the swap copied, and the rest sent after it
  const count = s.published.map((p) => {
    const replayed = p.team === X && Number(p.pos.split(':')[0]) <= result.lastSeq ? 1 : 0
    const copied = p.team === Y ? (sentBefore.get(p.pos) ?? 0) : 0
    return { pos: p.pos, team: p.team, n: replayed + copied + (sent.get(p.pos) ?? 0) }
  })
  expect(count.filter((c) => c.n !== 1)).toEqual([])
  expect(await positions()).toEqual(new Map(s.published.map((p) => [p.pos, 1])))
  // the replayed identity state goes on: other-a was aliased to user-a, whose person anon-a made
  const [row] = await rows<{ p: string }>(
    ch,
    `SELECT toString(person_id) AS p FROM events WHERE uuid = '${later.uuid}'`,
  )
  expect(row!.p).toBe(uuidv5(`${X}:anon-a`, PERSON_NAMESPACE))
}

describe('replay with partition leases and team spread', () => {
  afterAll(() => {
    slowMs = 0
  })
  it('every lease partition’s lanes resume at the replay’s end: no event lost or written twice', async () => {
    await run('leases', true)
  })
  it('identity stages resume at the replay’s end and row writers reconcile what was resolved before it', async () => {
    await run('spread', true)
  })
  it('pauses the lease partitions’ lanes, identity stages and idle row writers while running', async () => {
    await run('leases', false)
    await run('spread', false)
  })
})

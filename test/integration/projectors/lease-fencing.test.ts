// Lease fencing (docs/scaling.md, "Projector processes sharing partitions"): a projector process
// that stalls past its lease's TTL in the middle of a batch — after deciding it, before writing its
// rows, or after the rows and before its identity commit — while another process takes the
// partition over and projects on, must write nothing more once it resumes: the rows ClickHouse gets
// are each event's once, and the identity state left behind is the single projector's (a fresh
// process projecting the rest of the history on it reaches the single projector's persons,
// mappings, overrides and event persons). The stall is a pause of the stalled process's batch and
// of its lease renewals (its lease bucket's operations wait), as a stop-the-world pause would.
import { randomBytes } from 'node:crypto'
import { jetstreamManager } from '@nats-io/jetstream'
import { type KV, Kvm } from '@nats-io/kv'
import { describe, expect, it } from 'vitest'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import type { BatchWriter } from '../../../src/projectors/batch.ts'
import { startProjector } from '../../../src/projectors/index.ts'
import { LIVE_TABLES } from '../../../src/projectors/tables.ts'
import { ClickHouseWriter } from '../../../src/projectors/writer.ts'
import { PartitionLeases, type PartitionWorker } from '../../../src/projectors/partition-leases.ts'
import { sleep } from '../../../src/retry/backoff.ts'
import { clickhouse, stack } from '../../harness/index.ts'
import { eventsStored as stored, history, historyLog, outcome } from '../../harness/identity-history.ts'

const PARTITIONS = 1
const id = randomBytes(4).toString('hex')
const STREAM = `FENCE_${id}`
const PREFIX = `fence_${id}`
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent')
const ch = clickhouse()
const HISTORY = history(11, { events: 600, anon: 30, users: 10 })
const HALF = HISTORY.length / 2
const CHUNK = 20
const logStream = historyLog(
  { stream: STREAM, prefix: PREFIX, partitions: PARTITIONS, chunk: CHUNK },
  HISTORY,
)
const publish = logStream.publish

const common = (conn: NatsConnection, team: number) => ({
  nc: conn,
  ch,
  log,
  batchSize: 2,
  maxWaitMs: 20,
  stream: STREAM,
  subjectPrefix: PREFIX,
  dlqSubject: `dlq.${PREFIX}`,
  plugins: false as const,
  teams: new Set([team]),
})

/** Event rows sent to ClickHouse in the current run (a row sent twice counts twice). */
let inserted = 0
const counting = (inner: BatchWriter): BatchWriter => ({
  async write(rows) {
    const refused = await inner.write(rows)
    inserted += rows.events.length - refused.length
    return refused
  },
})

/** A pause: everything that waits on it stands still until `resume`. */
class Stall {
  private release?: () => void
  private paused?: Promise<void>
  /** resolves once something stands still on the pause */
  reached: Promise<void>
  private reach!: () => void
  constructor() {
    this.reached = new Promise((r) => (this.reach = r))
  }
  begin(): Promise<void> {
    this.paused ??= new Promise((r) => (this.release = r))
    this.reach()
    return this.paused
  }
  /** waits while paused (returns at once otherwise) */
  wait(): Promise<void> | undefined {
    return this.paused
  }
  resume(): void {
    this.release?.()
  }
}

/** The lease bucket as a stalled process sees it: its writes wait for the end of the stall. */
function stalledKv(kv: KV, stall: Stall): KV {
  return new Proxy(kv, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown
      if (typeof v !== 'function') return v
      const fn = v as (...a: unknown[]) => unknown
      if (!['put', 'create', 'update', 'delete', 'keys'].includes(String(prop))) return fn.bind(target)
      return async (...args: unknown[]) => {
        await stall.wait()
        return fn.apply(target, args)
      }
    },
  })
}

interface Proc {
  conn: NatsConnection
  leases: PartitionLeases
  /** every worker this process started has stopped */
  idle(): Promise<void>
}

/**
 * A projector process with partition leases. `stall`: its `at`-th batch write stands still (and
 * with it its lease renewals) before the rows or after them, before the commit.
 */
async function startProcess(
  name: string,
  bucketName: string,
  team: number,
  durablePrefix: string,
  stall?: { pause: Stall; at: number; where: 'before-rows' | 'before-commit' },
): Promise<Proc> {
  const conn = await connectNats(stack().natsUrl, name)
  const kv = await new Kvm(conn).open(bucketName)
  const stopped: Promise<void>[] = []
  let writes = 0
  const hook = (inner: BatchWriter): BatchWriter => ({
    async write(rows) {
      // batches of earlier runs' teams (in the log too) write nothing: not counted
      const stalls = stall !== undefined && rows.events.length > 0 && ++writes === stall.at
      if (stalls && stall.where === 'before-rows') await stall.pause.begin()
      const refused = await inner.write(rows)
      if (stalls && stall.where === 'before-commit') await stall.pause.begin()
      return refused
    },
  })
  const leases = new PartitionLeases({
    kv: stall ? stalledKv(kv, stall.pause) : kv,
    partitions: PARTITIONS,
    log,
    renewMs: 300,
    start: async (p, fence): Promise<PartitionWorker> => {
      const running = await startProjector({
        ...common(conn, team),
        partition: p,
        durablePrefix: `${durablePrefix}-p${p}`,
        takeOver: true,
        fence,
        writer: counting(new ClickHouseWriter(ch, LIVE_TABLES)),
        wrapWriter: hook,
      })
      let done!: () => void
      stopped.push(new Promise((r) => (done = r)))
      return { stop: () => running.stop().finally(done) }
    },
  })
  await leases.start()
  return { conn, leases, idle: async () => void (await Promise.all(stopped)) }
}

const freshTeam = () => 8_000_000 + Math.floor(Math.random() * 1_000_000_000)

async function settle(team: number, n: number): Promise<void> {
  for (let i = 0; i < 600 && (await stored(ch, [team])) < n; i++) await sleep(100)
  expect(await stored(ch, [team])).toBe(n)
}

/** Waits until the durables of `prefix` have nothing left to deliver or acknowledge. */
async function drained(prefix: string): Promise<void> {
  const jsm = await jetstreamManager(logStream.nc)
  for (let i = 0; i < 600; i++) {
    const info = await jsm.consumers.info(STREAM, `${prefix}-p0-live`).catch(() => undefined)
    if (info && info.num_pending === 0 && info.num_ack_pending === 0) return
    await sleep(100)
  }
  throw new Error(`${prefix} did not drain`)
}

/** The reference: one projector process over the whole history. */
async function single() {
  const team = freshTeam()
  const p = await startProjector({
    ...common(logStream.nc, team),
    partition: 0,
    durablePrefix: `${PREFIX}-single`,
  })
  await publish(team, 0, HISTORY.length)
  await settle(team, HISTORY.length)
  const result = await outcome(ch, team, HISTORY)
  await p.stop()
  return result
}

/**
 * Process A holds the partition and stalls in its third batch (`where`); its lease expires, B takes
 * the partition over and projects the first half of the history; then A resumes. Then both stop and
 * a fresh process C projects the second half on the identity state they left.
 */
async function stalledRun(where: 'before-rows' | 'before-commit') {
  const team = freshTeam()
  const bucketName = `fence_${id}_${where}`
  await new Kvm(logStream.nc).create(bucketName, { history: 1, ttl: 2000 })
  const durables = `${PREFIX}-${where}`
  inserted = 0
  const pause = new Stall()
  const a = await startProcess('fence-a', bucketName, team, durables, { pause, at: 3, where })
  expect(a.leases.owned).toEqual([0])
  const b = await startProcess('fence-b', bucketName, team, durables)
  expect(b.leases.owned).toEqual([])

  await publish(team, 0, HALF)
  await pause.reached
  // A's lease expires; B takes the partition over and projects the whole first half
  for (let i = 0; i < 200 && b.leases.owned.length === 0; i++) await sleep(100)
  expect(b.leases.owned).toEqual([0])
  await settle(team, HALF)
  await drained(durables)
  pause.resume()
  // A finds its lease gone and stops (its batch is finished one way or the other)
  for (let i = 0; i < 200 && a.leases.owned.length > 0; i++) await sleep(100)
  expect(a.leases.owned).toEqual([])
  await a.idle()
  await b.leases.stop()
  await a.leases.stop()

  const c = await startProcess('fence-c', bucketName, team, durables)
  await publish(team, HALF, HISTORY.length)
  await settle(team, HISTORY.length)
  await drained(durables)
  await c.leases.stop()
  for (const p of [a, b, c]) await p.conn.close().catch(() => undefined)
  return { result: await outcome(ch, team, HISTORY), inserted }
}

describe('lease fencing', () => {
  it('a process stalled past its lease writes nothing after the take-over: one projector’s result, every row once', async () => {
    const reference = await single()
    expect(reference.overrides.length).toBeGreaterThan(0)
    expect(reference.events).toHaveLength(HISTORY.length)

    const beforeRows = await stalledRun('before-rows')
    expect(beforeRows.inserted).toBe(HISTORY.length)
    expect(beforeRows.result).toEqual(reference)

    const beforeCommit = await stalledRun('before-commit')
    expect(beforeCommit.inserted).toBe(HISTORY.length)
    expect(beforeCommit.result).toEqual(reference)
  })
})

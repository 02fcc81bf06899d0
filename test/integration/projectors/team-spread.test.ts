// Team spread (PROJECTOR_TEAM_SPREAD, docs/scaling.md): one big project's events, projected by an
// ordered identity stage and parallel row writers over several processes, reach exactly the state
// one projector process reaches in the default mode: the same persons (as sets of distinct ids, with
// their properties and is_identified), the same distinct-id mappings and overrides, and every event
// resolved to the same person, for a generated history full of merges ($identify, $create_alias,
// $merge_dangerously) whose events go to every row partition, with 1, 2 and 4 processes; in the run
// of 2 a process holding row writers is killed (its NATS connection closed, as a crash) after an
// insert and before its ack, in the run of 4 the one holding the project's identity stage after a
// publish and before its identity commit. Each "process" is a PartitionLeases with a NATS connection
// of its own.
import { randomBytes } from 'node:crypto'
import { jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { describe, expect, it } from 'vitest'
import { selectRows } from '../../../src/clickhouse/client.ts'
import { partitionOf } from '../../../src/jetstream/messages.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import type { BatchWriter } from '../../../src/projectors/batch.ts'
import { startProjector, startSpreadUnit, spreadUnits } from '../../../src/projectors/index.ts'
import { LIVE_TABLES } from '../../../src/projectors/tables.ts'
import { ClickHouseWriter } from '../../../src/projectors/writer.ts'
import { PartitionLeases } from '../../../src/projectors/partition-leases.ts'
import { clickhouse, stack } from '../../harness/index.ts'
import { sleep } from '../../../src/retry/backoff.ts'
import { eventsStored as stored, history, historyLog, outcome } from '../../harness/identity-history.ts'

const PARTITIONS = 4
const id = randomBytes(4).toString('hex')
const STREAM = `SPREAD_${id}`
const PREFIX = `spread_${id}`
const RESOLVED = `${PREFIX}.resolved`
const log = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent')
const ch = clickhouse()
// one big project: 1,200 events over 60 anonymous and 20 identified distinct ids
// Besides merges, what the identity stage decides beyond persons and a row writer must rebuild
// exactly (decisions-only resolved messages): groups ($groups, $groupidentify), personless events,
// campaign and initial properties, top-level $set, elements.
const HISTORY = history(7, { events: 1200, anon: 60, users: 20 }).map((e, i) => {
  const properties = { ...e.properties }
  const extra: Partial<typeof e> = {}
  if (i % 7 === 0) properties.$groups = { company: `c${i % 3}`, project: `p${i % 4}` }
  if (i % 13 === 0) Object.assign(properties, { utm_source: `s${i % 2}`, $current_url: `https://x.y/${i}` })
  if (i % 17 === 0) extra.$set = { top: i }
  if (i % 19 === 0) properties.$elements_chain = `a:href="/${i}"nth-child="1"`
  if (e.event !== '$pageview') return { ...e, properties, ...extra }
  if (i % 23 === 0)
    return {
      ...e,
      event: '$groupidentify',
      properties: { ...properties, $group_type: 'company', $group_key: `c${i % 3}`, $group_set: { n: i } },
    }
  if (i % 11 === 0) properties.$process_person_profile = false
  return { ...e, properties, ...extra }
})
const CHUNK = 20
const logStream = historyLog(
  { stream: STREAM, prefix: PREFIX, partitions: PARTITIONS, chunk: CHUNK },
  HISTORY,
)
const publish = logStream.publish

const common = (conn: NatsConnection) => ({
  nc: conn,
  ch,
  log,
  batchSize: 5,
  maxWaitMs: 20,
  stream: STREAM,
  subjectPrefix: PREFIX,
  dlqSubject: `dlq.${PREFIX}`,
  plugins: false as const,
})

interface Process {
  conn: NatsConnection
  leases: PartitionLeases
  /** the run's project (the only one projected: earlier runs' projects are in the log too) */
  team: number
  /** armed: the process crashes after its `at`-th batch of that stage is written */
  crash?: { stage: 'identity' | 'rows'; at: number }
}

/**
 * Crashes the process (closes its NATS connection, as a kill, and fails the batch) once the armed
 * stage has written `at` batches: an identity stage's batch is then published to the row writers
 * and not committed, a row writer's batch inserted and not acknowledged. Everything else the process
 * had in flight dies with it.
 */
/** the run's event rows the row writers inserted (a row inserted twice counts twice; none is refused) */
let inserted = 0

function crashAfter(proc: Process, stage: 'identity' | 'rows', inner: BatchWriter): BatchWriter {
  let writes = 0
  return {
    async write(rows) {
      const refused = await inner.write(rows)
      // identity stages write their person rows through the row writers' writer too: not counted
      if (stage === 'rows') inserted += rows.events.filter((r) => r.line.startsWith(`${proc.team}\t`)).length
      if (stage === 'rows' && rows.events.length === 0) return refused
      if (proc.crash?.stage === stage && ++writes >= proc.crash.at) {
        await proc.conn.close()
        throw new Error('killed')
      }
      return refused
    },
  }
}

async function startProcess(bucketName: string, n: number, team: number): Promise<Process> {
  const conn = await connectNats(stack().natsUrl, `spread-projector-${n}`)
  const proc: Partial<Process> = { conn, team }
  const leases = new PartitionLeases({
    kv: await new Kvm(conn).open(bucketName),
    partitions: spreadUnits(PARTITIONS),
    log,
    renewMs: 500,
    start: (unit, fence) =>
      startSpreadUnit(
        {
          ...common(conn),
          partitions: PARTITIONS,
          resolvedStream: STREAM,
          resolvedPrefix: RESOLVED,
          durablePrefix: `${PREFIX}-${bucketName}`,
          takeOver: true,
          fence,
          teams: new Set([team]),
          writer: crashAfter(proc as Process, 'rows', new ClickHouseWriter(ch, LIVE_TABLES)),
          wrapWriter: (w) => crashAfter(proc as Process, 'identity', w),
        },
        unit,
      ),
  })
  proc.leases = leases
  await leases.start()
  return proc as Process
}

async function settle(team: number) {
  for (let i = 0; i < 600 && (await stored(ch, [team])) < HISTORY.length; i++) await sleep(200)
  expect(await stored(ch, [team])).toBe(HISTORY.length)
  // every column of every event row but the ones a run's team and log position make differ (the
  // person id is compared through the outcome's names)
  const rows = await selectRows<Record<string, unknown>>(
    ch,
    `SELECT uuid, event, distinct_id, timestamp, properties,
            person_properties, elements_chain, session_id, "$group_0", "$group_1", "$group_2", "$group_3",
            "$group_4", created_at, _offset
     FROM events FINAL WHERE team_id = ${team} ORDER BY uuid`,
  )
  return { ...(await outcome(ch, team, HISTORY)), rows: rows.map((r) => JSON.stringify(r)) }
}

const freshTeam = () => 7_000_000 + Math.floor(Math.random() * 1_000_000_000)

/** The reference: one projector in the default mode (no spread). */
async function single() {
  const team = freshTeam()
  const p = await startProjector({
    ...common(logStream.nc),
    partition: partitionOf(team, PARTITIONS),
    durablePrefix: `${PREFIX}-single-${team}`,
  })
  await publish(team, 0, HISTORY.length)
  const result = await settle(team)
  await p.stop()
  return result
}

/**
 * The history for a fresh team with `processes` spread processes; `kill`: the process holding the
 * project's identity stage, or one holding a row writer, crashes mid-run.
 */
async function spread(processes: number, kill?: 'identity' | 'rows') {
  const team = freshTeam()
  const identityUnit = partitionOf(team, PARTITIONS)
  const bucketName = `spread_leases_${id}_${processes}`
  await new Kvm(logStream.nc).create(bucketName, { history: 1, ttl: 3000 })
  const procs: Process[] = []
  inserted = 0
  for (let n = 0; n < processes; n++) procs.push(await startProcess(bucketName, n, team))
  // the leases settle: every process holds its fair share, so no unit moves any more (the victim
  // chosen below keeps what it holds until it is killed)
  const settled = () => procs.every((p) => p.leases.owned.length === spreadUnits(PARTITIONS) / processes)
  for (let i = 0; i < 100 && !settled(); i++) await sleep(100)
  expect(settled()).toBe(true)
  const half = HISTORY.length / 2
  let killed: number[] = []
  const victim =
    kill === 'identity'
      ? procs.find((p) => p.leases.owned.includes(identityUnit))
      : procs.find((p) => p.leases.owned.some((u) => u >= PARTITIONS))
  if (kill) {
    killed = victim!.leases.owned
    victim!.crash = { stage: kill, at: kill === 'identity' ? 4 : 3 }
  }
  if (kill) {
    // The first half in five slices (whole chunks: rows carry their offset in the chunk), each
    // written before the next goes out, so the victim has five batches to crash in however the
    // machine's load groups messages into batches (published at once, a loaded machine made so few
    // batches of them that the victim's third never came).
    const slices = 5
    for (let s = 0; s < slices; s++) {
      const to = (half * (s + 1)) / slices
      await publish(team, (half * s) / slices, to)
      if (s === slices - 1) break
      for (let i = 0; i < 400 && inserted < to && !victim!.conn.isClosed(); i++) await sleep(50)
    }
    for (let i = 0; i < 200 && !victim!.conn.isClosed(); i++) await sleep(50)
    expect(victim!.conn.isClosed()).toBe(true)
  } else await publish(team, 0, half)
  await publish(team, half, HISTORY.length)
  const result = await settle(team)
  await Promise.all(procs.map((p) => Promise.race([p.leases.stop().catch(() => undefined), sleep(5000)])))
  for (const p of procs) await p.conn.close().catch(() => undefined)
  // never a row twice: ClickHouse's merges would hide a duplicate (the events table replaces by
  // uuid), so the rows sent to it are counted, once every process has stopped
  expect(inserted).toBe(HISTORY.length)
  return { result, killed, identityUnit }
}

describe('team spread', () => {
  it('reaches one projector’s persons, mappings, overrides and event persons with 1, 2 and 4 processes (one killed)', async () => {
    const reference = await single()
    // the history really merges: persons with several distinct ids, overrides written
    expect(reference.overrides.length).toBeGreaterThan(0)
    expect(reference.persons.some((p) => (JSON.parse(p) as string[][])[0]!.length > 2)).toBe(true)
    expect(reference.events).toHaveLength(HISTORY.length)
    // and the extras are there: groups, personless events, initial properties, elements
    const joined = reference.rows.join('\n')
    for (const part of [
      '"$group_0":"c',
      '$process_person_profile\\":false',
      '$initial_utm_source',
      'nth-child',
    ])
      expect(joined).toContain(part)

    expect((await spread(1)).result).toEqual(reference)
    // the project's events went through every row partition
    const info = await (
      await jetstreamManager(logStream.nc)
    ).streams.info(STREAM, { subjects_filter: `${RESOLVED}.>` })
    expect(Object.keys(info.state.subjects ?? {}).sort()).toEqual(
      Array.from({ length: PARTITIONS }, (_, q) => `${RESOLVED}.${q}`),
    )
    // 2 processes, one holding row writers killed after an insert, before its ack
    const two = await spread(2, 'rows')
    expect(two.killed.some((u) => u >= PARTITIONS)).toBe(true)
    expect(two.result).toEqual(reference)
    // 4 processes, the one holding the project's identity stage killed after a publish, before its commit
    const four = await spread(4, 'identity')
    expect(four.killed).toContain(four.identityUnit)
    expect(four.result).toEqual(reference)
  })
})

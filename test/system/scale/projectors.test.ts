// Several projector processes sharing the log's partitions (leases) reach exactly the state one
// projector reaches: the same persons (as sets of distinct ids, with their properties), the same
// overrides, and every event resolved to the same person, for generated histories full of merges
// ($identify, $create_alias, $merge_dangerously), with 1, 2 and 4 processes and one of the 4
// killed mid-run (its NATS connection closed, as a crash). Each "process" is a PartitionLeases
// with a NATS connection of its own. A run's teams are the same history under other team ids.
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { selectRows } from '../../../src/clickhouse/client.ts'
import {
  type CapturedEvent,
  chunkMessageId,
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

const PARTITIONS = 4
const TEAMS = 8
const NS = '6ba7b811-9dad-11d1-80b4-00c04fd430c8'
// PostHog's person id of a distinct id: uuid v5 of `<team>:<distinct id>` in this namespace
const PERSON_NS = '932979b4-65c3-4424-8467-0b66ec27bc22'
const personUuid = (team: number, d: string) => uuidv5(`${team}:${d}`, PERSON_NS)
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

/** A seeded PRNG (mulberry32): the same history for every run. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = seed
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** One team's history (team id filled in per run): anonymous visits, then many merges. */
function history(seed: number): Omit<CapturedEvent, 'team_id'>[] {
  const r = rng(seed)
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!
  const anon = Array.from({ length: 16 }, (_, i) => `anon-${seed}-${i}`)
  const users = Array.from({ length: 6 }, (_, i) => `user-${seed}-${i}`)
  const out: Omit<CapturedEvent, 'team_id'>[] = []
  const t0 = Date.UTC(2024, 4, 1)
  for (let i = 0; i < 160; i++) {
    const at = new Date(t0 + i * 1000).toISOString()
    const roll = r()
    let event = '$pageview'
    let distinct = pick(anon)
    const properties: Record<string, unknown> = { i, $set: { last: i, ['k' + (i % 5)]: i } }
    if (roll < 0.15) {
      event = '$identify'
      distinct = pick(users)
      properties.$anon_distinct_id = pick(anon)
    } else if (roll < 0.25) {
      event = '$create_alias'
      distinct = pick([...anon, ...users])
      properties.alias = pick(anon)
    } else if (roll < 0.3) {
      event = '$merge_dangerously'
      distinct = pick(users)
      properties.alias = pick(users)
    } else if (roll < 0.45) {
      distinct = pick(users)
    }
    out.push({
      uuid: uuidv5(`${seed}:${i}`, NS),
      event,
      distinct_id: distinct,
      properties,
      timestamp: at,
      now: at,
      sent_at: null,
      ip: null,
    })
  }
  return out
}

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
      await js.publish(`${PREFIX}.live.${partitionOf(team, PARTITIONS)}`, JSON.stringify(chunk), {
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
    start: (partition) =>
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
        plugins: false,
      }),
  })
  await leases.start()
  return { conn, leases }
}

async function eventsStored(teams: number[]): Promise<number> {
  const r = await selectRows<{ n: string }>(
    ch,
    `SELECT count(DISTINCT uuid) AS n FROM events WHERE team_id IN (${teams.join(',')})`,
  )
  return Number(r[0]!.n)
}

/** A team's outcome with person ids replaced by the person's smallest distinct id. */
async function outcome(team: number, t: number) {
  // a person's id is derived from the team and the distinct id that created it: named by that id
  const created = new Map(
    HISTORIES[t]!.flatMap((e) => [
      e.distinct_id,
      String(e.properties.alias ?? e.properties.$anon_distinct_id ?? e.distinct_id),
    ]).map((d) => [personUuid(team, d), d]),
  )
  const ids = await selectRows<{ distinct_id: string; person_id: string }>(
    ch,
    `SELECT distinct_id, person_id FROM person_distinct_id FINAL WHERE team_id = ${team} AND is_deleted = 0`,
  )
  const byPerson = new Map<string, string[]>()
  for (const r of ids) byPerson.set(r.person_id, [...(byPerson.get(r.person_id) ?? []), r.distinct_id])
  const name = (pid: string) => (byPerson.get(pid) ?? [`?${pid}`]).sort()[0]!
  const persons = await selectRows<{ id: string; properties: string; is_identified: number }>(
    ch,
    `SELECT id, properties, is_identified FROM person FINAL WHERE team_id = ${team} AND is_deleted = 0`,
  )
  const overrides = await selectRows<{ old_person_id: string; override_person_id: string }>(
    ch,
    `SELECT old_person_id, override_person_id FROM person_overrides FINAL WHERE team_id = ${team}`,
  )
  const override = new Map(overrides.map((o) => [o.old_person_id, o.override_person_id]))
  const events = await selectRows<{ uuid: string; person_id: string }>(
    ch,
    `SELECT uuid, person_id FROM events FINAL WHERE team_id = ${team} ORDER BY uuid`,
  )
  return {
    persons: persons
      .map((p) =>
        JSON.stringify([(byPerson.get(p.id) ?? []).sort(), JSON.parse(p.properties), p.is_identified]),
      )
      .sort(),
    overrides: overrides
      .map((o) => `${created.get(o.old_person_id) ?? o.old_person_id}>${name(o.override_person_id)}`)
      .sort(),
    events: events.map((e) => `${e.uuid}:${name(override.get(e.person_id) ?? e.person_id)}`),
  }
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
    // wait until the victim has projected something of its partitions, then crash it
    const victim = procs.find((p) => p.leases.owned.length > 0)!
    for (let i = 0; i < 100 && (await eventsStored(teams)) < TOTAL / 8; i++) await sleep(100)
    await victim.conn.close()
  }
  await publish(teams, half, HISTORIES[0]!.length)
  for (let i = 0; i < 600 && (await eventsStored(teams)) < TOTAL; i++) await sleep(200)
  expect(await eventsStored(teams)).toBe(TOTAL)
  const outcomes = []
  for (const [t, team] of teams.entries()) outcomes.push(await outcome(team, t))
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

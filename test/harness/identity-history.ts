// Generated identity histories and the outcome a projection made of them, shared by the scale tests
// that compare several projector processes with one (test/system/scale/projectors.test.ts,
// test/integration/projectors/team-spread.test.ts).
import { v5 as uuidv5 } from 'uuid'
import { type ClickHouseClient, selectRows } from '../../src/clickhouse/client.ts'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '../../src/jetstream/connection.ts'
import {
  type CapturedEvent,
  chunkMessageId,
  encodeChunk,
  type EventChunk,
  LOG_FORMAT_VERSION,
  partitionOf,
} from '../../src/jetstream/messages.ts'
import { afterAll, beforeAll } from 'vitest'
import { nats } from './index.ts'

const NS = '6ba7b811-9dad-11d1-80b4-00c04fd430c8'
// PostHog's person id of a distinct id: uuid v5 of `<team>:<distinct id>` in this namespace
const PERSON_NS = '932979b4-65c3-4424-8467-0b66ec27bc22'
const personUuid = (team: number, d: string) => uuidv5(`${team}:${d}`, PERSON_NS)

/** An event of a history, its team filled in per run. */
export type HistoryEvent = Omit<CapturedEvent, 'team_id'>

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

/** One team's history: anonymous visits, then many merges ($identify, $create_alias, $merge_dangerously). */
export function history(seed: number, size = { events: 160, anon: 16, users: 6 }): HistoryEvent[] {
  const r = rng(seed)
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!
  const anon = Array.from({ length: size.anon }, (_, i) => `anon-${seed}-${i}`)
  const users = Array.from({ length: size.users }, (_, i) => `user-${seed}-${i}`)
  const out: HistoryEvent[] = []
  const t0 = Date.UTC(2024, 4, 1)
  for (let i = 0; i < size.events; i++) {
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

/** Events of `teams` stored (each once counted). */
export async function eventsStored(ch: ClickHouseClient, teams: number[]): Promise<number> {
  const r = await selectRows<{ n: string }>(
    ch,
    `SELECT count(DISTINCT uuid) AS n FROM events WHERE team_id IN (${teams.join(',')})`,
  )
  return Number(r[0]!.n)
}

/** A team's outcome with person ids replaced by the person's smallest distinct id. */
export async function outcome(ch: ClickHouseClient, team: number, events: HistoryEvent[]) {
  // a person's id is derived from the team and the distinct id that created it: named by that id
  const created = new Map(
    events
      .flatMap((e) => [
        e.distinct_id,
        String(e.properties.alias ?? e.properties.$anon_distinct_id ?? e.distinct_id),
      ])
      .map((d) => [personUuid(team, d), d]),
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
  const rows = await selectRows<{ uuid: string; person_id: string }>(
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
    events: rows.map((e) => `${e.uuid}:${name(override.get(e.person_id) ?? e.person_id)}`),
  }
}

/** A log of a test file's own for its history: the stream, and how to publish to it. */
export interface HistoryLog {
  /** the connection (set before the file's tests run) */
  nc: NatsConnection
  /** publishes the history's events [from, to) for `team` in its partition (publishHistory) */
  publish(team: number, from: number, to: number): Promise<void>
}

/**
 * Registers the file's stream `<stream>` over `<prefix>.>` (2 min duplicate window), created before
 * its tests and deleted after them, for `events` published in chunks of `chunk`.
 */
export function historyLog(
  o: { stream: string; prefix: string; partitions: number; chunk: number },
  events: HistoryEvent[],
): HistoryLog {
  const log: HistoryLog = {
    nc: undefined as unknown as NatsConnection,
    publish: (team, from, to) =>
      publishHistory(
        log.nc,
        `${o.prefix}.live.${partitionOf(team, o.partitions)}`,
        team,
        events.slice(from, to),
        o.chunk,
      ),
  }
  beforeAll(async () => {
    log.nc = await nats()
    const jsm = await jetstreamManager(log.nc)
    await jsm.streams.add({ name: o.stream, subjects: [`${o.prefix}.>`], duplicate_window: 120 * 1e9 })
  })
  afterAll(async () => {
    await jetstreamManager(log.nc)
      .then((jsm) => jsm.streams.delete(o.stream))
      .catch(() => undefined)
  })
  return log
}

/**
 * Publishes `events` for `team` on `subject` in chunks of `chunk`, as capture does, all at once (one
 * connection keeps their order): a projector finds a queue and pipelines its batches.
 */
export async function publishHistory(
  nc: NatsConnection,
  subject: string,
  team: number,
  events: HistoryEvent[],
  chunk: number,
): Promise<void> {
  const js = jetstream(nc)
  const acks = []
  for (let start = 0; start < events.length; start += chunk) {
    const part = events.slice(start, start + chunk).map((e) => ({ ...e, team_id: team }))
    const c: EventChunk = { v: LOG_FORMAT_VERSION, team_id: team, lane: 'live', events: part }
    acks.push(js.publish(subject, encodeChunk(c), { msgID: chunkMessageId(c) }))
  }
  await Promise.all(acks)
}

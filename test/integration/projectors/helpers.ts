// Each projector test file gets a log of its own (a stream with its own subjects) and its own durable
// consumers, so that projectors of other test files never see its events and vice versa.
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { v7 as uuidv7 } from 'uuid'
import type { Lane } from '../../../schema/jetstream.ts'
import {
  type CapturedEvent,
  chunkMessageId,
  encodeChunk,
  type EventChunk,
  LOG_FORMAT_VERSION,
} from '../../../src/jetstream/messages.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import { createLogger } from '../../../src/observability/logger.ts'
import {
  type ProjectorOptions,
  type RunningProjector,
  startProjector,
} from '../../../src/projectors/index.ts'
import { type ClickHouseClient, selectRows } from '../../../src/clickhouse/client.ts'
import type { BatchRows, BatchWriter } from '../../../src/projectors/batch.ts'
import { LIVE_TABLES, type ProjectionTables } from '../../../src/projectors/tables.ts'
import { ClickHouseWriter } from '../../../src/projectors/writer.ts'

export interface TestLog {
  nc: NatsConnection
  stream: string
  prefix: string
  dlqSubject: string
  publish(lane: Lane, events: CapturedEvent[], opts?: { partition?: number }): Promise<number>
  publishRaw(lane: Lane, data: Uint8Array | string): Promise<number>
}

export async function testLog(nc: NatsConnection): Promise<TestLog> {
  const id = randomBytes(4).toString('hex')
  const stream = `PTEST_${id}`
  const prefix = `ptest_${id}`
  const jsm = await jetstreamManager(nc)
  await jsm.streams.add({ name: stream, subjects: [`${prefix}.>`], duplicate_window: 120 * 1e9 })
  const js = jetstream(nc)
  return {
    nc,
    stream,
    prefix,
    dlqSubject: `dlq.${prefix}`,
    async publish(lane, events, opts = {}) {
      const chunk: EventChunk = { v: LOG_FORMAT_VERSION, team_id: events[0]!.team_id, lane, events }
      const ack = await js.publish(`${prefix}.${lane}.${opts.partition ?? 0}`, encodeChunk(chunk), {
        msgID: chunkMessageId(chunk),
      })
      return ack.seq
    },
    async publishRaw(lane, data) {
      return (await js.publish(`${prefix}.${lane}.0`, data)).seq
    },
  }
}

let clock = Date.UTC(2024, 4, 1, 12, 0, 0)

/** A captured event as capture stamps it; timestamps increase by a second per call unless given. */
export function ev(
  team: number,
  event: string,
  distinctId: string,
  properties: Record<string, unknown> = {},
  at?: string,
): CapturedEvent {
  clock += 1000
  const ts = at ?? new Date(clock).toISOString()
  return {
    uuid: uuidv7(),
    event,
    distinct_id: distinctId,
    properties,
    timestamp: ts,
    now: ts,
    sent_at: null,
    ip: null,
    team_id: team,
  }
}

/**
 * The real ClickHouse writer with a fault after each batch's rows are written: `after` may throw (a
 * failed batch) or close the projector's NATS connection and throw (a crash between insert and ack).
 */
export function writerWithFault(
  ch: ClickHouseClient,
  after: (rows: BatchRows) => Promise<void> | void,
  tables: ProjectionTables = LIVE_TABLES,
): BatchWriter {
  const real = new ClickHouseWriter(ch, tables)
  return {
    async write(rows) {
      const refused = await real.write(rows)
      await after(rows)
      return refused
    },
  }
}

export async function runProjector(
  log: TestLog,
  ch: ClickHouseClient,
  team: number | number[],
  extra: Partial<ProjectorOptions> = {},
): Promise<RunningProjector> {
  return startProjector({
    nc: log.nc,
    ch,
    log: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent'),
    batchSize: 50,
    maxWaitMs: 50,
    stream: log.stream,
    subjectPrefix: log.prefix,
    durablePrefix: `${log.prefix}-projector`,
    dlqSubject: log.dlqSubject,
    teams: new Set(Array.isArray(team) ? team : [team]),
    ...extra,
  })
}

export function rows<T = Record<string, unknown>>(ch: ClickHouseClient, query: string): Promise<T[]> {
  return selectRows<T>(ch, query)
}

/** Polls until the query returns `n` rows (or more). */
export async function waitForRows<T = Record<string, unknown>>(
  ch: ClickHouseClient,
  query: string,
  n: number,
  timeoutMs = 60_000,
): Promise<T[]> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const r = await rows<T>(ch, query)
    if (r.length >= n) return r
    if (Date.now() > deadline) throw new Error(`timed out: ${r.length}/${n} rows for ${query}`)
    await new Promise((res) => setTimeout(res, 100))
  }
}

/**
 * Waits until every lane consumer acknowledged everything published so far. The timeout catches a
 * stuck projector; the suite's lanes share two cores, so it is generous.
 */
export async function waitIdle(log: TestLog, p: RunningProjector, timeoutMs = 60_000): Promise<void> {
  const jsm = await jetstreamManager(log.nc)
  const last = (await jsm.streams.info(log.stream)).state.last_seq
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let done = true
    for (const lane of p.consumers.keys()) {
      const info = await jsm.consumers.info(log.stream, `${log.prefix}-projector-${lane}`)
      if (info.num_pending > 0 || info.num_ack_pending > 0) done = false
    }
    if (done) return
    if (Date.now() > deadline) throw new Error(`projector not idle (stream last seq ${last})`)
    await new Promise((res) => setTimeout(res, 50))
  }
}

export const PERSON_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22'
const ZERO_UUID = "toUUID('00000000-0000-0000-0000-000000000000')"

/** Each event of the team with the person it belongs to now (through the merge overrides). */
export async function eventPersons(ch: ClickHouseClient, team: number) {
  return rows<{ uuid: string; event: string; distinct_id: string; stamped: string; person: string }>(
    ch,
    `SELECT toString(uuid) AS uuid, event, distinct_id, toString(person_id) AS stamped,
            toString(if(override_person_id = ${ZERO_UUID}, person_id, override_person_id)) AS person
     FROM events
     ANY LEFT JOIN (
       SELECT old_person_id AS person_id, argMax(override_person_id, version) AS override_person_id
       FROM person_overrides WHERE team_id = ${team} GROUP BY old_person_id
     ) AS overrides USING person_id
     WHERE team_id = ${team}
     ORDER BY timestamp, _seq, _offset`,
  )
}

export interface PersonView {
  id: string
  properties: Record<string, unknown>
  is_identified: number
  is_deleted: number
  version: number
}

export async function persons(ch: ClickHouseClient, team: number): Promise<PersonView[]> {
  const r = await rows<{
    id: string
    properties: string
    is_identified: number
    is_deleted: number
    v: string
  }>(
    ch,
    `SELECT toString(id) AS id, argMax(properties, version) AS properties,
            argMax(is_identified, version) AS is_identified, argMax(is_deleted, version) AS is_deleted,
            max(version) AS v
     FROM person WHERE team_id = ${team} GROUP BY id ORDER BY id`,
  )
  return r.map((p) => ({ ...p, properties: JSON.parse(p.properties), version: Number(p.v) }))
}

export async function distinctIds(ch: ClickHouseClient, team: number): Promise<Record<string, string>> {
  const r = await rows<{ distinct_id: string; person_id: string }>(
    ch,
    `SELECT distinct_id, toString(argMax(person_id, version)) AS person_id
     FROM person_distinct_id WHERE team_id = ${team} GROUP BY distinct_id HAVING argMax(is_deleted, version) = 0`,
  )
  return Object.fromEntries(r.map((x) => [x.distinct_id, x.person_id]))
}

/** What replay() needs to rebuild one project of a test file's log (quiet). */
export function replayOptions(log: TestLog, ch: ClickHouseClient, team: number) {
  return {
    nc: log.nc,
    ch,
    log: createLogger('silent'),
    project: team,
    stream: log.stream,
    subjectPrefix: log.prefix,
  }
}

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { jetstream } from '@nats-io/jetstream'
import { headers as natsHeaders } from '@nats-io/nats-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountStore } from '../../../src/accounts/store.ts'
import { clickhouseClient } from '../../../src/clickhouse/client.ts'
import { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import { LIVE_TABLES, TABLE_KINDS } from '../../../src/projectors/tables.ts'
import { outdatedProjectionTables } from '../../../src/projectors/upgrade.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import {
  type Answers,
  answerOf,
  FIXTURE_DIR,
  type LoggedMessage,
  loggedEvents,
  payloadBytes,
  readAnswers,
  readLog,
} from '../../fixtures/previous-log/fixture.ts'
import { runBurrow } from '../../harness/cli.ts'
import { ownDatabase, stack, startTestBurrow, tempDir, WITHOUT_PROJECTOR } from '../../harness/index.ts'

// Issue #39: a log written by the previous version (the fixture test/fixtures/previous-log, made
// by commit c09b286; its README says how) is published into a fresh stack exactly as it was stored
// (same streams, order, subjects and headers), `burrow replay` rebuilds the tables from it, and the
// queries that version answered must get the same answers. No live projector runs: what the
// queries read is only what the replay wrote.

/**
 * Answers a schema change is expected to alter, by the name they have in answers.json, each with
 * why and the answer expected now, worked out from the stored one (or from the log: `log`).
 * Empty on the schema that wrote the fixture, where every answer must be the same. Issue #39 will,
 * for example, add the milliseconds to `toString(timestamp)` ('2026-10-05 10:11:12' becomes
 * '2026-10-05 10:11:12.345000'): its entries go here, never a looser comparison. An entry looks like
 *
 *   'first and last timestamps as text': {
 *     why: 'events.timestamp is DateTime64(6,'UTC'): its text keeps the fraction the log holds',
 *     expected: (stored, log) => …the stored rows with min/max of loggedEvents(log)'s timestamps…,
 *   },
 */
const EXPECTED_CHANGES: Record<
  string,
  { why: string; expected: (stored: unknown, log: LoggedMessage[]) => unknown }
> = {
  'first and last timestamps as text': {
    why: "events.timestamp is DateTime64(6, 'UTC'): its text keeps the fraction the log holds",
    expected: (stored, log) => {
      const byEvent = new Map<string, number[]>()
      for (const e of teamEvents(log, 1)) byEvent.set(e.event, [...(byEvent.get(e.event) ?? []), e.ms])
      const results = [...byEvent.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([event, ms]) => [event, text6(Math.min(...ms)), text6(Math.max(...ms))])
      return { ...(stored as object), results }
    },
  },
  'the first events as rows': {
    why: 'the fraction is kept, so events of one second sort by it before their uuid',
    expected: (stored, log) => {
      const first = teamEvents(log, 1)
        .sort((a, b) => a.ms - b.ms || (a.uuid < b.uuid ? -1 : 1))
        .slice(0, 40)
      const results = first.map((e) => [e.uuid, e.event, e.distinct_id, text6(e.ms), Math.floor(e.ms / 1000)])
      return { ...(stored as object), results }
    },
  },
  sessions: {
    why: "events.timestamp is DateTime64(6, 'UTC'): its text keeps the fraction the log holds",
    expected: (stored, log) => {
      const bySession = new Map<string, number[]>()
      for (const e of teamEvents(log, 1)) {
        const id = typeof e.properties.$session_id === 'string' ? e.properties.$session_id : ''
        bySession.set(id, [...(bySession.get(id) ?? []), e.ms])
      }
      const results = [...bySession.entries()]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, 50)
        .map(([id, ms]) => [id, ms.length, text6(Math.min(...ms)), text6(Math.max(...ms))])
      return { ...(stored as object), results }
    },
  },
  'persons table': {
    why: "person.created_at is DateTime64(3, 'UTC'): a person is created at an event's time, fraction and all",
    expected: (stored, log) => {
      // the stored text has the second; the fraction is that of the team's event in that second
      const bySecond = new Map<string, Set<number>>()
      for (const e of teamEvents(log, 1)) {
        const second = text6(e.ms).slice(0, 19)
        bySecond.set(second, (bySecond.get(second) ?? new Set()).add(e.ms))
      }
      const answer = stored as { results: unknown[][] }
      const results = answer.results.map((row) => {
        const at = [...(bySecond.get(String(row[8])) ?? [])]
        return at.length === 1 ? [...row.slice(0, 8), text6(at[0]!).slice(0, 23)] : row
      })
      return { ...answer, results }
    },
  },
}

/** A team's events in the log, with their times in epoch ms. */
function teamEvents(log: LoggedMessage[], team: number) {
  return loggedEvents(log)
    .filter((e) => e.team_id === team)
    .map((e) => ({ ...e, ms: Date.parse(e.timestamp) }))
}

/** An instant as a DateTime64(6, 'UTC') reads as text: '2026-10-05 10:11:12.345000'. */
const text6 = (ms: number) => `${new Date(ms).toISOString().slice(0, 23).replace('T', ' ')}000`

let burrow: RunningBurrow
let stopNats: () => Promise<void>
let nc: NatsConnection
let fixture: Answers
let log: LoggedMessage[]
let replayOutput: string

beforeAll(async () => {
  fixture = readAnswers()
  log = readLog()
  const nats = await startNatsServer({
    bin: stack().bins.nats,
    dataDir: join(tempDir(), 'nats'),
    port: await freePort(),
  })
  stopNats = () => nats.stop()
  const { database } = await ownDatabase('burrow_previous_log')
  const env = { NATS_URL: nats.url, CLICKHOUSE_DATABASE: database }
  // API and capture only: the rows come from the replay alone
  burrow = await startTestBurrow(env, WITHOUT_PROJECTOR)
  nc = await connectNats(nats.url, 'previous-log-test')

  // The projects of the log, with the same ids and time zones (the config bucket is not in the log).
  const accounts = await AccountStore.open(nc)
  for (const p of fixture.projects) {
    let project = await accounts.getProject(p.id)
    if (!project) {
      const org = (await accounts.getProject(burrow.credentials.project_id))!.organization_id
      project = await accounts.createProject({ name: p.name, organization_id: org, timezone: p.timezone })
    }
    expect({ id: project.id, timezone: project.timezone }).toEqual({ id: p.id, timezone: p.timezone })
  }

  // The log as it was: each message where it was, with its subject and headers (the msg id too).
  const js = jetstream(nc)
  for (const m of log) {
    const h = natsHeaders()
    for (const [k, v] of m.headers) h.append(k, v)
    const ack = await js.publish(m.subject, payloadBytes(m), { headers: h })
    expect({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate }).toEqual({
      stream: m.stream,
      seq: m.seq,
      duplicate: false,
    })
  }

  // An upgrade: the live projection tables as the previous version made them (empty: the replay
  // fills the new layout from the log, and a start would run the same replay, upgrade.ts).
  const ch = clickhouseClient(stack().clickhouseUrl, database)
  for (const t of TABLE_KINDS) await ch.command({ query: `DROP TABLE ${LIVE_TABLES[t]}` })
  const previous = readFileSync(join(FIXTURE_DIR, 'c09b286-tables.sql'), 'utf8')
    .split('\n')
    .filter((l) => !l.startsWith('--'))
    .join('\n')
  for (const statement of previous.split(/;\s*$/m).filter((x) => x.trim()))
    await ch.command({ query: statement })
  // and raw_sessions as it was before its first-event fields became one state (d2c4bae)
  await ch.command({ query: 'DROP TABLE raw_sessions' })
  await ch.command({
    query: readFileSync(join(FIXTURE_DIR, 'd2c4bae-raw-sessions.sql'), 'utf8')
      .split('\n')
      .filter((l) => !l.startsWith('--'))
      .join('\n')
      .replace(/;\s*$/, ''),
  })
  expect(await outdatedProjectionTables(TableAdmin.single(ch))).toEqual([
    'events',
    'person',
    'groups',
    'raw_sessions',
  ])

  const r = await runBurrow(['replay'], {
    ...env,
    CLICKHOUSE_URL: stack().clickhouseUrl,
    DATA_DIR: tempDir(),
    LOG_LEVEL: 'warn',
  })
  replayOutput = r.output
  expect(r.code, r.output).toBe(0)
  expect(await outdatedProjectionTables(TableAdmin.single(ch))).toEqual([])
  await ch.close()
}, 120_000)

afterAll(async () => {
  await nc?.close()
  await burrow?.stop()
  await stopNats?.()
})

async function ask(project: number, query: Record<string, unknown>) {
  const res = await fetch(`${burrow.url}/api/projects/${project}/query/`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${burrow.credentials.personal_api_key}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ query, refresh: 'force_blocking' }),
  })
  return { status: res.status, answer: answerOf(await res.json()) }
}

describe('a log written by c09b286, replayed', () => {
  it('replays every event of the log', () => {
    // the JSON `burrow replay` prints at the end: the events it projected and the swap
    const result = JSON.parse(replayOutput.slice(replayOutput.indexOf('{\n'))) as {
      swapped: boolean
      events: number
    }
    const sent = Object.values(fixture.events).reduce((a, b) => a + b, 0)
    expect({ swapped: result.swapped, events: result.events }).toEqual({ swapped: true, events: sent })
  })

  it('holds answers, not errors', () => {
    // an error answered the same way twice would pass the comparison and check nothing
    expect(fixture.answers.filter((a) => a.status !== 200).map((a) => a.name)).toEqual([])
    expect(loggedEvents(log).length).toBe(Object.values(fixture.events).reduce((a, b) => a + b, 0))
  })

  it('lists only stored answers as expected changes', () => {
    const names = new Set(fixture.answers.map((a) => a.name))
    expect(Object.keys(EXPECTED_CHANGES).filter((n) => !names.has(n))).toEqual([])
  })

  it('answers every stored query as the previous version did', async () => {
    const differences: { name: string; stored: unknown; now: unknown }[] = []
    for (const a of fixture.answers) {
      const change = EXPECTED_CHANGES[a.name]
      const expected = {
        status: a.status,
        answer: change ? change.expected(a.answer, log) : a.answer,
      }
      const got = await ask(a.project, a.query)
      // all answers are compared before failing, so one run lists every difference
      if (!isDeepStrictEqual(got, expected)) differences.push({ name: a.name, stored: expected, now: got })
    }
    expect(differences.map((d) => d.name)).toEqual([])
    expect(differences).toEqual([])
  })
})

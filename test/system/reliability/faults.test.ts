// The fault suite: each scenario runs Burrow as a real process on servers of its own, injects one
// fault (SIGKILL of Burrow, ClickHouse or NATS gone, a replay killed midway), and then counts by
// uuid: every acknowledged event must be stored, and none twice. The numbers of every scenario add
// up to the summary line printed at the end.
import { jetstreamManager } from '@nats-io/jetstream'
import { afterAll, describe, expect, it } from 'vitest'
import { EVENTS_STREAM } from '../../../schema/jetstream.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { spawnBurrow } from '../../harness/cli.ts'
import { tempDir } from '../../harness/index.ts'
import {
  batches,
  type BurrowProcess,
  duplicateRows,
  Ledger,
  makeEvents,
  PrivateStack,
  type SendResult,
  sleep,
  startBurrowProcess,
  storedTotal,
  summaryLine,
  type Tally,
  tally,
  waitProjectorsIdle,
  waitStored,
} from './helpers.ts'

const tallies: Tally[] = []
const cleanups: (() => Promise<unknown>)[] = []
afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined)
  for (const t of tallies) {
    console.log(
      `  ${t.scenario}: sent ${t.sent}, acknowledged ${t.acknowledged}, stored ${t.stored}, ` +
        `lost ${t.lost}, duplicated ${t.duplicated}`,
    )
  }
  console.log(summaryLine(tallies))
})

async function privateStack() {
  const s = await PrivateStack.start()
  cleanups.push(() => s.stop())
  return s
}

async function burrow(s: PrivateStack, env: Record<string, string>, role?: string, port?: number) {
  const b = await startBurrowProcess(
    { ...s.env, ...env },
    { role, dataDir: env.DATA_DIR ?? tempDir(), port: port ?? (await freePort()) },
  )
  cleanups.push(() => b.kill())
  return b
}

/** Final check of a scenario: no lost and no duplicate rows, and the figures for the summary. */
async function settle(s: PrivateStack, team: number, ledger: Ledger, scenario: string) {
  const ch = s.client()
  const counts = await waitStored(ch, team, ledger)
  await waitProjectorsIdle(await s.natsClient())
  const t = tally(scenario, ledger, await waitStored(ch, team, ledger, 1000))
  tallies.push(t)
  expect(await duplicateRows(ch, team)).toEqual([])
  expect({ lost: t.lost, duplicated: t.duplicated, unexpected: t.unexpected }).toEqual({
    lost: 0,
    duplicated: 0,
    unexpected: 0,
  })
  expect(counts.size).toBeGreaterThanOrEqual(ledger.acked.size)
  return t
}

describe('fault: the projector process is SIGKILLed while writing', () => {
  it('every acknowledged event is stored exactly once after restarts', async () => {
    const s = await privateStack()
    const dataDir = tempDir()
    // Small chunks and batches: many insert-then-ack cycles to land a kill in.
    const env = { DATA_DIR: dataDir, CAPTURE_CHUNK_EVENTS: '50', PROJECTOR_BATCH_SIZE: '4' }
    const capture = await burrow(s, env, 'capture')
    const ledger = new Ledger()
    const events = makeEvents(12_000, 'kill')
    const groups = batches(events, 500)
    // Half before the projector ever runs (a backlog), half while it is being killed.
    const deadline = Date.now() + 90_000
    for (const g of groups.slice(0, 12))
      await ledger.sendUntilAcked(() => capture.url, capture.token, g, { deadline })
    let sending = true
    const background = (async () => {
      for (const g of groups.slice(12)) {
        await ledger.sendUntilAcked(() => capture.url, capture.token, g, { deadline })
        await sleep(50)
      }
      sending = false
    })()

    const ch = s.client()
    const nc = await s.natsClient()
    const jsm = await jetstreamManager(nc)
    const team = capture.projectId
    let kills = 0
    let inDoubt = 0
    // Kill right after rows appear: between the events INSERT and the ack is the window that
    // must be reconciled. Rows above the consumer's ack floor after the kill prove a hit.
    for (let attempt = 0; attempt < 6 && (inDoubt === 0 || kills < 3); attempt++) {
      const projector = await burrow(s, env, 'projector')
      const before = await storedTotal(ch, team)
      const until = Date.now() + 10_000
      while (Date.now() < until && (await storedTotal(ch, team)) === before) await sleep(5)
      await sleep(Math.floor(Math.random() * 30))
      await projector.kill()
      kills++
      const info = await jsm.consumers.info(EVENTS_STREAM, 'projector-live')
      const rs = await ch.query({
        query: `SELECT count() AS c FROM events WHERE team_id = ${team} AND _seq > ${info.ack_floor.stream_seq}`,
        format: 'JSONEachRow',
      })
      const [row] = await rs.json<{ c: string }>()
      if (Number(row?.c) > 0) inDoubt++
    }
    await burrow(s, env, 'projector')
    await background
    expect(sending).toBe(false)
    expect(ledger.acked.size).toBe(events.length)
    await settle(s, team, ledger, 'projector SIGKILL')
    console.log(`  projector SIGKILL: ${kills} kills, ${inDoubt} with rows written but not acknowledged`)
    expect(inDoubt).toBeGreaterThan(0)
  }, 150_000)
})

/** Sends the batches one after another (each until acknowledged), recording every answer. */
function steadyClient(
  ledger: Ledger,
  url: () => string,
  token: string,
  groups: Iterable<ReturnType<typeof makeEvents>>,
  opts: { pauseMs: number; deadline: number; log?: { r: SendResult; startedAt: number; endedAt: number }[] },
) {
  return (async () => {
    for (const g of groups) {
      const ok = await ledger.sendUntilAcked(url, token, g, {
        deadline: opts.deadline,
        onResult: (r, startedAt, endedAt) => opts.log?.push({ r, startedAt, endedAt }),
      })
      if (!ok) throw new Error('a batch was never acknowledged')
      await sleep(opts.pauseMs)
    }
  })()
}

describe('fault: ClickHouse is stopped during ingestion', () => {
  it('capture keeps answering 200, /_health names clickhouse, projectors catch up, nothing lost or doubled', async () => {
    const s = await privateStack()
    const b = await burrow(s, { PROJECTOR_BATCH_SIZE: '4', CAPTURE_CHUNK_EVENTS: '50' })
    const ledger = new Ledger()
    const answers: { r: SendResult; startedAt: number; endedAt: number }[] = []
    // The client sends until ClickHouse is back and ten more batches were answered, however slow
    // the machine: a fixed number of batches may all be answered before the fault starts.
    let upAt = Infinity
    function* groups() {
      for (let i = 0; i < 400; i++) {
        if (answers.filter((a) => a.startedAt > upAt).length >= 10) return
        yield makeEvents(100, `chdown-${i}`)
      }
    }
    const client = steadyClient(ledger, () => b.url, b.token, groups(), {
      pauseMs: 40,
      deadline: Date.now() + 90_000,
      log: answers,
    })
    const ch = s.client()
    while ((await storedTotal(ch, b.projectId)) === 0) await sleep(50)

    await s.killClickHouse()
    const downAt = Date.now()
    const health = await fetch(`${b.url}/_health`)
    const body = await health.json()
    expect(health.status).toBe(503)
    expect(body.detail).toMatch(/clickhouse/)
    expect(body.dependencies).toMatchObject({ clickhouse: { status: 'down' }, nats: { status: 'ok' } })
    expect((await fetch(`${b.url}/_ready`)).status).toBe(200)
    await sleep(3000)
    // The projector fails its inserts meanwhile; the metric shows it (on a loaded machine its next
    // batch may take seconds more to come).
    await expect
      .poll(async () => (await fetch(`${b.url}/metrics`)).text(), { timeout: 30_000, interval: 500 })
      .toMatch(/burrow_clickhouse_insert_errors_total\{table="[a-z_]+"\} [1-9]/)
    upAt = Date.now()
    await s.startClickHouse()

    await client
    const during = answers.filter((a) => a.startedAt >= downAt && a.endedAt <= upAt)
    expect(during.length).toBeGreaterThan(5)
    expect(during.every((a) => a.r === 200)).toBe(true)
    expect((await fetch(`${b.url}/_health`)).status).toBe(200)
    await settle(s, b.projectId, ledger, 'ClickHouse down')
  }, 120_000)
})

describe('fault: NATS is stopped', () => {
  it('capture answers 503 (never 200) while it is down, recovers, and every acknowledged event is stored once', async () => {
    const s = await privateStack()
    const b = await burrow(s, { CAPTURE_ACK_TIMEOUT_MS: '1000', PROJECTOR_BATCH_SIZE: '4' })
    const ledger = new Ledger()
    const answers: { r: SendResult; startedAt: number; endedAt: number }[] = []
    const groups = batches(makeEvents(3000, 'natsdown'), 50)
    const client = steadyClient(ledger, () => b.url, b.token, groups, {
      pauseMs: 30,
      deadline: Date.now() + 90_000,
      log: answers,
    })
    while (ledger.acked.size < 500) await sleep(20)

    await s.stopNats()
    const downAt = Date.now()
    await sleep(3000)
    const upAt = Date.now()
    await s.startNats()

    await client
    const during = answers.filter((a) => a.startedAt >= downAt && a.endedAt <= upAt)
    expect(during.length).toBeGreaterThan(0)
    expect(during.filter((a) => a.r === 200)).toEqual([])
    expect(new Set(during.map((a) => a.r))).toEqual(new Set([503]))
    expect(answers.filter((a) => a.startedAt > upAt).some((a) => a.r === 200)).toBe(true)
    await settle(s, b.projectId, ledger, 'NATS down')
  }, 120_000)
})

describe('fault: Burrow is SIGKILLed during a /batch/ flood', () => {
  it('every event that got a 200 is stored; clients resend what failed and dedup holds', async () => {
    const s = await privateStack()
    const dataDir = tempDir()
    const port = await freePort()
    const env = { DATA_DIR: dataDir, PROJECTOR_BATCH_SIZE: '8', CAPTURE_CHUNK_EVENTS: '100' }
    let b: BurrowProcess = await burrow(s, env, undefined, port)
    const token = b.token
    const url = b.url
    const ledger = new Ledger()
    const deadline = Date.now() + 90_000
    // Four clients, each with its own events, all resending the same uuids after an error.
    const clients = Array.from({ length: 4 }, (_, c) =>
      steadyClient(ledger, () => url, token, batches(makeEvents(2000, `flood${c}`, 200), 100), {
        pauseMs: 0,
        deadline,
      }),
    )
    while (ledger.acked.size < 1500) await sleep(10)
    await b.kill()
    const ackedBeforeKill = ledger.acked.size
    await sleep(500)
    b = await burrow(s, env, undefined, port)
    await Promise.all(clients)
    expect(ledger.statuses.get('error') ?? 0).toBeGreaterThan(0)
    expect(ackedBeforeKill).toBeLessThan(ledger.sent.size)
    await settle(s, b.projectId, ledger, 'Burrow SIGKILL during flood')
  }, 120_000)
})

/** The projected views a replay must reproduce (versions left out: batch boundaries differ). */
async function views(ch: ReturnType<PrivateStack['client']>, team: number) {
  const q = async (query: string) => (await ch.query({ query, format: 'JSONEachRow' })).json()
  const zero = "toUUID('00000000-0000-0000-0000-000000000000')"
  return {
    events: await q(
      `SELECT toString(uuid) AS u, event, distinct_id, toUnixTimestamp64Milli(timestamp) AS timestamp_ms, properties, person_properties, _seq, _offset,
              toString(if(o = ${zero}, person_id, o)) AS person
       FROM events ANY LEFT JOIN (
         SELECT old_person_id AS person_id, argMax(override_person_id, version) AS o
         FROM person_overrides WHERE team_id = ${team} GROUP BY old_person_id
       ) AS overrides USING person_id
       WHERE team_id = ${team} ORDER BY u`,
    ),
    persons: await q(
      `SELECT toString(id) AS i, argMax(properties, version) AS props, argMax(is_identified, version) AS ident,
              argMax(is_deleted, version) AS del FROM person WHERE team_id = ${team} GROUP BY id ORDER BY i`,
    ),
    distinctIds: await q(
      `SELECT distinct_id, toString(argMax(person_id, version)) AS p FROM person_distinct_id
       WHERE team_id = ${team} GROUP BY distinct_id ORDER BY distinct_id`,
    ),
  }
}

function identityEvents(n: number) {
  const base = Date.now() - 7200_000
  return makeEvents(n, 'replay', 60).map((e, i) => {
    const p = i % 60
    const anon = `anon-${p}`
    if (i % 25 === 24) {
      return {
        ...e,
        event: '$identify',
        distinct_id: `user-${p}`,
        properties: { $anon_distinct_id: anon, $set: { email: `u${p}@x.io`, n: i } },
        timestamp: new Date(base + i * 1000).toISOString(),
      }
    }
    return {
      ...e,
      distinct_id: i % 3 ? anon : `user-${p}`,
      timestamp: new Date(base + i * 1000).toISOString(),
    }
  })
}

async function runReplay(s: PrivateStack, env: Record<string, string>) {
  // batches of 4 messages: many batches for the replay to be killed between
  const p = spawnBurrow(['replay', '--batch-messages', '4'], { ...s.env, ...env })
  cleanups.push(async () => {
    if (p.child.exitCode === null) p.child.kill('SIGKILL')
  })
  return p
}

const replayResult = (out: string) => JSON.parse(out.slice(out.indexOf('{\n')))

describe('fault: a replay is killed midway', () => {
  it('resumes from its watermark, and its views equal those of a clean replay', async () => {
    const s = await privateStack()
    const dataDir = tempDir()
    const b = await burrow(s, { DATA_DIR: dataDir, PROJECTOR_BATCH_SIZE: '20' })
    const ledger = new Ledger()
    // One log message per request: many small batches for the replay to be killed between.
    const groups = batches(identityEvents(1600), 8)
    const deadline = Date.now() + 60_000
    await Promise.all(
      Array.from({ length: 4 }, (_, c) =>
        steadyClient(
          ledger,
          () => b.url,
          b.token,
          groups.filter((_, i) => i % 4 === c),
          { pauseMs: 0, deadline },
        ),
      ),
    )
    await waitStored(s.client(), b.projectId, ledger)
    await waitProjectorsIdle(await s.natsClient())

    const replayEnv = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
    const first = await runReplay(s, replayEnv)
    const [, , end] = (await first.waitFor(/replay build: seq (\d+)\/(\d+)/, 60_000)) as RegExpMatchArray
    const position = () =>
      Math.max(0, ...[...first.output().matchAll(/replay build: seq (\d+)\//g)].map((x) => Number(x[1])))
    // Let it get a third of the way in, then kill it.
    while (position() < Number(end) / 3 && first.child.exitCode === null) await sleep(5)
    first.child.kill('SIGKILL')
    await first.exited
    const killedAt = position()
    expect(killedAt).toBeGreaterThan(0)
    expect(killedAt).toBeLessThan(Number(end))

    const resumed = await runReplay(s, replayEnv)
    expect(await resumed.exited).toBe(0)
    expect(replayResult(resumed.output())).toMatchObject({ resumed: true, swapped: true })
    // It went on from where the first one stopped, not from the start.
    const firstLine = resumed.output().match(/replay build: seq (\d+)\//)
    expect(Number(firstLine?.[1])).toBeGreaterThan(killedAt)
    const ch = s.client()
    const afterResume = await views(ch, b.projectId)

    const clean = await runReplay(s, replayEnv)
    expect(await clean.exited).toBe(0)
    expect(replayResult(clean.output())).toMatchObject({ resumed: false, swapped: true })
    const afterClean = await views(ch, b.projectId)
    expect(afterResume.events).toHaveLength(1600)
    expect(afterResume).toEqual(afterClean)
    await settle(s, b.projectId, ledger, 'replay killed midway')
  }, 150_000)
})

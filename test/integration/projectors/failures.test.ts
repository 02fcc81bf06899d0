import { AckPolicy, DeliverPolicy, jetstream } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DLQ_STREAM } from '../../../schema/jetstream.ts'
import { deadLetters } from '../../../src/observability/metrics.ts'
import type { BatchWriter } from '../../../src/projectors/batch.ts'
import { DLQ_HEADERS } from '../../../src/projectors/dead-letters.ts'
import { LIVE_TABLES, suffixedTables, TABLE_KINDS } from '../../../src/projectors/tables.ts'
import { ClickHouseWriter } from '../../../src/projectors/writer.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import { ev, rows, runProjector, type TestLog, testLog, waitForRows, waitIdle } from './helpers.ts'

// Permanent and transient failures (docs/projectors.md, "Failures"): a row ClickHouse refuses for its
// content is dead-lettered with the server's reason and the lane goes on; a lane that keeps failing
// lets the other lanes of the process project meanwhile.

const ch = clickhouse()
let log: TestLog

beforeAll(async () => {
  log = await testLog(await nats())
})

/** The dead letters of the test's subject, oldest first. */
async function readDeadLetters(n: number, expires = 5000) {
  const js = jetstream(log.nc)
  const jsm = await js.jetstreamManager()
  const info = await jsm.consumers.add(DLQ_STREAM, {
    filter_subject: log.dlqSubject,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.None,
    inactive_threshold: 30e9,
  })
  const consumer = await js.consumers.get(DLQ_STREAM, info.name)
  const out: { reason: string; seq: string; offset: string; data: string }[] = []
  for (let i = 0; i < n; i++) {
    const m = await consumer.next({ expires: i === 0 ? expires : 1000 })
    if (!m) break
    const h = (k: string) => m.headers?.get(k) ?? ''
    out.push({
      reason: h(DLQ_HEADERS.reason),
      seq: h(DLQ_HEADERS.seq),
      offset: h(DLQ_HEADERS.offset),
      data: m.string(),
    })
  }
  return out
}

const refusedCount = async () =>
  (await deadLetters.get()).values.find((v) => v.labels.kind === 'refused')?.value ?? 0

describe('a row ClickHouse refuses for its content', () => {
  const suffix = `_refuse_${Date.now().toString(36)}`
  const tables = suffixedTables(suffix)

  beforeAll(async () => {
    for (const k of TABLE_KINDS) {
      await ch.command({ query: `CREATE TABLE ${tables[k]} AS ${LIVE_TABLES[k]}` })
    }
    // A real server-side refusal: this test's copy of `events`
    // stores session_id as FixedString(36) (a UUID), so ClickHouse refuses a longer session id while
    // parsing the INSERT, for the whole INSERT (Code 131, TOO_LARGE_STRING_SIZE).
    await ch.command({ query: `ALTER TABLE ${tables.events} MODIFY COLUMN session_id FixedString(36)` })
  })
  afterAll(async () => {
    for (const k of TABLE_KINDS) await ch.command({ query: `DROP TABLE IF EXISTS ${tables[k]}` })
  })

  it('ends in the dead letters with the server reason; its neighbours and later batches are written', async () => {
    const team = (await createTestProject('refused rows')).id
    const sid = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'
    const good1 = ev(team, 'good', 'r-1', { $session_id: sid })
    const bad = ev(team, 'bad', 'r-2', { $session_id: `${sid}-and-more` })
    const good2 = ev(team, 'good', 'r-3')
    const seq = await log.publish('live', [good1, bad, good2])
    const before = await refusedCount()
    const p = await runProjector(log, ch, team, { tables, lanes: ['live'] })
    try {
      await waitIdle(log, p)
      const later = ev(team, 'later', 'r-4')
      await log.publish('live', [later])
      await waitIdle(log, p)
      const written = await rows<{ event: string; _offset: number }>(
        ch,
        `SELECT event, _offset FROM ${tables.events} WHERE team_id = ${team} ORDER BY _seq, _offset`,
      )
      expect(written).toEqual([
        { event: 'good', _offset: 0 },
        { event: 'good', _offset: 2 },
        { event: 'later', _offset: 0 },
      ])
      const [dl, ...more] = await readDeadLetters(2)
      expect(more).toEqual([])
      expect(dl).toMatchObject({ seq: String(seq), offset: '1' })
      expect(dl!.reason).toMatch(
        /^ClickHouse refused the row: Code 131: Too large value for FixedString\(36\)/,
      )
      expect(JSON.parse(dl!.data)).toMatchObject({ uuid: bad.uuid, event: 'bad' })
      expect((await refusedCount()) - before).toBe(1)
      // the person of the refused event exists: the person rules ran before the insert, as in PostHog
      const [pdi] = await rows<{ n: string }>(
        ch,
        `SELECT count() AS n FROM ${tables.person_distinct_id} WHERE team_id = ${team} AND distinct_id = 'r-2'`,
      )
      expect(Number(pdi!.n)).toBe(1)
    } finally {
      await p.stop()
    }
  })
})

describe('a historical import spanning ten years of months', () => {
  it('projects completely', async () => {
    const team = (await createTestProject('ten years')).id
    const events = Array.from({ length: 240 }, (_, i) =>
      ev(
        team,
        'imported',
        `h-${i % 7}`,
        { i },
        new Date(Date.UTC(2010, Math.floor(i / 2), 1 + (i % 2))).toISOString(),
      ),
    )
    await log.publish('historical', events)
    const p = await runProjector(log, ch, team, { lanes: ['historical'] })
    try {
      await waitIdle(log, p)
      const [r] = await rows<{ n: string; months: string; first: string; last: string }>(
        ch,
        // toString: one type for the counts and times, whatever the JSON format makes of 64-bit integers
        `SELECT toString(count()) AS n, toString(uniqExact(toYYYYMM(timestamp))) AS months,
                toString(min(timestamp)) AS first, toString(max(timestamp)) AS last
         FROM events WHERE team_id = ${team}`,
      )
      expect(r).toEqual({
        n: '240',
        months: '120',
        first: '2010-01-01 00:00:00.000000',
        last: '2019-12-02 00:00:00.000000',
      })
    } finally {
      await p.stop()
    }
  })
})

describe('a lane that keeps failing', () => {
  it('does not hold up a live event; once the failure passes it projects its batch', async () => {
    const imported = (await createTestProject('failing historical')).id
    const live = (await createTestProject('live meanwhile')).id
    const real = new ClickHouseWriter(ch, LIVE_TABLES)
    let down = true
    let refusedAttempts = 0
    // ClickHouse "down" for the historical team's rows only (a network error: transient, retried).
    const writer: BatchWriter = {
      async write(batch) {
        if (down && batch.events.some((r) => r.event.team_id === imported)) {
          refusedAttempts++
          throw new Error('connect ECONNREFUSED 127.0.0.1:8123 (test: ClickHouse unreachable)')
        }
        return real.write(batch)
      },
    }
    const p = await runProjector(log, ch, [imported, live], {
      lanes: ['live', 'historical'],
      writer,
      retry: { initialMs: 20, maxMs: 200 },
    })
    try {
      await log.publish('historical', [ev(imported, 'old', 'h-1', {}, '2015-03-01T00:00:00.000Z')])
      await waitFor(() => refusedAttempts >= 2)
      const e = ev(live, 'now', 'l-1')
      await log.publish('live', [e])
      await waitForRows(ch, `SELECT 1 FROM events WHERE team_id = ${live} AND uuid = '${e.uuid}'`, 1)
      // the historical batch was still failing all along
      expect(down).toBe(true)
      expect(await rows(ch, `SELECT 1 FROM events WHERE team_id = ${imported}`)).toEqual([])
      const attempts = refusedAttempts
      await waitFor(() => refusedAttempts > attempts)
      down = false
      await waitForRows(ch, `SELECT 1 FROM events WHERE team_id = ${imported}`, 1)
      await waitIdle(log, p)
    } finally {
      await p.stop()
    }
  })
})

async function waitFor(cond: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((r) => setTimeout(r, 20))
  }
}

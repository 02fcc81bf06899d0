import { jetstreamManager } from '@nats-io/jetstream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { RunningProjector } from '../../../src/projectors/index.ts'
import { LIVE_TABLES } from '../../../src/projectors/tables.ts'
import { sqlString } from '../../../src/clickhouse/sql.ts'
import { clickhouse, createTestProject, nats } from '../../harness/index.ts'
import { ev, rows, runProjector, type TestLog, testLog, waitForRows, waitIdle } from './helpers.ts'

const ch = clickhouse()
let log: TestLog
let team: number
let projector: RunningProjector

beforeAll(async () => {
  log = await testLog(await nats())
  team = (await createTestProject('projector events')).id
  projector = await runProjector(log, ch, team)
})
afterAll(async () => {
  await projector?.stop()
})

interface EventRowOut {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: string
  session_id: string
  elements_chain: string
  created_at: string
  _seq: string
  _offset: number
}

describe('events writer', () => {
  it('writes each event with its properties JSON, timestamp, session and elements', async () => {
    const e = ev(
      team,
      'clicked',
      'writer-1',
      {
        n: 1.5,
        flag: true,
        obj: { a: 'x', b: { c: 2 } },
        nul: null,
        arr: [1, 'two'],
        $session_id: 'sess-1',
        $elements: [
          {
            tag_name: 'button',
            $el_text: 'Buy "now"',
            attr__class: 'primary big',
            nth_child: 2,
            nth_of_type: 1,
          },
          { tag_name: 'div', attr__id: 'root', nth_child: 1, nth_of_type: 1 },
        ],
      },
      '2024-05-01T12:00:00.123Z',
    )
    const seq = await log.publish('live', [e])
    const [row] = await waitForRows<EventRowOut>(
      ch,
      `SELECT * FROM events WHERE team_id = ${team} AND uuid = '${e.uuid}'`,
      1,
    )
    expect(row!.event).toBe('clicked')
    expect(row!.distinct_id).toBe('writer-1')
    expect(row!.timestamp).toBe('2024-05-01 12:00:00.123000')
    expect(row!.session_id).toBe('sess-1')
    // attributes sorted by name (PostHog sorts with localeCompare: '_' before letters)
    expect(row!.elements_chain).toBe(
      'button.big.primary:attr__class="primary big"nth-child="2"nth-of-type="1"text="Buy \\"now\\"";' +
        'div:attr__id="root"attr_id="root"nth-child="1"nth-of-type="1"',
    )
    // the bag as sent, less $elements (which became the chain)
    expect(row!.properties).toBe(
      '{"n":1.5,"flag":true,"obj":{"a":"x","b":{"c":2}},"nul":null,"arr":[1,"two"],"$session_id":"sess-1"}',
    )
    expect(Number(row!._seq)).toBe(seq)
    expect(row!._offset).toBe(0)
  })

  it('keeps strings with tabs, newlines, quotes, backslashes and non-ASCII exactly', async () => {
    const tricky = 'a\tb\nc\'d\\e"f\r\0g ünï 🦔'
    const e = ev(team, 'tricky', `did-${tricky}`, { [tricky]: tricky, nested: { [tricky]: tricky } })
    await log.publish('live', [e])
    const [row] = await waitForRows<EventRowOut>(
      ch,
      `SELECT * FROM events WHERE team_id = ${team} AND uuid = '${e.uuid}'`,
      1,
    )
    expect(row!.distinct_id).toBe(`did-${tricky}`)
    expect(JSON.parse(row!.properties)[tricky]).toBe(tricky)
    const [read] = await rows<{ top: string; nested: string }>(
      ch,
      `SELECT JSONExtract(properties, ${sqlString(tricky)}, 'Nullable(String)') AS top,
              JSONExtract(properties, 'nested', ${sqlString(tricky)}, 'Nullable(String)') AS nested
       FROM events WHERE team_id = ${team} AND uuid = '${e.uuid}'`,
    )
    expect(read).toEqual({ top: tricky, nested: tricky })
  })

  it('keeps a bag readable when it holds an integer too wide for 64 bits', async () => {
    // JSON.stringify writes 2^67 in plain digits, which ClickHouse's JSON parser refuses as a whole
    const e = ev(team, 'wide', 'writer-wide', { wide: 2 ** 67, x: 'y', s: '147573952589676412928' })
    await log.publish('live', [e])
    const [row] = await waitForRows<{ x: string; wide: string; s: string }>(
      ch,
      `SELECT JSONExtract(properties, 'x', 'Nullable(String)') AS x,
              toFloat64(JSONExtract(properties, 'wide', 'Nullable(String)')) AS wide,
              JSONExtract(properties, 's', 'Nullable(String)') AS s
       FROM events WHERE team_id = ${team} AND uuid = '${e.uuid}'`,
      1,
    )
    expect(row).toEqual({ x: 'y', wide: 2 ** 67, s: '147573952589676412928' })
  })

  it('writes a chunk spanning several months with one row per event and its offset', async () => {
    const events = ['2023-11-30T23:59:59.999Z', '2023-12-15T00:00:00.000Z', '2024-01-01T00:00:00.000Z'].map(
      (t, i) => ev(team, 'monthly', `m-${i}`, { i }, t),
    )
    const seq = await log.publish('live', events)
    const got = await waitForRows<EventRowOut>(
      ch,
      `SELECT * FROM events WHERE team_id = ${team} AND event = 'monthly' ORDER BY _offset`,
      3,
    )
    expect(got.map((r) => [r.timestamp, Number(r._seq), r._offset])).toEqual([
      ['2023-11-30 23:59:59.999000', seq, 0],
      ['2023-12-15 00:00:00.000000', seq, 1],
      ['2024-01-01 00:00:00.000000', seq, 2],
    ])
  })

  it('consumes the historical and overflow lanes with their own consumers', async () => {
    const h = ev(team, 'from-history', 'hist-1', {}, '2021-03-04T05:06:07.000Z')
    const o = ev(team, 'from-overflow', 'hot-1')
    await log.publish('historical', [h])
    await log.publish('overflow', [o])
    const got = await waitForRows<{ event: string }>(
      ch,
      `SELECT event FROM events WHERE team_id = ${team} AND uuid IN ('${h.uuid}', '${o.uuid}') ORDER BY event`,
      2,
    )
    expect(got.map((r) => r.event)).toEqual(['from-history', 'from-overflow'])
    const jsm = await jetstreamManager(log.nc)
    const names = []
    for await (const c of jsm.consumers.list(log.stream)) names.push(c.name)
    expect(names.sort()).toEqual([
      `${log.prefix}-projector-historical`,
      `${log.prefix}-projector-live`,
      `${log.prefix}-projector-overflow`,
    ])
  })

  it('retries a batch while ClickHouse rejects it and acknowledges only after the insert', async () => {
    const table = `events_retry_${log.prefix}`
    const own = await runProjector(log, ch, team, {
      durablePrefix: `${log.prefix}-retry`,
      lanes: ['live'],
      tables: { ...LIVE_TABLES, events: table },
    })
    try {
      const e = ev(team, 'retried', 'retry-1')
      await log.publish('live', [e])
      await new Promise((r) => setTimeout(r, 800))
      const jsm = await jetstreamManager(log.nc)
      const pending = await jsm.consumers.info(log.stream, `${log.prefix}-retry-live`)
      expect(pending.num_ack_pending + pending.num_pending).toBeGreaterThan(0)
      await ch.command({ query: `CREATE TABLE ${table} AS events` })
      const got = await waitForRows<{ uuid: string }>(
        ch,
        `SELECT uuid FROM ${table} WHERE uuid = '${e.uuid}'`,
        1,
      )
      expect(got).toHaveLength(1)
    } finally {
      await own.stop()
      await ch.command({ query: `DROP TABLE IF EXISTS ${table}` })
    }
  })

  it('is idle with nothing left unacknowledged', async () => {
    await waitIdle(log, projector)
    const [r] = await rows<{ n: string }>(
      ch,
      `SELECT count() AS n FROM events WHERE team_id = ${team} AND event != 'retried'`,
    )
    expect(Number(r!.n)).toBe(8)
  })
})

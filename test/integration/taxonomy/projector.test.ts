// The taxonomy step inside the projector keeps its rules: a failed taxonomy write is retried with
// the batch and no event is written twice; rows ClickHouse refuses for their content are left out
// and the lane goes on (never stalls). On a database of this file's own, whose taxonomy tables it
// breaks on purpose.
import { beforeAll, describe, expect, it } from 'vitest'
import type { ClickHouseClient } from '../../../src/clickhouse/client.ts'
import { createTestProject, nats, ownDatabase } from '../../harness/index.ts'
import {
  ev,
  rows,
  runProjector,
  type TestLog,
  testLog,
  waitForRows,
  waitIdle,
} from '../projectors/helpers.ts'

let ch: ClickHouseClient
let log: TestLog

beforeAll(async () => {
  ch = (await ownDatabase('burrow_taxonomy_projector')).client
  log = await testLog(await nats())
})

const FAST = { initialMs: 50, maxMs: 200, jitter: false }

async function eventCount(team: number) {
  const [r] = await rows<{ n: string; u: string }>(
    ch,
    `SELECT count() AS n, uniqExact(uuid) AS u FROM events WHERE team_id = ${team}`,
  )
  return { n: Number(r!.n), u: Number(r!.u) }
}

describe('the taxonomy step in the projector', () => {
  it('retries a failed taxonomy write with its batch, writing no event twice', async () => {
    const team = (await createTestProject('taxonomy retry')).id
    const create = (await rows<{ statement: string }>(ch, 'SHOW CREATE TABLE event_definitions'))[0]!
      .statement
    await ch.command({ query: 'DROP TABLE event_definitions' })
    await log.publish('live', [ev(team, 'retry_me', 'a', { k: 1 }), ev(team, 'retry_me', 'b', { k: 2 })])
    const p = await runProjector(log, ch, team, { lanes: ['live'], retry: FAST })
    try {
      // the events' rows are in; the batch is not acknowledged while its taxonomy cannot be written
      await waitForRows(ch, `SELECT uuid FROM events WHERE team_id = ${team}`, 2)
      await new Promise((r) => setTimeout(r, 600))
      const info = await (await import('@nats-io/jetstream')).jetstreamManager(log.nc)
      const pending = (await info.consumers.info(log.stream, `${log.prefix}-projector-live`)).num_ack_pending
      expect(pending).toBeGreaterThan(0)
      await ch.command({ query: create })
      await waitIdle(log, p)
      expect(await eventCount(team)).toEqual({ n: 2, u: 2 })
      const defs = await rows<{ name: string }>(
        ch,
        `SELECT DISTINCT name FROM event_definitions WHERE team_id = ${team}`,
      )
      expect(defs.map((d) => d.name)).toEqual(['retry_me'])
    } finally {
      await p.stop()
    }
  })

  it('leaves out rows ClickHouse refuses for their content, and the lane goes on', async () => {
    const team = (await createTestProject('taxonomy refused')).id
    // this database's property definitions can store no property name (a UUID column): every
    // property row is refused while parsing the INSERT (Code 376, CANNOT_PARSE_UUID)
    const create = (await rows<{ statement: string }>(ch, 'SHOW CREATE TABLE property_definitions'))[0]!
      .statement
    await ch.command({ query: 'DROP TABLE property_definitions' })
    await ch.command({ query: create.replace(/`?name`? String/, 'name UUID') })
    await log.publish('live', [ev(team, 'refused_props', 'a', { plan: 'pro' })])
    const p = await runProjector(log, ch, team, { lanes: ['live'], retry: FAST })
    try {
      await waitIdle(log, p)
      await log.publish('live', [ev(team, 'later', 'b', { other: 1 })])
      await waitIdle(log, p)
      expect(await eventCount(team)).toEqual({ n: 2, u: 2 })
      const names = await rows<{ name: string }>(
        ch,
        `SELECT DISTINCT name FROM event_definitions WHERE team_id = ${team} ORDER BY name`,
      )
      expect(names.map((r) => r.name)).toEqual(['later', 'refused_props'])
      // the property rows were refused indeed (the column cannot hold a name)
      const [col] = await rows<{ type: string }>(
        ch,
        "SELECT type FROM system.columns WHERE database = currentDatabase() AND table = 'property_definitions' AND name = 'name'",
      )
      expect(col!.type).toBe('UUID')
      expect(await rows(ch, `SELECT 1 FROM property_definitions WHERE team_id = ${team}`)).toEqual([])
    } finally {
      await p.stop()
    }
  })
})

// The replays' table statements on one server (src/clickhouse/table-admin.ts), repeated as a replay
// that crashed and runs again repeats them: each copied row ends up in the new table once, and a
// swap that was done is not done again. Cluster mode: test/system/scale/shards.test.ts.
import { beforeAll, describe, expect, it } from 'vitest'
import { type ClickHouseClient, selectRows } from '../../../src/clickhouse/client.ts'
import { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import { ownDatabase } from '../../harness/index.ts'

let ch: ClickHouseClient
const rows = async (table: string) =>
  selectRows<{ team_id: string; v: string }>(
    ch,
    `SELECT toString(team_id) AS team_id, v FROM ${table} ORDER BY team_id, v`,
  )
const tables = async () =>
  (
    await selectRows<{ name: string }>(
      ch,
      "SELECT name FROM system.tables WHERE database = currentDatabase() AND name LIKE 't\\\\_%' ORDER BY name",
    )
  ).map((r) => r.name)

beforeAll(async () => {
  ch = (await ownDatabase('burrow_table_admin')).client
  await ch.command({
    query: 'CREATE TABLE t_live (team_id Int64, v String) ENGINE = MergeTree ORDER BY team_id',
  })
  await ch.command({ query: "INSERT INTO t_live VALUES (1, 'a'), (2, 'b'), (3, 'c')" })
})

describe('TableAdmin on one server', () => {
  it('copies the other projects once and swaps once, when repeated', async () => {
    const admin = TableAdmin.single(ch)
    await admin.createLike('t_fresh', 't_live')
    await admin.createLike('t_fresh', 't_live')
    await ch.command({ query: "INSERT INTO t_fresh VALUES (1, 'rebuilt')" })

    await admin.copyRows('t_fresh', 't_live', 'team_id != 1')
    await admin.copyRows('t_fresh', 't_live', 'team_id != 1')
    const expected = [
      { team_id: '1', v: 'rebuilt' },
      { team_id: '2', v: 'b' },
      { team_id: '3', v: 'c' },
    ]
    expect(await rows('t_fresh')).toEqual(expected)

    const swap = [{ live: 't_live', fresh: 't_fresh', old: 't_old' }]
    await admin.swap(swap)
    await admin.swap(swap)
    expect(await rows('t_live')).toEqual(expected)
    expect(await rows('t_old')).toEqual([
      { team_id: '1', v: 'a' },
      { team_id: '2', v: 'b' },
      { team_id: '3', v: 'c' },
    ])
    expect(await tables()).toEqual(['t_live', 't_old'])

    await admin.drop('t_old')
    expect(await tables()).toEqual(['t_live'])
  })
})

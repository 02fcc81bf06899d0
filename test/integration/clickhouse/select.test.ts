// SELECTs through clickhouseClient's own HTTP path (src/clickhouse/client.ts selectJson): answers,
// settings, query ids and errors as @clickhouse/client gives them, and no timer tick before a request
// (the 1–2 ms @clickhouse/client waits for, which the insight path paid on every query).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  type ClickHouseClient,
  clickhouseClient,
  selectJson,
  selectRows,
} from '../../../src/clickhouse/client.ts'
import { mapClickHouseError } from '../../../src/queries/execute.ts'
import { ownDatabase, stack } from '../../harness/index.ts'

let ch: ClickHouseClient
let database: string

beforeAll(async () => {
  ;({ database } = await ownDatabase('burrow_select'))
  ch = clickhouseClient(stack().clickhouseUrl, database, { max_result_rows: '1234' })
})
afterAll(async () => {
  await ch.close()
})

describe('selectJson', () => {
  it('answers what @clickhouse/client answers, with the database and the settings', async () => {
    const sql = 'SELECT number AS n, toString(number) AS s FROM system.numbers LIMIT 3'
    const theirs = await (await ch.query({ query: sql, format: 'JSONEachRow' })).json()
    expect(theirs).toHaveLength(3)
    expect(await selectRows(ch, sql)).toEqual(theirs)
    const doc = (await selectJson(ch, 'SELECT 1 AS one, currentDatabase() AS db;', {
      format: 'JSONCompact',
    })) as { meta: { name: string }[]; data: unknown[][] }
    expect(doc.meta.map((m) => m.name)).toEqual(['one', 'db'])
    expect(doc.data).toEqual([[1, database]])
    const settings =
      "SELECT name, value FROM system.settings WHERE name IN ('max_result_rows', 'max_threads') ORDER BY name"
    expect(await selectJson(ch, settings, { format: 'JSONEachRow', settings: { max_threads: 3 } })).toEqual([
      { name: 'max_result_rows', value: '1234' },
      { name: 'max_threads', value: '3' },
    ])
  })

  it('sends the query id', async () => {
    const id = `select-test-${Date.now()}`
    // the running query lists itself in system.processes
    const sql = `SELECT query_id AS id FROM system.processes WHERE query_id = '${id}'`
    expect(await selectJson(ch, sql, { format: 'JSONEachRow', queryId: id })).toEqual([{ id }])
  })

  it('fails as @clickhouse/client fails, which the query endpoint maps', async () => {
    const sql = 'SELECT no_such_column FROM system.one'
    const ours = (await selectRows(ch, sql).catch((e: unknown) => e)) as Error & { code?: string }
    const theirs = (await ch
      .query({ query: sql, format: 'JSONEachRow' })
      .then((rs) => rs.json())
      .catch((e: unknown) => e)) as Error & { code?: string }
    expect(ours).toBeInstanceOf(Error)
    expect([ours.constructor, ours.message, ours.code]).toEqual([
      theirs.constructor,
      theirs.message,
      theirs.code,
    ])
    expect(mapClickHouseError(ours)).toMatchObject({ status: 400, code: 'query_error' })
    expect(mapClickHouseError(ours)).toEqual(mapClickHouseError(theirs))
  })

  it('stops waiting when aborted, before or during the query', async () => {
    const before = new AbortController()
    before.abort()
    await expect(
      selectJson(ch, 'SELECT 1', { format: 'JSONEachRow', abort: before.signal }),
    ).rejects.toThrow()
    const during = new AbortController()
    const t0 = performance.now()
    const slow = selectJson(ch, 'SELECT sleep(3)', { format: 'JSONEachRow', abort: during.signal })
    setTimeout(() => during.abort(), 100)
    await expect(slow).rejects.toThrow()
    expect(performance.now() - t0).toBeLessThan(2_000)
  })

  it('sends at once: no timer has to fire before a request goes', async () => {
    // with setTimeout frozen, a client that waits a timer tick before each request never sends it
    vi.useFakeTimers({ toFake: ['setTimeout'] })
    let stuck: NodeJS.Timeout | undefined
    try {
      const answers = Promise.all([1, 2, 3].map((n) => selectRows<{ n: number }>(ch, `SELECT ${n} AS n`)))
      const waited = new Promise((resolve) => (stuck = setInterval(() => resolve('stuck'), 5_000)))
      expect(await Promise.race([answers, waited])).toEqual([[{ n: 1 }], [{ n: 2 }], [{ n: 3 }]])
    } finally {
      clearInterval(stuck)
      vi.useRealTimers()
    }
  })
})

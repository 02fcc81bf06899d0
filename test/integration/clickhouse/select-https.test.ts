// SELECTs to an https ClickHouse (a TLS proxy with a self-signed certificate in front of the
// harness's server; tls-proxy.ts): answers as over plain HTTP, and the same cap on an answer's size,
// which @clickhouse/client (which Burrow used for https URLs) does not have: it read a whole answer
// before it could be refused, and one row of range(100000000) could end the process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  AnswerTooLarge,
  type ClickHouseClient,
  clickhouseClient,
  selectJson,
  selectRows,
} from '../../../src/clickhouse/client.ts'
import { mapClickHouseError } from '../../../src/queries/execute.ts'
import { ownDatabase, stack, tempDir } from '../../harness/index.ts'
import { startTlsProxy, type TlsProxy } from './tls-proxy.ts'

let proxy: TlsProxy
let ch: ClickHouseClient
let database: string

beforeAll(async () => {
  ;({ database } = await ownDatabase('burrow_https'))
  proxy = await startTlsProxy(stack().clickhouseUrl, tempDir('tls-'))
  ch = clickhouseClient(proxy.url, database, { max_result_rows: '1234' }, { ca: proxy.cert })
})
afterAll(async () => {
  await ch?.close()
  await proxy?.close()
})

describe('selectJson over https', () => {
  it('answers with the database and the settings, the certificate checked', async () => {
    expect(await selectRows(ch, "SELECT 1 AS one, 'x' AS s")).toEqual([{ one: 1, s: 'x' }])
    const doc = (await selectJson(ch, 'SELECT currentDatabase() AS db', { format: 'JSONCompact' })) as {
      data: unknown[][]
    }
    expect(doc.data).toEqual([[database]])
    const settings = "SELECT value FROM system.settings WHERE name = 'max_result_rows'"
    expect(await selectRows(ch, settings)).toEqual([{ value: '1234' }])
    // a client that does not trust the certificate is refused by the TLS handshake
    const untrusting = clickhouseClient(proxy.url, database)
    try {
      await expect(selectRows(untrusting, 'SELECT 1')).rejects.toThrow(/self.signed|certificate/i)
    } finally {
      await untrusting.close()
    }
  })

  it('refuses an answer past its cap without reading the rest (400 query_too_complex)', async () => {
    // one row of a million numbers: ~6.9 MB of JSON
    const before = proxy.dropped()
    const err = await selectJson(ch, 'SELECT range(1000000) AS r', {
      format: 'JSONCompact',
      maxBytes: 1_000_000,
    }).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(AnswerTooLarge)
    expect(mapClickHouseError(err)).toMatchObject({ status: 400, code: 'query_too_complex' })
    // the connection was closed before the answer's end
    await expect.poll(() => proxy.dropped()).toBe(before + 1)
    // and the client goes on
    expect(await selectRows(ch, 'SELECT 2 AS two')).toEqual([{ two: 2 }])
  })

  it('fails as the server fails, which the query endpoint maps', async () => {
    const err = await selectRows(ch, 'SELECT no_such_column FROM system.one').catch((e: unknown) => e)
    expect(mapClickHouseError(err)).toMatchObject({ status: 400, code: 'query_error' })
  })

  it('sends the other statements over https with the same certificate', async () => {
    await ch.command({ query: 'CREATE TABLE t (n UInt8) ENGINE = Memory' })
    await ch.insert({ table: 't', values: [{ n: 7 }], format: 'JSONEachRow' })
    expect(await selectRows(ch, 'SELECT n FROM t')).toEqual([{ n: 7 }])
  })
})

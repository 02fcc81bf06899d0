// Checks the chdb test server against @clickhouse/client and raw HTTP, then applies Burrow's DDL
// (schema/clickhouse/*.sql) to it and to Debian's clickhouse-server 18.16, reporting what fails where.
// Run: npx tsx test/harness/chdb/server.check.ts   (not a *.test.ts: the main suite must not pick it up)
// Env: CHECK_SKIP_LEGACY=1 skips the 18.16 server; CHECK_BIG_MB (default 50) sizes the big insert.
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Readable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { gzipSync, deflateSync } from 'node:zlib'
import { ClickHouseError, type ClickHouseClient, ClickHouseLogLevel, createClient } from '@clickhouse/client'
import { type ChdbServer, startChdbServer } from './index.ts'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const SCHEMA_DIR = join(ROOT, 'schema', 'clickhouse')

let passed = 0
let failed = 0
const failures: string[] = []
async function check(name: string, fn: () => Promise<void>) {
  const t0 = Date.now()
  try {
    await fn()
    passed++
    console.log(`  ok   ${name} (${Date.now() - t0} ms)`)
  } catch (err) {
    failed++
    const msg = err instanceof Error ? err.message : String(err)
    failures.push(`${name}: ${msg}`)
    console.log(`  FAIL ${name}: ${msg.slice(0, 500)}`)
  }
}
function assert(cond: unknown, msg: string): asserts cond {
  if (!cond) throw new Error(msg)
}
function eq<T>(actual: T, expected: T, what = 'value') {
  const a = JSON.stringify(actual)
  const e = JSON.stringify(expected)
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`)
}
async function rejects(p: Promise<unknown>, code: string, type?: string): Promise<ClickHouseError> {
  try {
    await p
  } catch (err) {
    assert(err instanceof ClickHouseError, `expected ClickHouseError, got ${String(err)}`)
    eq(err.code, code, 'error code')
    if (type) eq(err.type, type, 'error type')
    return err
  }
  throw new Error(`expected error ${code}, but it succeeded`)
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function client(url: string, extra: Parameters<typeof createClient>[0] = {}): ClickHouseClient {
  return createClient({
    url,
    request_timeout: 120_000,
    clickhouse_settings: {},
    compression: { request: false, response: false },
    log: { level: ClickHouseLogLevel.OFF },
    ...extra,
  })
}
async function rows<T>(c: ClickHouseClient, query: string): Promise<T[]> {
  return (await c.query({ query, format: 'JSONEachRow' })).json<T>()
}
async function scalar(c: ClickHouseClient, query: string): Promise<string> {
  return (await (await c.query({ query, format: 'TabSeparated' })).text()).trim()
}

// ---------------------------------------------------------------------------------------------

async function checkServer(server: ChdbServer) {
  const url = server.url
  const admin = client(url)
  const db = 'chk'
  const ch = client(url, { database: db })

  console.log('\nHTTP basics')
  await check('GET /ping -> Ok.', async () => {
    const res = await fetch(`${url}/ping`)
    eq(res.status, 200)
    eq(await res.text(), 'Ok.\n')
  })
  await check('GET /?query=SELECT 1', async () => {
    const res = await fetch(`${url}/?query=${encodeURIComponent('SELECT 1')}`)
    eq(await res.text(), '1\n')
    assert(res.headers.get('x-clickhouse-query-id'), 'no X-ClickHouse-Query-Id')
    eq(res.headers.get('x-clickhouse-format'), 'TabSeparated', 'format header')
    eq(res.headers.get('x-clickhouse-timezone'), 'UTC', 'timezone header')
    const summary = JSON.parse(res.headers.get('x-clickhouse-summary') ?? 'null')
    assert(summary && 'read_rows' in summary && 'elapsed_ns' in summary, 'summary header')
  })
  await check('client.ping() both ways', async () => {
    assert((await admin.ping()).success, 'ping')
    assert((await admin.ping({ select: true })).success, 'ping select')
  })
  await check('SELECT version() is 26.x', async () => {
    const v = await scalar(admin, 'SELECT version()')
    assert(v.startsWith('26.'), `version ${v}`)
    eq(v, server.version, 'reported version')
  })
  await check('GET is read-only (readonly=2), POST is not', async () => {
    const res = await fetch(
      `${url}/?query=${encodeURIComponent('CREATE TABLE ro_x (a UInt8) ENGINE = Memory')}`,
    )
    eq(res.status, 500)
    eq(res.headers.get('x-clickhouse-exception-code'), '164')
  })
  await check('multi-statements are refused like the real server', async () => {
    await rejects(admin.query({ query: 'SELECT 1; SELECT 2' }), '62', 'SYNTAX_ERROR')
    eq(await scalar(admin, 'SELECT 1;'), '1', 'trailing ;')
  })
  await check('bare expressions are not queries (implicit_select off)', async () => {
    await rejects(admin.query({ query: '1 + 1' }), '62')
  })
  await check('Basic auth and X-ClickHouse-User are accepted', async () => {
    const c = client(url, { username: 'default', password: 'secret' })
    eq(await scalar(c, 'SELECT 1'), '1')
    await c.close()
    const res = await fetch(`${url}/?query=SELECT+2`, {
      headers: { 'X-ClickHouse-User': 'default', 'X-ClickHouse-Key': '' },
    })
    eq(await res.text(), '2\n')
  })

  console.log('\nDDL, inserts and formats')
  await check('CREATE DATABASE + MergeTree table', async () => {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${db}` })
    await ch.command({
      query: `CREATE TABLE IF NOT EXISTS t (id UInt64, name String, ts DateTime('UTC'), tags Array(String), v Float64)
              ENGINE = MergeTree PARTITION BY toYYYYMM(ts) ORDER BY id`,
    })
    eq(await scalar(ch, 'SELECT currentDatabase()'), db, 'database param')
  })
  await check('insert JSONEachRow', async () => {
    const r = await ch.insert({
      table: 't',
      values: [
        { id: 1, name: 'a', ts: '2024-01-01 00:00:00', tags: ['x'], v: 1.5 },
        { id: 2, name: "b'\\\t", ts: '2024-02-01 00:00:00', tags: [], v: -2 },
      ],
      format: 'JSONEachRow',
    })
    eq(r.summary?.written_rows, '2', 'summary written_rows')
  })
  await check('insert TabSeparated (stream body)', async () => {
    await ch.insert({
      table: 't',
      values: Readable.from(
        ["3\tc\t2024-03-01 00:00:00\t['y','z']\t3\n", '4\td\t2024-03-02 00:00:00\t[]\t4\n'],
        { objectMode: false },
      ),
      format: 'TabSeparated',
    })
  })
  await check('insert via exec (INSERT … FORMAT TSV + body)', async () => {
    const r = await ch.exec({
      query: 'INSERT INTO t (id, name, ts) FORMAT TSV',
      values: Readable.from(['5\te\t2024-04-01 00:00:00\n'], { objectMode: false }),
    })
    r.stream.destroy()
  })
  await check('insert with inline data in the body', async () => {
    await ch.command({
      query: `INSERT INTO t (id, name, ts) FORMAT JSONEachRow {"id":6,"name":"f","ts":"2024-05-01 00:00:00"}`,
    })
    await ch.command({ query: `INSERT INTO t (id, name, ts) VALUES (7, 'g', '2024-05-02 00:00:00')` })
    eq(await scalar(ch, 'SELECT count() FROM t'), '7', 'count')
  })
  await check('select JSON', async () => {
    const j = await (
      await ch.query({ query: 'SELECT id, name, tags FROM t WHERE id <= 2 ORDER BY id', format: 'JSON' })
    ).json<{ id: number | string; name: string; tags: string[] }>()
    eq(j.rows, 2, 'rows')
    eq(
      j.meta?.map((m) => m.type),
      ['UInt64', 'String', 'Array(String)'],
      'types',
    )
    eq(j.data[1]!.name, "b'\\\t", 'escaped string round trip')
    assert(j.statistics && j.statistics.rows_read > 0, 'statistics')
  })
  await check('select JSONCompact / JSONCompactEachRow / JSONEachRow', async () => {
    const jc = await (
      await ch.query({ query: 'SELECT id, name FROM t WHERE id = 1', format: 'JSONCompact' })
    ).json<unknown[]>()
    eq(jc.data, [[1, 'a']], 'JSONCompact')
    const jce = await (
      await ch.query({ query: 'SELECT id, name FROM t WHERE id = 1', format: 'JSONCompactEachRow' })
    ).json()
    eq(jce, [[1, 'a']], 'JSONCompactEachRow')
    eq(await rows(ch, 'SELECT id FROM t WHERE id < 3 ORDER BY id'), [{ id: 1 }, { id: 2 }], 'JSONEachRow')
  })
  await check('select TSV / TabSeparatedWithNames / CSV', async () => {
    eq(
      await (await ch.query({ query: 'SELECT id, name FROM t WHERE id = 1', format: 'TabSeparated' })).text(),
      '1\ta\n',
    )
    eq(
      await (
        await ch.query({ query: 'SELECT id, name FROM t WHERE id = 1', format: 'TabSeparatedWithNames' })
      ).text(),
      'id\tname\n1\ta\n',
    )
    eq(
      await (await ch.query({ query: 'SELECT id, name FROM t WHERE id = 1', format: 'CSV' })).text(),
      '1,"a"\n',
    )
    const res = await fetch(`${url}/?database=${db}`, {
      method: 'POST',
      body: 'SELECT id FROM t WHERE id = 1 FORMAT TSV',
    })
    eq(res.headers.get('x-clickhouse-format'), 'TSV', 'format from the FORMAT clause')
  })
  await check('select RowBinary', async () => {
    const r = await ch.exec({ query: "SELECT toUInt32(258) AS a, 'hi' AS b FORMAT RowBinary" })
    const chunks: Buffer[] = []
    for await (const c of r.stream) chunks.push(c as Buffer)
    eq(Buffer.concat(chunks).toString('hex'), '0201000002' + Buffer.from('hi').toString('hex'), 'bytes')
  })
  await check('insert RowBinary (binary body)', async () => {
    await ch.command({
      query: 'CREATE TABLE IF NOT EXISTS rb (a UInt32, b String) ENGINE = MergeTree ORDER BY a',
    })
    const body = Buffer.concat([Buffer.from([1, 0, 0, 0, 2, 0, 10]), Buffer.from([2, 1, 0, 0, 0])])
    const res = await fetch(
      `${url}/?database=${db}&query=${encodeURIComponent('INSERT INTO rb FORMAT RowBinary')}`,
      {
        method: 'POST',
        body,
      },
    )
    eq(res.status, 200, `status (${await res.text()})`)
    eq(await rows(ch, 'SELECT a, hex(b) AS h FROM rb ORDER BY a'), [
      { a: 1, h: '000A' },
      { a: 258, h: '' },
    ])
  })
  await check('query parameters (URL and multipart)', async () => {
    const q = 'SELECT {s:String} AS s, {a:Array(String)} AS a, {n:UInt64} AS n'
    const params = { s: "it's a\ttab\\", a: ['x', "y'z"], n: 42 }
    eq(await (await admin.query({ query: q, format: 'JSONEachRow', query_params: params })).json(), [params])
    const mp = client(url, { use_multipart_params: true } as never)
    eq(
      await (await mp.query({ query: q, format: 'JSONEachRow', query_params: params })).json(),
      [params],
      'multipart',
    )
    await mp.close()
    await rejects(admin.query({ query: 'SELECT {missing:String}' }), '456')
  })

  await check('Burrow-style HogQL execution (JSONCompact, readonly=1, limits, query_id)', async () => {
    const rs = await ch.query({
      query: 'SELECT number, toString(number) FROM numbers(1000000)',
      format: 'JSONCompact',
      query_id: `hogql-${Date.now()}`,
      clickhouse_settings: {
        readonly: '1',
        max_execution_time: 30,
        max_result_rows: '100',
        result_overflow_mode: 'break',
      },
    })
    const body = (await rs.json()) as unknown as { meta: { type: string }[]; data: unknown[][] }
    eq(
      body.meta.map((m) => m.type),
      ['UInt64', 'String'],
      'types',
    )
    // 'break' stops after the block that crossed the limit, as on the real server
    assert(body.data.length >= 100 && body.data.length < 1000000, `rows ${body.data.length}`)
    await rejects(
      ch.query({
        query: 'SELECT sleepEachRow(0.5) FROM numbers(10) SETTINGS max_block_size = 1',
        clickhouse_settings: { max_execution_time: 1 },
      }),
      '159',
      'TIMEOUT_EXCEEDED',
    )
  })
  await check('concurrent parameterized queries keep their own values', async () => {
    const got = await Promise.all(
      Array.from(
        { length: 24 },
        async (_, i) =>
          (
            await (
              await admin.query({
                query: 'SELECT {v:String} AS v',
                format: 'JSONEachRow',
                query_params: { v: `v${i}` },
              })
            ).json<{ v: string }>()
          )[0]!.v,
      ),
    )
    eq(
      got,
      Array.from({ length: 24 }, (_, i) => `v${i}`),
    )
  })

  console.log('\nerrors')
  await check('unknown table -> ClickHouseError 60, HTTP 404, headers', async () => {
    await rejects(ch.query({ query: 'SELECT * FROM nope' }), '60', 'UNKNOWN_TABLE')
    const res = await fetch(`${url}/`, { method: 'POST', body: 'SELECT * FROM nope_at_all' })
    eq(res.status, 404, 'status')
    eq(res.headers.get('x-clickhouse-exception-code'), '60', 'exception code header')
    const text = await res.text()
    assert(
      /^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\) \(version 26\.[^)]*\)\)?\n$/s.test(text),
      `body ${text}`,
    )
  })
  await check('syntax error -> 62 / HTTP 400', async () => {
    // 26.x prints the failing token unquoted, "(SELEC)", which clickhouse-js then takes for the type.
    await rejects(ch.query({ query: 'SELEC 1' }), '62')
    eq((await fetch(`${url}/`, { method: 'POST', body: 'SELEC 1' })).status, 400)
  })
  await check('bad insert data -> error with row', async () => {
    const e = await rejects(ch.insert({ table: 't', values: [{ id: 'nope' }], format: 'JSONEachRow' }), '27')
    assert(/row/.test(e.message), e.message)
  })
  await check('unknown database -> 81', async () => {
    const c = client(url, { database: 'no_such_db' })
    await rejects(c.query({ query: 'SELECT 1' }), '81', 'UNKNOWN_DATABASE')
    await c.close()
  })

  console.log('\nsettings')
  await check('URL settings apply to the query and do not leak', async () => {
    const t = await (
      await ch.query({
        query: 'SELECT number FROM numbers(100000)',
        format: 'JSONEachRow',
        clickhouse_settings: { max_result_rows: '10', result_overflow_mode: 'break', max_block_size: '5' },
      })
    ).json()
    assert(t.length < 100000, `rows ${t.length}`)
    eq(await scalar(ch, "SELECT getSetting('max_result_rows')"), '0', 'not leaked')
  })
  await check('readonly=1 refuses writes, and does not stick to the connection', async () => {
    await rejects(
      ch.command({
        query: 'CREATE TABLE ro_y (a UInt8) ENGINE = Memory',
        clickhouse_settings: { readonly: '1' },
      }),
      '164',
      'READONLY',
    )
    for (let i = 0; i < 20; i++)
      await ch.command({ query: 'CREATE TABLE IF NOT EXISTS ro_z (a UInt8) ENGINE = Memory' })
  })
  await check('unknown setting -> 115 UNKNOWN_SETTING (as the real server)', async () => {
    await rejects(
      admin.query({ query: 'SELECT 1', clickhouse_settings: { no_such_setting: 1 } as never }),
      '115',
    )
  })
  await check('HTTP-only settings are accepted', async () => {
    const s = {
      enable_http_compression: 1,
      send_progress_in_http_headers: 1,
      http_headers_progress_interval_ms: '100',
      wait_end_of_query: 1,
      output_format_json_quote_64bit_integers: 1,
    } as never
    eq(await rows(ch, 'SELECT 1 AS x'), [{ x: 1 }])
    eq(
      await (
        await ch.query({ query: 'SELECT toUInt64(1) AS x', format: 'JSONEachRow', clickhouse_settings: s })
      ).json(),
      [{ x: '1' }],
    )
  })
  await check('gzip both ways (client compression)', async () => {
    const c = client(url, { database: db, compression: { request: true, response: true } })
    await c.insert({ table: 'rb', values: [{ a: 7, b: 'gz' }], format: 'JSONEachRow' })
    eq(await rows(c, 'SELECT b FROM rb WHERE a = 7'), [{ b: 'gz' }])
    await c.close()
    const res = await fetch(`${url}/?enable_http_compression=1`, {
      method: 'POST',
      body: 'SELECT 1',
      headers: { 'Accept-Encoding': 'gzip' },
    })
    eq(res.headers.get('content-encoding'), 'gzip', 'content-encoding')
    eq(await res.text(), '1\n')
  })
  await check('gzip / deflate request bodies (Content-Encoding)', async () => {
    for (const [enc, fn] of [
      ['gzip', gzipSync],
      ['deflate', deflateSync],
    ] as const) {
      const res = await fetch(`${url}/`, {
        method: 'POST',
        body: fn(Buffer.from('SELECT 3')),
        headers: { 'Content-Encoding': enc },
      })
      eq(await res.text(), '3\n', enc)
    }
  })
  await check('session_id keeps SET and temporary tables', async () => {
    const session_id = `s-${Date.now()}`
    await admin.command({ query: 'SET max_threads = 3', session_id })
    const get = async (query: string) =>
      (await (await admin.query({ query, session_id, format: 'TabSeparated' })).text()).trim()
    eq(await get("SELECT getSetting('max_threads')"), '3')
    await admin.command({ query: 'CREATE TEMPORARY TABLE tmp1 (a UInt8)', session_id })
    await admin.command({ query: 'INSERT INTO tmp1 VALUES (1)', session_id })
    eq(await get('SELECT count() FROM tmp1'), '1')
    assert((await scalar(admin, "SELECT getSetting('max_threads')")) !== '3', 'SET leaked out of the session')
  })

  console.log('\nquery ids, processes, kill')
  await check('query_id is honoured', async () => {
    const rs = await admin.query({ query: 'SELECT 1', query_id: 'my-query-id-1', format: 'JSONEachRow' })
    eq(rs.query_id, 'my-query-id-1')
    eq(rs.response_headers['x-clickhouse-query-id'], 'my-query-id-1', 'header')
    await rs.json()
  })
  await check('system.processes shows the HTTP query_id; KILL QUERY by it cancels', async () => {
    const qid = `slow-${Date.now()}`
    const slow = admin
      .query({
        query: 'SELECT sleepEachRow(0.5) FROM numbers(20) SETTINGS max_block_size = 1',
        query_id: qid,
      })
      .then(async (r) => r.text())
    const settled = slow.then(
      () => null,
      (e: unknown) => e,
    )
    let seen: { query_id: string; read_rows: string; elapsed: number }[] = []
    for (let i = 0; i < 40 && !seen.length; i++) {
      await sleep(100)
      seen = await rows(
        admin,
        `SELECT query_id, read_rows, elapsed FROM system.processes WHERE query_id = '${qid}'`,
      )
    }
    eq(seen.length, 1, 'processes rows')
    await rejects(
      admin.query({ query: 'SELECT 1', query_id: qid }),
      '216',
      'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING',
    )
    await admin.command({ query: `KILL QUERY WHERE query_id = '${qid}'` })
    const err = await settled
    assert(err instanceof ClickHouseError && err.code === '394', `slow query ended with ${String(err)}`)
  })
  await check('KILL QUERY for an unknown id and an empty system.processes match are fine', async () => {
    await admin.command({ query: "KILL QUERY WHERE query_id = 'nothing-here' SYNC" })
    eq(await rows(admin, "SELECT * FROM system.processes WHERE query_id = 'nothing-here'"), [])
  })

  console.log('\nconcurrency')
  await check('8 concurrent sleep(1) run in parallel', async () => {
    const t0 = Date.now()
    await Promise.all(Array.from({ length: 8 }, () => scalar(admin, 'SELECT sleep(1)')))
    const ms = Date.now() - t0
    assert(ms < 2500, `took ${ms} ms`)
  })
  await check('200 mixed concurrent requests from 4 clients', async () => {
    const clients = Array.from({ length: 4 }, () => client(url, { database: db }))
    const jobs = Array.from({ length: 200 }, async (_, i) => {
      const c = clients[i % 4]!
      if (i % 5 === 0)
        await c.insert({ table: 'rb', values: [{ a: 1000 + i, b: 'c' }], format: 'JSONEachRow' })
      else if (i % 5 === 1)
        await rejects(c.query({ query: 'SELECT * FROM nope', clickhouse_settings: { readonly: '1' } }), '60')
      else eq(await scalar(c, `SELECT ${i} + 0`), String(i))
    })
    await Promise.all(jobs)
    eq(await scalar(ch, 'SELECT count() FROM rb WHERE a >= 1000'), '40', 'inserted rows')
    await Promise.all(clients.map((c) => c.close()))
  })
  await check('throughput: sequential small queries', async () => {
    for (const [label, settings] of [
      ['plain', {}],
      ['readonly=1 (fresh connection each)', { readonly: '1' }],
    ] as const) {
      const n = 300
      const t0 = Date.now()
      for (let i = 0; i < n; i++) await scalar(ch, `SELECT ${i}`).then(() => undefined)
      void settings
      const c = client(url, { database: db, clickhouse_settings: settings })
      const t1 = Date.now()
      for (let i = 0; i < n; i++)
        await (await c.query({ query: `SELECT ${i}`, format: 'TabSeparated' })).text()
      console.log(
        `       ${label}: ${((Date.now() - t1) / n).toFixed(2)} ms/query (default client ${((t1 - t0) / n).toFixed(2)})`,
      )
      await c.close()
    }
  })
  const mb = Number(process.env.CHECK_BIG_MB ?? 50)
  await check(`${mb} MB JSONEachRow insert`, async () => {
    await ch.command({ query: 'CREATE TABLE big (id UInt64, payload String) ENGINE = MergeTree ORDER BY id' })
    const pad = 'x'.repeat(200)
    const lines: string[] = []
    let size = 0
    for (let i = 0; size < mb * 1024 * 1024; i++) {
      const l = `{"id":${i},"payload":"${pad}${i}"}\n`
      lines.push(l)
      size += l.length
    }
    const t0 = Date.now()
    const body = Buffer.from(lines.join(''))
    // exec sends the body as it is (insert() wants objects for JSONEachRow)
    const r = await ch.exec({
      query: 'INSERT INTO big FORMAT JSONEachRow',
      values: Readable.from([body], { objectMode: false }),
    })
    r.stream.destroy()
    const ms = Date.now() - t0
    eq(await scalar(ch, 'SELECT count() FROM big'), String(lines.length), 'rows')
    console.log(`       (${(size / 1024 / 1024).toFixed(0)} MB, ${lines.length} rows in ${ms} ms)`)
  })

  console.log('\nengines and mutations')
  await check('ReplacingMergeTree + OPTIMIZE FINAL / FINAL', async () => {
    await ch.command({
      query: 'CREATE TABLE rmt (k UInt32, v String, ver UInt64) ENGINE = ReplacingMergeTree(ver) ORDER BY k',
    })
    await ch.insert({ table: 'rmt', values: [{ k: 1, v: 'a', ver: 1 }], format: 'JSONEachRow' })
    await ch.insert({ table: 'rmt', values: [{ k: 1, v: 'b', ver: 2 }], format: 'JSONEachRow' })
    eq(await rows(ch, 'SELECT v FROM rmt FINAL'), [{ v: 'b' }], 'FINAL')
    await ch.command({ query: 'OPTIMIZE TABLE rmt FINAL' })
    eq(await rows(ch, 'SELECT v FROM rmt'), [{ v: 'b' }], 'after OPTIMIZE')
  })
  await check('AggregatingMergeTree + materialized view', async () => {
    await ch.command({ query: 'CREATE TABLE src (k UInt32, x UInt64) ENGINE = MergeTree ORDER BY k' })
    await ch.command({
      query: `CREATE TABLE agg (k UInt32, s AggregateFunction(sum, UInt64), u AggregateFunction(uniq, UInt64))
              ENGINE = AggregatingMergeTree ORDER BY k`,
    })
    await ch.command({
      query:
        'CREATE MATERIALIZED VIEW agg_mv TO agg AS SELECT k, sumState(x) AS s, uniqState(x) AS u FROM src GROUP BY k',
    })
    await ch.insert({
      table: 'src',
      values: [
        { k: 1, x: 5 },
        { k: 1, x: 7 },
        { k: 2, x: 1 },
      ],
      format: 'JSONEachRow',
    })
    await ch.insert({ table: 'src', values: [{ k: 1, x: 5 }], format: 'JSONEachRow' })
    eq(await rows(ch, 'SELECT k, sumMerge(s) AS s, uniqMerge(u) AS u FROM agg GROUP BY k ORDER BY k'), [
      { k: 1, s: 17, u: 2 },
      { k: 2, s: 1, u: 1 },
    ])
  })
  await check('ALTER UPDATE / DELETE mutations (async, then visible)', async () => {
    await ch.command({ query: "ALTER TABLE t UPDATE name = 'updated' WHERE id = 1" })
    await ch.command({ query: 'ALTER TABLE t DELETE WHERE id = 2' })
    let r: { id: number; name: string }[] = []
    for (let i = 0; i < 100; i++) {
      r = await rows(ch, 'SELECT id, name FROM t WHERE id IN (1, 2) ORDER BY id')
      if (r.length === 1 && r[0]!.name === 'updated') break
      await sleep(100)
    }
    eq(r, [{ id: 1, name: 'updated' }])
    await ch.command({
      query: "ALTER TABLE t UPDATE name = 'sync' WHERE id = 3",
      clickhouse_settings: { mutations_sync: '2' },
    })
    eq(await rows(ch, 'SELECT name FROM t WHERE id = 3'), [{ name: 'sync' }], 'mutations_sync')
    eq(
      await scalar(
        ch,
        "SELECT count() FROM system.mutations WHERE database = 'chk' AND table = 't' AND NOT is_done",
      ),
      '0',
    )
  })
  await check('lightweight DELETE FROM', async () => {
    await ch.command({ query: 'DELETE FROM t WHERE id = 4' })
    eq(await scalar(ch, 'SELECT count() FROM t WHERE id = 4'), '0')
  })
  await check('ALTER TABLE DROP PARTITION', async () => {
    const before = Number(await scalar(ch, 'SELECT count() FROM t'))
    await ch.command({ query: 'ALTER TABLE t DROP PARTITION 202403' })
    const after = Number(await scalar(ch, 'SELECT count() FROM t'))
    eq(before - after, 1, 'rows dropped')
  })
  await check('RENAME TABLE (and EXCHANGE)', async () => {
    await ch.command({ query: 'RENAME TABLE rmt TO rmt2' })
    eq(await rows(ch, 'SELECT v FROM rmt2'), [{ v: 'b' }])
    await ch.command({ query: `RENAME TABLE ${db}.rmt2 TO ${db}.rmt` })
    await ch.command({ query: 'CREATE TABLE rmt_new AS rmt' })
    await ch.command({ query: 'EXCHANGE TABLES rmt AND rmt_new' })
    eq(await scalar(ch, 'SELECT count() FROM rmt'), '0', 'exchanged')
  })
  await check('ALTER ADD COLUMN / MATERIALIZE', async () => {
    await ch.command({ query: "ALTER TABLE t ADD COLUMN IF NOT EXISTS m String DEFAULT concat(name, '!')" })
    eq(await rows(ch, 'SELECT m FROM t WHERE id = 1'), [{ m: 'updated!' }])
  })

  await admin.close()
  await ch.close()
}

// ---------------------------------------------------------------------------------------------
// Burrow's DDL, applied as src/clickhouse/migrate.ts does (replicated, not imported)

function loadMigrations(): { version: string; statements: string[] }[] {
  return readdirSync(SCHEMA_DIR)
    .filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((f) => {
      const text = readFileSync(join(SCHEMA_DIR, f), 'utf8')
        .split('\n')
        .filter((l) => !l.trimStart().startsWith('--'))
        .join('\n')
      const statements = text
        .split(/;\s*$/m)
        .map((s) => s.trim())
        .filter(Boolean)
      return { version: f.replace(/\.sql$/, ''), statements }
    })
}

async function applyDdl(url: string, label: string): Promise<string[]> {
  const database = 'burrow_ddl_check'
  const admin = client(url)
  await admin.command({ query: `DROP DATABASE IF EXISTS ${database}` })
  await admin.command({ query: `CREATE DATABASE ${database}` })
  await admin.close()
  const c = client(url, { database })
  const report: string[] = []
  for (const m of loadMigrations()) {
    for (const s of m.statements) {
      const head = s.replace(/\s+/g, ' ').slice(0, 60)
      try {
        await c.command({ query: s })
        report.push(`${label}  ok    ${m.version}: ${head}`)
      } catch (err) {
        const e = err as { code?: string; type?: string; message?: string }
        report.push(
          `${label}  FAIL  ${m.version}: ${head}\n        -> ${e.code ?? '?'} ${e.type ?? ''}: ${(e.message ?? String(err)).trim().slice(0, 400)}`,
        )
      }
    }
    try {
      await c.command({
        query: `INSERT INTO schema_migrations (version, applied_at) SELECT '${m.version}', now()`,
      })
    } catch {}
  }
  await c.close()
  return report
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))))
    })
  })
}

/** Debian's 18.16 clickhouse-server with a minimal config under dir. */
async function startLegacyServer(dir: string): Promise<{ url: string; stop(): Promise<void> }> {
  const [http, tcp] = [await freePort(), await freePort()]
  for (const d of ['log', 'data', 'tmp', 'user_files', 'format_schemas'])
    mkdirSync(join(dir, d), { recursive: true })
  writeFileSync(
    join(dir, 'config.xml'),
    `<?xml version="1.0"?><yandex>
  <logger><level>warning</level><log>${dir}/log/server.log</log><errorlog>${dir}/log/error.log</errorlog></logger>
  <listen_host>127.0.0.1</listen_host><http_port>${http}</http_port><tcp_port>${tcp}</tcp_port>
  <path>${dir}/data/</path><tmp_path>${dir}/tmp/</tmp_path><user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <mark_cache_size>268435456</mark_cache_size><users_config>users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database><timezone>UTC</timezone>
</yandex>`,
  )
  writeFileSync(
    join(dir, 'users.xml'),
    `<?xml version="1.0"?><yandex><profiles><default></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas></yandex>`,
  )
  const child = spawn('/usr/sbin/clickhouse-server', [`--config-file=${join(dir, 'config.xml')}`], {
    cwd: dir,
    stdio: 'ignore',
  })
  const url = `http://127.0.0.1:${http}`
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/ping`)).ok) break
    } catch {}
    if (i > 300 || child.exitCode !== null) throw new Error('clickhouse-server 18.16 did not start')
    await sleep(100)
  }
  return {
    url,
    stop: async () => {
      const done = new Promise((r) => child.once('exit', r))
      child.kill('SIGTERM')
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await done
      clearTimeout(t)
    },
  }
}

// ---------------------------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'burrow-chdb-check-'))
let server: ChdbServer | undefined
try {
  let t0 = Date.now()
  server = await startChdbServer({ dataDir: join(dir, 'chdb') })
  console.log(
    `chdb server ${server.url} (ClickHouse ${server.version}, pid ${server.pid}) ready in ${Date.now() - t0} ms`,
  )
  await checkServer(server)

  console.log('\npersistence')
  await server.stop()
  t0 = Date.now()
  server = await startChdbServer({ dataDir: join(dir, 'chdb') })
  console.log(`  restarted on the same data dir in ${Date.now() - t0} ms`)
  await check('tables and rows survive a restart', async () => {
    const c = client(server!.url, { database: 'chk' })
    assert(Number(await scalar(c, 'SELECT count() FROM big')) > 0, 'big is empty')
    eq(await rows(c, 'SELECT k, sumMerge(s) AS s FROM agg GROUP BY k ORDER BY k'), [
      { k: 1, s: 17 },
      { k: 2, s: 1 },
    ])
    await c.close()
  })

  console.log('\nBurrow DDL (schema/clickhouse/*.sql)')
  const report = await applyDdl(server.url, `26.x `)
  if (!process.env.CHECK_SKIP_LEGACY) {
    const legacy = await startLegacyServer(join(dir, 'ch18'))
    try {
      const v = await scalar(client(legacy.url), 'SELECT version()')
      report.push(...(await applyDdl(legacy.url, `${v}`)))
    } finally {
      await legacy.stop()
    }
  }
  for (const l of report) console.log(`  ${l}`)
} finally {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
}
if (failures.length) console.log(`\nfailures:\n${failures.map((f) => `  - ${f}`).join('\n')}`)
console.log(`\n${passed} passed, ${failed} failed`)
process.exit(failed ? 1 : 0)

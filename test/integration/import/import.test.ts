import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { v5 as uuidv5 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { IMPORT_UUID_NAMESPACE } from '../../../src/import/events.ts'
import { runImport } from '../../../src/import/index.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { ownDatabase, stack, startTestBurrow, tempDir } from '../../harness/index.ts'
import { rows, waitForRows } from '../projectors/helpers.ts'

// `burrow import` against a running Burrow: files are read, sent to /batch/ as historical migration
// batches and projected; bad records are reported with their line and reason; an interrupted run
// resumes from its checkpoint and every event ends up in ClickHouse once.

let burrow: RunningBurrow
let natsStop: () => Promise<void>
let dir: string

beforeAll(async () => {
  const nats = await startNatsServer({
    bin: stack().bins.nats,
    dataDir: join(tempDir(), 'nats'),
    port: await freePort(),
  })
  natsStop = () => nats.stop()
  const { database } = await ownDatabase('burrow_import')
  burrow = await startTestBurrow({ NATS_URL: nats.url, CLICKHOUSE_DATABASE: database })
  dir = tempDir('burrow-import-')
})
afterAll(async () => {
  await burrow?.stop()
  await natsStop?.()
})

const target = () => ({ url: burrow.url, token: burrow.credentials.project_api_key })
const team = () => burrow.credentials.project_id

interface Row {
  uuid: string
  event: string
  distinct_id: string
  ts: string
  properties: string
}

function eventsOf(distinctPrefix: string, n: number): Promise<Row[]> {
  return waitForRows<Row>(
    burrow.runtime.ch,
    `SELECT toString(uuid) AS uuid, event, distinct_id, toString(toUnixTimestamp64Milli(timestamp)) AS ts, properties
     FROM events WHERE team_id = ${team()} AND startsWith(distinct_id, '${distinctPrefix}')
     ORDER BY timestamp, distinct_id`,
    n,
  )
}

const readRejected = (path: string) =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { line: number; reason: string })

describe('burrow import', () => {
  it('imports JSON lines, derives missing uuids from the line, and reports bad lines', async () => {
    const file = join(dir, 'events.jsonl')
    const withoutUuid = JSON.stringify({
      event: 'signup',
      distinct_id: 'j-user',
      timestamp: '2023-03-01 10:00:01.250000',
      properties: { plan: 'pro' },
      $set: { email: 'j@x.io' },
    })
    const lines = [
      JSON.stringify({
        uuid: '0188a000-0000-7000-8000-00000000000a',
        event: '$pageview',
        distinct_id: 'j-user',
        timestamp: '2023-03-01T10:00:00.000Z',
        properties: { $current_url: 'https://x.io/' },
      }),
      withoutUuid,
      '{"event": "broken", ',
      JSON.stringify({ event: 'no-id', timestamp: '2023-03-01T10:00:02Z' }),
      '',
      JSON.stringify({ event: 'late', distinct_id: 'j-user', timestamp: 'yesterday-ish' }),
      // A batch export row: properties as JSON text, `set` beside it.
      JSON.stringify({
        uuid: '0188a000-0000-7000-8000-00000000000b',
        event: 'exported',
        distinct_id: 'j-user',
        timestamp: 1677664803000,
        properties: '{"source": "s3"}',
        set: '{"name": "J"}',
      }),
      JSON.stringify({ uuid: 'not-a-uuid', event: 'x', distinct_id: 'j-user', timestamp: '2023-03-01' }),
    ]
    writeFileSync(file, `${lines.join('\n')}\r\n`)

    const summary = await runImport({ input: file, ...target() })
    expect(summary).toMatchObject({ complete: true, lines: 8, events: 3, rejected: 4 })
    expect(summary.reasons).toEqual({
      'invalid JSON': 1,
      'no distinct_id': 1,
      'invalid timestamp': 1,
      'invalid uuid': 1,
    })
    expect(readRejected(`${file}.rejected`).map((r) => [r.line, r.reason.split(':')[0]])).toEqual([
      [3, 'invalid JSON'],
      [4, 'no distinct_id'],
      [6, 'invalid timestamp'],
      [8, 'invalid uuid'],
    ])

    const got = await eventsOf('j-', 3)
    expect(got.map((r) => [r.uuid, r.event, r.ts])).toEqual([
      ['0188a000-0000-7000-8000-00000000000a', '$pageview', String(Date.UTC(2023, 2, 1, 10, 0, 0))],
      [uuidv5(withoutUuid, IMPORT_UUID_NAMESPACE), 'signup', String(Date.UTC(2023, 2, 1, 10, 0, 1, 250))],
      ['0188a000-0000-7000-8000-00000000000b', 'exported', '1677664803000'],
    ])
    expect(JSON.parse(got[2]!.properties)).toMatchObject({ source: 's3', $set: { name: 'J' } })
    const [person] = await waitForRows<{ properties: string }>(
      burrow.runtime.ch,
      `SELECT argMax(properties, version) AS properties FROM person WHERE team_id = ${team()}
       AND id IN (SELECT person_id FROM events WHERE team_id = ${team()} AND distinct_id = 'j-user')
       GROUP BY id`,
      1,
    )
    expect(JSON.parse(person!.properties)).toMatchObject({ email: 'j@x.io', name: 'J' })

    // Done is remembered: running it again sends nothing.
    const again = await runImport({ input: file, ...target() })
    expect(again.alreadyDone).toBe(true)
  })

  it("imports PostHog's CSV event export (the flattened `*` columns)", async () => {
    const file = join(dir, 'export.csv')
    const header = [
      '*.uuid',
      '*.event',
      '*.properties.$browser',
      '*.properties.$set.email',
      '*.properties.count',
      '*.properties.flag',
      '*.properties.tags.0',
      '*.properties.tags.1',
      '*.properties.note',
      '*.timestamp',
      '*.team_id',
      '*.distinct_id',
      '*.elements_chain',
      '*.created_at',
      'event',
      'person',
      'timestamp',
    ]
    const csv = [
      header.join(','),
      // a quoted field with a comma, a quote and a line break
      '0188b000-0000-7000-8000-000000000001,$pageview,Chrome,c@x.io,3,True,a,b,"one, ""two""\nthree",' +
        '2023-04-01 08:00:00.500000+00:00,1,c-user,,2023-04-01 08:00:01,$pageview,c-user,2023-04-01',
      // no timestamp in the `*` tuple: rejected even though the plain column has one
      '0188b000-0000-7000-8000-000000000002,click,Firefox,,,,,,,,1,c-user,,,click,c-user,2023-04-01',
      'too,few,columns',
      '0188b000-0000-7000-8000-000000000003,click,Safari,,7.5,false,,,,2023-04-02T09:00:00Z,1,c-user-2,,,,,',
    ].join('\r\n')
    writeFileSync(file, `\uFEFF${csv}\r\n`)

    const summary = await runImport({ input: file, ...target() })
    expect(summary).toMatchObject({ complete: true, format: 'csv', events: 2, rejected: 2 })
    expect(readRejected(`${file}.rejected`).map((r) => [r.line, r.reason])).toEqual([
      [4, 'no timestamp'],
      [5, 'expected 17 columns, found 3'],
    ])
    const got = await eventsOf('c-user', 2)
    expect(got.map((r) => [r.uuid, r.event, r.distinct_id, r.ts])).toEqual([
      [
        '0188b000-0000-7000-8000-000000000001',
        '$pageview',
        'c-user',
        String(Date.UTC(2023, 3, 1, 8, 0, 0, 500)),
      ],
      ['0188b000-0000-7000-8000-000000000003', 'click', 'c-user-2', String(Date.UTC(2023, 3, 2, 9))],
    ])
    // (The projector adds PostHog's $set/$set_once of $browser; the rest is the export's.)
    expect(JSON.parse(got[0]!.properties)).toMatchObject({
      $browser: 'Chrome',
      $set: { email: 'c@x.io' },
      count: 3,
      flag: true,
      tags: ['a', 'b'],
      note: 'one, "two"\nthree',
    })
    const second = JSON.parse(got[1]!.properties)
    expect(second).toMatchObject({ $browser: 'Safari', count: 7.5, flag: false })
    expect(Object.keys(second).filter((k) => !k.startsWith('$set'))).toEqual(['$browser', 'count', 'flag'])
  })

  it('resumes an interrupted import from its checkpoint; every event is in ClickHouse once', async () => {
    const file = join(dir, 'resume.jsonl')
    const n = 60
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({
        event: 'step',
        distinct_id: `r-user-${i % 7}`,
        timestamp: new Date(Date.UTC(2022, 0, 1) + i * 60_000).toISOString(),
        properties: { i },
      }),
    )
    writeFileSync(file, `${lines.join('\n')}\n`)
    const expected = lines.map((l) => uuidv5(l, IMPORT_UUID_NAMESPACE)).sort()

    // Batch 3 reaches capture, and the run dies before its checkpoint is written.
    await expect(
      runImport({
        input: file,
        ...target(),
        batchSize: 10,
        onBatchAcked: ({ batch }) => {
          if (batch === 3) throw new Error('killed')
        },
      }),
    ).rejects.toThrow('killed')
    const cp = JSON.parse(readFileSync(`${file}.checkpoint`, 'utf8'))
    const twoBatches = lines.slice(0, 20).reduce((s, l) => s + Buffer.byteLength(l) + 1, 0)
    expect(cp).toMatchObject({ offset: twoBatches, line: 20, events: 20, done: false })

    const resumed = await runImport({ input: file, ...target(), batchSize: 10 })
    expect(resumed).toMatchObject({ complete: true, resumed: true, fromOffset: twoBatches, events: n })
    await eventsOf('r-user-', n)
    await new Promise((r) => setTimeout(r, 500))
    const counts = await rows<{ uuid: string; n: string }>(
      burrow.runtime.ch,
      `SELECT toString(uuid) AS uuid, count() AS n FROM events
       WHERE team_id = ${team()} AND startsWith(distinct_id, 'r-user-') GROUP BY uuid ORDER BY uuid`,
    )
    expect(counts.map((c) => c.uuid)).toEqual(expected)
    expect(counts.every((c) => Number(c.n) === 1)).toBe(true)
  })

  it('resumes a CSV import with the header kept in the checkpoint, and reads stdin', async () => {
    const file = join(dir, 'resume.csv')
    const header = 'uuid,event,distinct_id,timestamp,properties'
    const body = Array.from(
      { length: 6 },
      (_, i) =>
        `0188c000-0000-7000-8000-00000000000${i},csv,s-user,2021-05-0${i + 1}T00:00:00Z,"{""i"": ${i}}"`,
    )
    writeFileSync(file, `${[header, ...body].join('\n')}\n`)
    await expect(
      runImport({
        input: file,
        ...target(),
        batchSize: 2,
        onBatchAcked: ({ batch }) => {
          if (batch === 2) throw new Error('killed')
        },
      }),
    ).rejects.toThrow('killed')
    const resumed = await runImport({ input: file, ...target(), batchSize: 2 })
    expect(resumed).toMatchObject({ complete: true, resumed: true, events: 6, rejected: 0 })

    const stdin = Readable.from([
      Buffer.from(
        `${JSON.stringify({ event: 'piped', distinct_id: 's-user-2', timestamp: '2021-06-01' })}\n`,
      ),
    ])
    const rejected = join(dir, 'stdin.rejected')
    const piped = await runImport({ input: '-', stdin, rejectedFile: rejected, ...target() })
    expect(piped).toMatchObject({ complete: true, events: 1, rejected: 0, checkpointFile: undefined })
    expect(existsSync(rejected)).toBe(false)

    const got = await eventsOf('s-user', 7)
    expect(got.map((r) => JSON.parse(r.properties).i)).toEqual([0, 1, 2, 3, 4, 5, undefined])
    const counts = await rows<{ n: string }>(
      burrow.runtime.ch,
      `SELECT count() AS n FROM events WHERE team_id = ${team()} AND startsWith(distinct_id, 's-user')
       GROUP BY uuid HAVING n > 1`,
    )
    expect(counts).toEqual([])
  })

  it('reads the next batch while one is in flight, and sends one at a time in the file order', async () => {
    // A pass-through in front of Burrow that records each batch and holds the first one's answer
    // until the reader has pulled the second batch's lines (or 2 s passed).
    const n = 40
    let pulled = 0
    async function* lines() {
      for (let i = 0; i < n; i++) {
        pulled++
        yield Buffer.from(
          `${JSON.stringify({ event: 'ahead', distinct_id: `a-user-${i % 3}`, timestamp: new Date(Date.UTC(2022, 1, 1) + i * 1000).toISOString(), properties: { i } })}\n`,
        )
      }
    }
    const firsts: number[] = []
    let open = 0
    let maxOpen = 0
    let pulledWhileFirstHeld = 0
    const proxy = createServer((req, res) => {
      const parts: Buffer[] = []
      req.on('data', (b: Buffer) => parts.push(b))
      req.on('end', async () => {
        open++
        maxOpen = Math.max(maxOpen, open)
        const body = Buffer.concat(parts)
        const batch = (JSON.parse(body.toString()) as { batch: { properties: { i: number } }[] }).batch
        firsts.push(batch[0]!.properties.i)
        if (firsts.length === 1) {
          const until = Date.now() + 2000
          while (pulled < 20 && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
          pulledWhileFirstHeld = pulled
        }
        const answer = await fetch(`${burrow.url}${req.url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        open--
        res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text())
      })
    })
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
    try {
      const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
      const stdin = Readable.from(lines())
      const done = await runImport({
        input: '-',
        stdin,
        rejectedFile: join(dir, 'ahead.rejected'),
        url,
        token: target().token,
        batchSize: 10,
      })
      expect(done).toMatchObject({ complete: true, events: n, rejected: 0 })
    } finally {
      proxy.close()
    }
    expect(firsts).toEqual([0, 10, 20, 30])
    expect(maxOpen).toBe(1)
    expect(pulledWhileFirstHeld).toBeGreaterThanOrEqual(20)
    expect((await eventsOf('a-user-', n)).length).toBe(n)
  })
})

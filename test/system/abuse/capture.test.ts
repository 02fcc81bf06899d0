// Bad input to the ingestion endpoints (capture, /decide, /flags): a corpus of known-bad bodies,
// each with the answer docs/capture.md promises, then seeded fuzzing. Events that must be stored
// or dropped carry marker names, and the end checks ClickHouse for exactly the kept ones.
import { connect } from 'node:net'
import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { v4 as uuidv4 } from 'uuid'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { flagDefinitionSchema } from '../../../src/flags/definition.ts'
import { FlagStore } from '../../../src/flags/definition-store.ts'
import { clickhouse, nats } from '../../harness/index.ts'
import type { BurrowProcess } from '../reliability/helpers.ts'
import {
  type Answer,
  isClearAnswer,
  mutateBytes,
  nestedArrays,
  nestedObjects,
  ownProject,
  randomJson,
  randomString,
  Rng,
  send,
  startAbuseTarget,
  stillHealthy,
} from './helpers.ts'

let b: BurrowProcess
const run = uuidv4().slice(0, 8)
const keep = new Set<string>()
const dropped = new Set<string>()
let n = 0
/** A marker event name: the end checks which of them reached ClickHouse. */
const marker = (kept: boolean) => {
  const name = `abuse-${run}-${kept ? 'keep' : 'drop'}-${n++}`
  ;(kept ? keep : dropped).add(name)
  return name
}

beforeAll(async () => {
  // A project of this file's own: the bad-regex flag below must not reach other files' /flags answers.
  const { project, key } = await ownProject('abuse: ingestion')
  b = { ...(await startAbuseTarget()), token: project.api_token, projectId: project.id, personalKey: key }
})
afterAll(async () => {
  await b?.stop()
})

const json = { 'content-type': 'application/json' }
const post = (path: string, body: string | Buffer, headers: Record<string, string> = json) =>
  send(b.url, 'POST', path, body, headers)
const batch = (events: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ api_key: b.token, batch: events, ...extra })

function expectError(a: Answer, status: number, code?: string) {
  expect(a.status, a.text.slice(0, 300)).toBe(status)
  expect(isClearAnswer(a), a.text.slice(0, 300)).toBe(true)
  if (code) expect(a.json.code).toBe(code)
}

describe('capture: bodies that cannot be read are refused with a 4xx', () => {
  it('malformed JSON, scalars, wrong envelope types, empty bodies', async () => {
    expectError(await post('/batch/', '{"api_key": "x", "batch": ['), 400, 'invalid_payload')
    expectError(await post('/batch/', ''), 400, 'no_data')
    for (const body of ['42', '"text"', 'null', 'true']) {
      // Not an event, array or batch object (a bare string is read as base64 first: still 400).
      expectError(await post('/e/', body), 400)
    }
    expectError(await post('/batch/', JSON.stringify({ api_key: b.token, batch: 'events' })), 400)
    expectError(await post('/batch/', JSON.stringify({ api_key: b.token, batch: { 0: {} } })), 400)
  })

  it('no project API key, an unknown one, or one of the wrong type: 401', async () => {
    const ev = { event: marker(false), distinct_id: 'u' }
    expectError(await post('/batch/', JSON.stringify({ batch: [ev] })), 401, 'missing_api_key')
    expectError(
      await post('/batch/', JSON.stringify({ api_key: 'phc_nope', batch: [ev] })),
      401,
      'invalid_api_key',
    )
    expectError(
      await post('/batch/', JSON.stringify({ api_key: 12345, batch: [ev] })),
      401,
      'missing_api_key',
    )
    expectError(await post('/batch/', JSON.stringify({ api_key: { $ne: null }, batch: [ev] })), 401)
  })

  it('invalid UTF-8 and raw control characters', async () => {
    const bad = Buffer.concat([
      Buffer.from(`{"api_key":"${b.token}","batch":[{"event":"${marker(false)}","distinct_id":"`),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
      Buffer.from('"}]}'),
    ])
    expectError(await post('/batch/', bad), 400, 'invalid_payload')
    // JSON forbids a raw NUL inside a string; escaped (\u0000) it is fine and is kept.
    const rawNul = `{"api_key":"${b.token}","batch":[{"event":"${marker(false)}","distinct_id":"a\u0000b"}]}`
    expectError(await post('/batch/', rawNul), 400, 'invalid_payload')
  })

  it('corrupt gzip, lz64 and base64; a gzip bomb', async () => {
    const ev = JSON.stringify({ api_key: b.token, batch: [{ event: marker(false), distinct_id: 'u' }] })
    const gz = gzipSync(ev)
    expectError(
      await post('/batch/', gz.subarray(0, gz.length - 8), { ...json, 'content-encoding': 'gzip' }),
      400,
    )
    expectError(await post('/batch/', Buffer.from('not gzip at all'), { 'content-encoding': 'gzip' }), 400)
    expectError(await post('/batch/?compression=gzip-js', Buffer.from([0x1f, 0x8b, 1, 2, 3])), 400)
    expectError(await post('/batch/?compression=lz64', '!!!! not lz64 ****'), 400, 'invalid_compression')
    const form = { 'content-type': 'application/x-www-form-urlencoded' }
    expectError(await post('/e/', 'data=%%%%not-base64', form), 400)
    expectError(await post('/e/', 'nodata=1', form), 400, 'no_data')
    expectError(
      await post('/e/', `data=${encodeURIComponent(Buffer.from('{"nope').toString('base64'))}`, form),
      400,
    )
    const lzNotJson = LZString.compressToBase64('this is not json')
    expectError(await post('/batch/?compression=lz64', lzNotJson), 400, 'invalid_payload')
    // 11 MB of zeros in ~11 KB: more than 5× the body limit once inflated.
    const bomb = gzipSync(Buffer.alloc(11 * 1024 * 1024, 0x20))
    const a = await post('/batch/', bomb, { 'content-encoding': 'gzip' })
    expectError(a, 400, 'payload_too_large')
  })

  it('a body over CAPTURE_MAX_BODY_BYTES is 413', async () => {
    const big = batch([
      { event: marker(false), distinct_id: 'u', properties: { x: 'y'.repeat(2.5 * 1024 * 1024) } },
    ])
    expectError(await post('/batch/', big), 413, 'payload_too_large')
  })

  it(`JSON nested deeper than 128 levels is refused; 128 levels are accepted`, async () => {
    const deepProps = (depth: number) =>
      `{"api_key":"${b.token}","batch":[{"event":"${marker(depth <= 128)}","distinct_id":"u","properties":{"p":${nestedArrays(depth - 4)}}}]}`
    // Envelope, batch array, event and properties are 4 levels; the arrays of `p` are the rest.
    expect((await post('/batch/', deepProps(128))).status).toBe(200)
    expectError(await post('/batch/', deepProps(129)), 400, 'invalid_payload')
    expectError(await post('/batch/', deepProps(100_000)), 400, 'invalid_payload')
    const deepObj = `{"api_key":"${b.token}","event":"${marker(false)}","distinct_id":"u","properties":${nestedObjects(50_000)}}`
    expectError(await post('/e/', deepObj), 400, 'invalid_payload')
  })
})

describe("requests node's HTTP parser refuses", () => {
  /** Writes `raw` on a new connection and reads until the server closes it. */
  const exchange = (raw: string) =>
    new Promise<string>((resolve, reject) => {
      const u = new URL(b.url)
      const socket = connect(Number(u.port), u.hostname)
      let reply = ''
      socket.setEncoding('utf8')
      socket.on('data', (c: string) => (reply += c))
      socket.on('close', () => resolve(reply))
      socket.on('error', reject)
      socket.end(raw)
    })
  const answer = (reply: string) => {
    const [head, body] = reply.split('\r\n\r\n')
    return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head!)?.[1]), json: JSON.parse(body!) as unknown }
  }

  it("headers over 16 KB and malformed requests get a 4xx in PostHog's shape", async () => {
    const big = await exchange(`POST /e/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(answer(big)).toEqual({
      status: 431,
      json: { type: 'invalid_request', code: 'headers_too_large', detail: expect.any(String), attr: null },
    })
    for (const raw of [
      'GARBAGE\r\n\r\n',
      'POST /batch/ HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      'POST /batch/ HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
    ]) {
      expect(answer(await exchange(raw)), raw).toEqual({
        status: 400,
        json: { type: 'invalid_request', code: 'bad_request', detail: expect.any(String), attr: null },
      })
    }
  })
})

describe('capture: events PostHog drops are dropped silently (200), the rest are kept', () => {
  it('names, distinct ids, properties and timestamps of every wrong type', async () => {
    const events = [
      { event: 42, distinct_id: 'u' },
      { event: { a: 1 }, distinct_id: 'u' },
      { event: '   ', distinct_id: 'u' },
      { event: marker(false), distinct_id: { id: 1 } },
      { event: marker(false), distinct_id: ['a'] },
      { event: marker(false), distinct_id: null },
      { event: marker(false), distinct_id: '' },
      { event: marker(false), distinct_id: '   ' },
      { event: marker(false), distinct_id: 'u', properties: 'not an object' },
      { event: marker(false), distinct_id: 'u', properties: [1, 2] },
      'not an event',
      null,
      17,
      // kept: numbers and booleans become strings, as in PostHog
      { event: marker(true), distinct_id: 12345 },
      { event: marker(true), distinct_id: true },
      { event: marker(true), distinct_id: 'x'.repeat(10_000) },
      { event: marker(true), distinct_id: 'nul\u0000inside', properties: { v: 'a\u0000b', [`k\u0000`]: 1 } },
      { event: marker(true), distinct_id: 'u', timestamp: '0001-01-01T00:00:00Z' },
      { event: marker(true), distinct_id: 'u', timestamp: '9999-12-31T23:59:59Z' },
      { event: marker(true), distinct_id: 'u', timestamp: 1e20 },
      { event: marker(true), distinct_id: 'u', timestamp: 'yesterday-ish', sent_at: { x: 1 } },
      { event: marker(true), distinct_id: 'u', timestamp: '1970-01-01T00:00:00.001Z' },
      { event: marker(true), distinct_id: 'u', uuid: 'not-a-uuid', offset: 'x' },
      { event: marker(true), distinct_id: 'u', properties: { big: 'z'.repeat(500_000) } },
      {
        event: marker(true),
        distinct_id: 'u',
        properties: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`p${i}`, i])),
      },
      { event: marker(true), distinct_id: 'u', properties: { lone: '\ud800', emoji: '😀', rtl: '\u202e' } },
      // lone surrogates (JSON.stringify writes them as \ud800 escapes) in the ids the person rules
      // hash: they went to the dead letters after capture had acknowledged them
      { event: marker(true), distinct_id: '\ud800' },
      { event: marker(true), distinct_id: 'a\udfffb', properties: { $set: { '\ud800': '\udc00' } } },
      {
        event: '$identify',
        distinct_id: '\udc01',
        properties: { $anon_distinct_id: '\ud801', m: marker(true) },
      },
      { event: '$create_alias', distinct_id: 'u', properties: { alias: '\ud802', m: marker(true) } },
      { event: marker(true), distinct_id: 'u', properties: { $groups: { company: '\ud803' } } },
    ]
    const a = await post('/batch/', batch(events))
    expect(a.status, a.text).toBe(200)
    expect(a.json).toEqual({ status: 1 })
    // One event larger than the NATS max payload (1 MB) is dropped; its neighbours are kept.
    const tooBig = [
      { event: marker(false), distinct_id: 'u', properties: { big: 'q'.repeat(1_200_000) } },
      { event: marker(true), distinct_id: 'u' },
    ]
    expect((await post('/batch/', batch(tooBig))).status).toBe(200)
    // A few events, each under the limit and together over it, are all kept (they were one
    // message over NATS's max_payload: a 503 for every resend).
    const together = Array.from({ length: 3 }, () => ({
      event: marker(true),
      distinct_id: 'u',
      properties: { big: 'r'.repeat(400_000) },
    }))
    const a2 = await post('/batch/', batch(together))
    expect(a2.status, a2.text).toBe(200)
  })

  it('the same event through every endpoint and wrapping', async () => {
    const ev = () => ({ event: marker(true), distinct_id: 'w', properties: { token: b.token } })
    // /s/ is not here: it takes session recordings only (test/integration/recordings)
    for (const path of ['/e/', '/capture/', '/track/', '/engage/', '/i/v0/e/', '/batch']) {
      expect((await post(path, JSON.stringify(ev()))).status).toBe(200)
    }
    expect(
      (await post('/batch/', gzipSync(JSON.stringify([ev()])), { 'content-encoding': 'gzip' })).status,
    ).toBe(200)
    const lz = LZString.compressToBase64(JSON.stringify(ev()))
    expect((await post('/e/?compression=lz64', lz)).status).toBe(200)
  })
})

describe('capture, /decide, /flags: seeded fuzzing', () => {
  const seed = Number(process.env.ABUSE_SEED ?? 20240611)

  it(`random JSON bodies and mutated valid bodies get a clear answer (seed ${seed})`, async () => {
    const r = new Rng(seed)
    const paths = ['/batch/', '/e/', '/i/v0/e/', '/engage/', '/decide/?v=3', '/flags/?v=2']
    const bad: string[] = []
    for (let i = 0; i < 400; i++) {
      const path = r.pick(paths)
      let body: Buffer
      const kind = r.int(4)
      if (kind === 0) {
        body = Buffer.from(JSON.stringify(randomJson(r, 5)) ?? 'null')
      } else {
        // A structurally plausible request with random values in it.
        const ev = {
          event: r.chance(0.7) ? `fuzz-${run}-${i}` : randomJson(r, 1),
          distinct_id: randomJson(r, 1),
          properties: randomJson(r, 3),
          timestamp: r.chance(0.5) ? randomString(r) : randomJson(r, 0),
          uuid: r.chance(0.5) ? randomString(r) : uuidv4(),
        }
        const plausible =
          path.startsWith('/decide') || path.startsWith('/flags')
            ? {
                token: r.chance(0.8) ? b.token : randomJson(r, 1),
                distinct_id: randomJson(r, 1),
                groups: randomJson(r, 2),
                person_properties: randomJson(r, 3),
              }
            : {
                api_key: r.chance(0.8) ? b.token : randomJson(r, 1),
                batch: r.chance(0.8) ? [ev] : randomJson(r, 2),
              }
        body = Buffer.from(JSON.stringify(plausible))
        if (kind === 2) body = mutateBytes(r, body)
        if (kind === 3) body = r.chance(0.5) ? gzipSync(body) : mutateBytes(r, gzipSync(body))
      }
      const headers = r.pick<Record<string, string>>([
        json,
        { 'content-type': 'text/plain' },
        { 'content-type': 'application/x-www-form-urlencoded' },
        { 'content-type': 'application/json', 'content-encoding': r.pick(['gzip', 'br', 'identity', 'x']) },
        {},
      ])
      const a = await post(path, body, headers)
      if (!isClearAnswer(a) || ![200, 400, 401, 413].includes(a.status)) {
        bad.push(`#${i} ${path} ${a.status} ${a.text.slice(0, 200)}`)
      }
    }
    expect(bad).toEqual([])
  })

  it('/decide and /flags: wrong types, bad regex flags, huge and deep bodies', async () => {
    const flags = (body: unknown) => post('/flags/?v=2', JSON.stringify(body))
    expectError(await flags({ distinct_id: 'u' }), 401)
    expect((await flags({ token: b.token, distinct_id: 123 })).status).toBe(200)
    for (const groups of ['x', [1, 2], { org: { nested: true } }, null]) {
      expect([200, 400]).toContain((await flags({ token: b.token, distinct_id: 'u', groups })).status)
    }
    expectError(
      await post(
        '/flags/?v=2',
        `{"token":"${b.token}","distinct_id":"u","person_properties":${nestedObjects(5000)}}`,
      ),
      400,
    )
    expectError(await post('/decide/?v=3', '{"token":'), 400)
    // A flag whose regex does not compile is refused when written (docs/flags.md)…
    const key = `bad-regex-${run}`
    const definition = {
      key,
      filters: {
        groups: [
          {
            properties: [{ key: 'email', type: 'person', operator: 'regex', value: '([a-z' }],
            rollout_percentage: 100,
          },
        ],
      },
    }
    const created = await send(
      b.url,
      'POST',
      `/api/projects/${b.projectId}/feature_flags/`,
      JSON.stringify(definition),
      { ...json, authorization: `Bearer ${b.personalKey}` },
    )
    expectError(created, 400)
    expect(created.json.attr).toBe('filters.groups.0.properties.0.value')
    // …and one stored before that rule is left out, errorsWhileComputingFlags true, the request 200.
    const stored = flagDefinitionSchema.omit({ id: true, version: true }).parse(definition)
    await (await FlagStore.open(await nats())).create(b.projectId, stored, null)
    {
      let answer: Answer | undefined
      for (let i = 0; i < 50; i++) {
        answer = await flags({ token: b.token, distinct_id: 'u', person_properties: { email: 'a@b.c' } })
        if (answer.json?.errorsWhileComputingFlags) break
        await new Promise((res) => setTimeout(res, 100))
      }
      expect(answer!.status).toBe(200)
      expect(answer!.json.errorsWhileComputingFlags).toBe(true)
      expect(answer!.json.flags?.[key]).toBeUndefined()
    }
  })
})

describe('after the abuse', () => {
  it('the process is up and healthy, kept events are stored and dropped ones are not', async () => {
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
    const ch = clickhouse()
    const names = async () => {
      const rs = await ch.query({
        // the marker is the event name, or property `m` of events whose name is PostHog's own
        query: `SELECT DISTINCT arrayJoin([event, visitParamExtractString(properties, 'm')]) AS event FROM events
                WHERE team_id = ${b.projectId} AND (event LIKE 'abuse-${run}-%' OR properties LIKE '%"m":"abuse-${run}-%')`,
        format: 'JSONEachRow',
      })
      return new Set((await rs.json<{ event: string }>()).map((x) => x.event))
    }
    let stored = await names()
    for (let i = 0; i < 100 && [...keep].some((k) => !stored.has(k)); i++) {
      await new Promise((res) => setTimeout(res, 200))
      stored = await names()
    }
    expect([...keep].filter((k) => !stored.has(k))).toEqual([])
    expect([...dropped].filter((k) => stored.has(k))).toEqual([])
  })
})

// Differential check of capture: a fixed, varied set of requests (every body wrapping, drop rules,
// person updates, odd keys, big bodies read incrementally, refusals) through the capture routes on
// Burrow's Fastify app, and everything they produce written out: each response's status and body,
// and every log message published (subject, message id, bytes). Receive time and the random source
// are fixed, so two trees give byte-identical output exactly when capture behaves identically.
// Run in each tree and compare: npx tsx bench/capture-diff.ts > before.txt (then after.txt; diff them)
import { createHash } from 'node:crypto'
import { deflateSync, gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { captureApp } from './capture-app.ts'
import { benchChunks } from './lib.ts'

const NOW = Date.parse('2026-06-01T12:00:00.000Z')
Date.now = () => NOW
// uuid's v7 draws from crypto.getRandomValues: a fixed sequence makes minted uuids repeatable
let seed = 1
crypto.getRandomValues = (<T extends ArrayBufferView | null>(a: T): T => {
  const bytes = new Uint8Array(a!.buffer, a!.byteOffset, a!.byteLength)
  for (let i = 0; i < bytes.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    bytes[i] = seed >> 16
  }
  return a
}) as typeof crypto.getRandomValues

const TOKEN = 'phc_diff'
const TEAM = 3

interface Req {
  name: string
  path?: string
  body: string | Buffer
  headers?: Record<string, string>
}

const uuid = (i: number) => `0190a1b2-c3d4-7e5f-8a9b-${i.toString(16).padStart(12, '0')}`
const j = JSON.stringify

function requests(): Req[] {
  const web = (i: number, extra: Record<string, unknown> = {}) => ({
    event: i % 3 ? '$pageview' : 'clicked',
    uuid: uuid(i),
    timestamp: new Date(NOW - 60_000 + i).toISOString(),
    properties: {
      $current_url: `https://example.com/p/${i}`,
      $browser: 'Chrome',
      distinct_id: `u${i % 7}`,
      $session_id: `s${i % 3}`,
      token: TOKEN,
      n: i,
      f: i / 3,
      nested: { a: [1, { b: i }], c: null },
      ...(i % 5 === 0 ? { $set: { plan: 'pro' }, $set_once: { first: i } } : {}),
      ...extra,
    },
  })
  const big = (n: number, at: number) => Array.from({ length: n }, (_, i) => web(at + i))
  const ingest = benchChunks(2, 1000, 50, (b) => `bench_${b}`).flat()
  ingest.forEach((e, i) => (e.uuid = uuid(100_000 + i)))
  const out: Req[] = [
    { name: 'single /i/v0/e/', path: '/i/v0/e/', body: j({ api_key: TOKEN, ...web(1) }) },
    { name: 'single /e/ token in properties', path: '/e/', body: j(web(2)) },
    { name: 'array /capture/', path: '/capture/', body: j([web(3), web(4)]) },
    {
      name: 'batch with sent_at',
      body: j({ api_key: TOKEN, sent_at: new Date(NOW + 5000).toISOString(), batch: big(20, 10) }),
    },
    {
      name: 'batch, events with own sent_at, offset, numeric times',
      body: j({
        api_key: TOKEN,
        batch: [
          { ...web(40), sent_at: new Date(NOW - 1000).toISOString() },
          { event: 'e', distinct_id: 'd', offset: 1500 },
          { event: 'e', distinct_id: 'd', timestamp: NOW - 10_000 },
          { event: 'e', distinct_id: 'd', timestamp: 'not a time', sent_at: 'nor this' },
          { event: 'e', distinct_id: 'd', timestamp: '2099-01-01T00:00:00Z' },
          { event: 'e', distinct_id: 'd', timestamp: '2026-05-31T00:00:00+02:00', sent_at: 12345 },
        ],
      }),
    },
    {
      name: 'drops and odd ids',
      body: j({
        api_key: TOKEN,
        batch: [
          { distinct_id: 'no name' },
          { event: '  ', distinct_id: 'd' },
          { event: 'e' },
          { event: 'e', distinct_id: '   ' },
          { event: 'e', distinct_id: ['a'] },
          { event: 'e', distinct_id: { a: 1 } },
          'text',
          7,
          null,
          [1, 2],
          { event: 'e', distinct_id: 'd', properties: [1] },
          { event: 'e', distinct_id: 'd', properties: 'x' },
          { event: 'e', distinct_id: 'd', properties: null },
          { event: 'e', distinct_id: 42 },
          { event: 'e', distinct_id: true },
          { event: 'e', distinct_id: 1.5e300 },
          { event: 'e', distinct_id: '  padded  ' },
          { event: 'e\u0000nul', distinct_id: 'd\u0000nul' },
          { event: 'x'.repeat(300), distinct_id: 'y'.repeat(300) },
          { event: 'e', $distinct_id: 'dollar' },
          { event: 'e', properties: { $distinct_id: 'in props' } },
          { event: 'e', distinct_id: 'd', uuid: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' },
          { event: 'e', distinct_id: 'd', uuid: 'not-a-uuid' },
          { event: 'e', distinct_id: 'd', uuid: 12 },
          { event: 42, distinct_id: 'd' },
          { event: 'é ünïcödé 😀', distinct_id: 'ü', properties: { ключ: 'значение', '😀': '\ud83d' } },
        ],
      }),
    },
    {
      name: 'person updates at the top level and legacy engage',
      body: j({
        api_key: TOKEN,
        batch: [
          { ...web(50), $set: { a: 1 }, $set_once: { b: 2 } },
          { ...web(51), $set: 'not an object', $set_once: [1] },
          { ...web(52), $set: null },
          { distinct_id: 'eng', $set: { email: 'x@y' }, properties: { $set: { a: 0, z: 1 } } },
          { distinct_id: 'eng', $set_once: { first: 1 } },
          { distinct_id: 'eng', $set: 5 },
        ],
      }),
    },
    { name: 'engage path', path: '/engage/', body: j({ $token: TOKEN, $distinct_id: 'e1', $set: { a: 1 } }) },
    {
      name: 'odd keys',
      body:
        `{"api_key":"${TOKEN}","batch":[` +
        `{"event":"p","distinct_id":"d","properties":{"__proto__":{"x":1},"a":1,"token":"t","$token":"t2"}},` +
        `{"event":"p","distinct_id":"d","properties":{"constructor":"c","toString":1,"123":"num","a":1}},` +
        `{"event":"p","distinct_id":"d","__proto__":{"event":"q"},"extra":[1]},` +
        `{"event":"p","distinct_id":"d","properties":{"a":1,"a":2}},` +
        `{"event":"p","distinct_id":"d","properties":{"__proto__":{"y":1},"b":2}},` +
        `{"event":"p","distinct_id":"d","sent_at":null,"timestamp":"2026-06-01T11:00:00Z"}],` +
        `"sent_at":"2026-06-01T12:00:05Z"}`,
    },
    { name: 'pretty printed', body: JSON.stringify({ api_key: TOKEN, batch: big(3, 60) }, null, 2) },
    // bodies of at least 256K characters are read item by item (src/capture/json-reader.ts)
    { name: 'big batch (ingest events)', body: j({ api_key: TOKEN, batch: ingest }) },
    { name: 'big batch (web events)', body: j({ api_key: TOKEN, batch: big(1500, 1000) }) },
    { name: 'big array', path: '/capture/', body: j(big(1500, 3000)) },
    {
      name: 'big batch with nested arrays of objects and pretty spacing',
      body: JSON.stringify(
        {
          api_key: TOKEN,
          batch: big(800, 5000).map((e, i) => ({
            ...e,
            properties: {
              ...e.properties,
              $elements: [
                { tag_name: 'a', attr: '},{' },
                { tag_name: 'div', text: `]}, {"x":${i}}` },
              ],
            },
          })),
        },
        null,
        1,
      ),
    },
    {
      name: 'big batch with non-object items',
      body: j({ api_key: TOKEN, batch: [...big(1000, 7000), 'x', 5, [web(1)], null, { ...web(9000) }] }),
    },
    {
      name: 'big batch, item with strings that look like item ends',
      body: j({
        api_key: TOKEN,
        batch: [
          ...big(1000, 8000),
          { event: 'tricky', distinct_id: 'd', properties: { s: '"},{"event":"fake"}' + '},{'.repeat(50) } },
          { event: 'tricky2', distinct_id: 'd', properties: { s: 'x\\', t: '\\"}]' } },
        ],
      }),
    },
    {
      name: 'gzip header',
      body: gzipSync(j({ api_key: TOKEN, batch: big(5, 100) })),
      headers: { 'content-encoding': 'gzip' },
    },
    {
      name: 'gzip-js query',
      path: '/batch/?compression=gzip-js',
      body: gzipSync(j({ api_key: TOKEN, batch: big(5, 110) })),
    },
    {
      name: 'gzip big',
      path: '/batch/?compression=gzip-js',
      body: gzipSync(j({ api_key: TOKEN, batch: big(1200, 9000) })),
    },
    {
      name: 'deflate',
      body: deflateSync(j({ api_key: TOKEN, batch: big(3, 120) })),
      headers: { 'content-encoding': 'deflate' },
    },
    {
      name: 'lz64 form',
      path: '/e/?compression=lz64',
      body: `data=${encodeURIComponent(LZString.compressToBase64(j([web(130), web(131)])))}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    },
    {
      name: 'base64 form',
      path: '/e/',
      body: `data=${encodeURIComponent(Buffer.from(j(web(140))).toString('base64'))}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    },
    { name: 'bare base64', path: '/e/', body: Buffer.from(j(web(150))).toString('base64') },
    { name: 'historical', body: j({ api_key: TOKEN, historical_migration: true, batch: big(3, 160) }) },
    {
      name: 'historical query',
      path: '/batch/?historical_migration=true',
      body: j({ api_key: TOKEN, batch: big(2, 170) }),
    },
    {
      name: 'token in query',
      path: `/batch/?token=${TOKEN}`,
      body: j({ batch: [{ event: 'q', distinct_id: 'd' }] }),
    },
    { name: 'invalid json', body: '{"api_key":"x","batch":[{]}' },
    { name: 'invalid json big', body: j({ api_key: TOKEN, batch: big(1000, 0) }).slice(0, -3) + '},]}' },
    {
      name: 'too deep',
      body: j({ api_key: TOKEN, batch: [{ event: 'e', distinct_id: 'd', properties: deep(140) }] }),
    },
    {
      name: 'too deep big',
      body: j({
        api_key: TOKEN,
        batch: [...big(1000, 0), { event: 'e', distinct_id: 'd', properties: deep(140) }],
      }),
    },
    {
      name: 'deep but allowed big',
      body: j({
        api_key: TOKEN,
        batch: [...big(1000, 0), { event: 'e', distinct_id: 'd', properties: deep(120) }],
      }),
    },
    {
      name: 'too many events',
      body: j({
        api_key: TOKEN,
        batch: Array.from({ length: 20_001 }, () => ({ event: 'e', distinct_id: 'd' })),
      }),
    },
    {
      name: 'items too large to store',
      body: j({
        api_key: TOKEN,
        batch: [
          { event: 'huge', distinct_id: 'd', properties: { s: 'x'.repeat(2_200_000) } },
          { event: 'large', distinct_id: 'd', properties: { s: 'x'.repeat(1_100_000) } },
          ...big(3, 190),
        ],
      }),
    },
    { name: 'no token', body: j({ batch: [{ event: 'e', distinct_id: 'd' }] }) },
    { name: 'wrong token', body: j({ api_key: 'phc_nope', batch: [{ event: 'e', distinct_id: 'd' }] }) },
    { name: 'batch not an array', body: j({ api_key: TOKEN, batch: 5 }) },
    { name: 'empty', body: '' },
    { name: 'not utf-8', body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) },
    {
      name: 'BOM',
      body: Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(j({ api_key: TOKEN, batch: big(2, 180) })),
      ]),
    },
  ]
  return out
}

function deep(n: number): unknown {
  let v: unknown = 1
  for (let k = 0; k < n; k++) v = { k: v }
  return v
}

const { app, nc, close } = await captureApp('capture-diff', { id: TEAM, token: TOKEN })
try {
  const got: string[] = []
  const sub = nc.subscribe('events.>')
  const collecting = (async () => {
    for await (const m of sub) {
      got.push(`${m.subject} ${m.headers?.get('Nats-Msg-Id') ?? ''} ${m.data.length} bytes\n${m.string()}`)
    }
  })()
  const all = createHash('sha256')
  for (const r of requests()) {
    const res = await app.inject({
      method: 'POST',
      url: r.path ?? '/batch/',
      headers: { 'content-type': 'application/json', ...r.headers },
      payload: r.body,
    })
    await nc.flush()
    // the messages of this request arrive before the flush's answer
    await new Promise((resolve) => setTimeout(resolve, 20))
    const lines = [`== ${r.name}: ${res.statusCode} ${res.body}`]
    for (const m of got.splice(0)) lines.push(m)
    for (const l of lines) {
      console.log(l)
      all.update(l)
    }
  }
  console.log(`sha256 of everything above: ${all.digest('hex')}`)
  sub.unsubscribe()
  await collecting
} finally {
  await close()
}

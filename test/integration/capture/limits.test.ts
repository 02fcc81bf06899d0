import { connect, type Socket } from 'node:net'
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { createTestProject, nats, startTestBurrow } from '../../harness/index.ts'
import { readEvents } from '../../harness/log.ts'

// What one capture request may cost: an event cap, a cap on every decompression, and timeouts
// for clients that send slowly. Limits are set low here so the tests stay small.

let burrow: RunningBurrow
let project: Project
let nc: NatsConnection

const BODY_LIMIT = 200_000

beforeAll(async () => {
  burrow = await startTestBurrow({
    CAPTURE_MAX_EVENTS_PER_REQUEST: '100',
    CAPTURE_MAX_BODY_BYTES: String(BODY_LIMIT),
    HTTP_HEADERS_TIMEOUT_MS: '2000',
    HTTP_REQUEST_TIMEOUT_MS: '3000',
  })
  project = await createTestProject('capture limits')
  nc = await nats()
})

async function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${burrow.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  })
  return { status: res.status, body: (await res.json()) as Record<string, unknown> }
}

const events = (n: number, marker: string, pad = 0) =>
  Array.from({ length: n }, (_, i) => ({
    event: 'limit test',
    distinct_id: `u${i}`,
    properties: { marker, pad: 'p'.repeat(pad) },
  }))
const batch = (evs: unknown[]) => JSON.stringify({ api_key: project.api_token, batch: evs })

async function stored(marker: string) {
  return (await readEvents(nc, project.id)).filter((e) => e.properties.marker === marker).length
}

describe('events per request (CAPTURE_MAX_EVENTS_PER_REQUEST)', () => {
  it('takes a batch at the cap and refuses one over it with 413, small or big', async () => {
    const ok = uuidv4()
    expect((await post('/batch/', batch(events(100, ok)))).status).toBe(200)
    const over = uuidv4()
    const refused = await post('/batch/', batch(events(101, over)))
    expect(refused.status).toBe(413)
    expect(refused.body).toMatchObject({ type: 'invalid_request', code: 'payload_too_large' })
    expect(String(refused.body.detail)).toContain('100 events')
    // ~0.5 MB once inflated: read item by item, refused at the 101st
    const bigOver = uuidv4()
    const gz = gzipSync(JSON.stringify(events(101, bigOver, 5_000)))
    expect(gz.length).toBeLessThan(BODY_LIMIT)
    expect((await post('/batch/', gz, { 'content-encoding': 'gzip' })).status).toBe(413)
    const bigOk = uuidv4()
    const gzOk = gzipSync(batch(events(100, bigOk, 5_000)))
    expect((await post('/batch/', gzOk, { 'content-encoding': 'gzip' })).status).toBe(200)
    expect(await stored(ok)).toBe(100)
    expect(await stored(bigOk)).toBe(100)
    expect(await stored(over)).toBe(0)
    expect(await stored(bigOver)).toBe(0)
  })
})

describe('decompression caps (five times CAPTURE_MAX_BODY_BYTES)', () => {
  it('refuses an lz64 bomb instead of inflating it', async () => {
    const bomb = LZString.compressToBase64(JSON.stringify({ event: 'x', p: 'a'.repeat(6 * BODY_LIMIT) }))
    expect(bomb.length).toBeLessThan(BODY_LIMIT)
    const r = await post('/e/?compression=lz64', bomb, { 'content-type': 'text/plain' })
    expect(r.status).toBe(400)
    expect(r.body.code).toBe('payload_too_large')
    const form = `data=${encodeURIComponent(bomb)}`
    const f = await post('/e/?compression=lz64', form, {
      'content-type': 'application/x-www-form-urlencoded',
    })
    expect(f.body.code).toBe('payload_too_large')
  })

  it('reads deflate bodies (zlib or raw) and caps them like gzip', async () => {
    const marker = uuidv4()
    const one = JSON.stringify({
      api_key: project.api_token,
      event: 'deflated',
      distinct_id: 'd',
      properties: { marker },
    })
    expect((await post('/e/', deflateSync(one), { 'content-encoding': 'deflate' })).status).toBe(200)
    expect((await post('/e/', deflateRawSync(one), { 'content-encoding': 'deflate' })).status).toBe(200)
    expect(await stored(marker)).toBe(2)
    const bomb = deflateSync(Buffer.alloc(6 * BODY_LIMIT, 0x20))
    const r = await post('/e/', bomb, { 'content-encoding': 'deflate' })
    expect(r.status).toBe(400)
    expect(r.body.code).toBe('payload_too_large')
    const junk = await post('/e/', Buffer.from('not deflate'), { 'content-encoding': 'deflate' })
    expect(junk.body.code).toBe('invalid_compression')
  })
})

/** Opens a connection, sends `first`, then one byte every `everyMs`; resolves when the server closes it. */
function drip(first: string, everyMs: number): Promise<{ closedAfterMs: number; reply: string }> {
  const url = new URL(burrow.url)
  return new Promise((resolve, reject) => {
    const started = Date.now()
    let reply = ''
    const socket: Socket = connect(Number(url.port), url.hostname, () => socket.write(first))
    const timer = setInterval(() => {
      if (!socket.destroyed) socket.write('a')
    }, everyMs)
    socket.on('data', (d) => (reply += d.toString()))
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ closedAfterMs: Date.now() - started, reply })
    })
    socket.on('error', () => undefined)
    setTimeout(() => {
      clearInterval(timer)
      socket.destroy()
      reject(new Error(`still open after 30 s; got ${reply}`))
    }, 30_000)
  })
}

describe('slow clients (HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS)', () => {
  it('cuts off a client that sends its headers a byte at a time', async () => {
    // the header line grows forever: "X-Slow: aaaa…"
    const r = await drip('POST /e/ HTTP/1.1\r\nHost: x\r\nX-Slow: ', 500)
    expect(r.closedAfterMs).toBeLessThan(15_000)
    expect(r.reply).toMatch(/^HTTP\/1\.1 408/)
  })

  it('cuts off a client that sends its body a byte at a time', async () => {
    const r = await drip(
      'POST /e/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n',
      500,
    )
    expect(r.closedAfterMs).toBeLessThan(15_000)
    expect(r.reply).toMatch(/^HTTP\/1\.1 408/)
  })
})

import { gzipSync } from 'node:zlib'
import LZString from 'lz-string'
import { v4 as uuidv4 } from 'uuid'
import { beforeAll, describe, expect, it } from 'vitest'
import type { Project } from '../../../src/accounts/documents.ts'
import type { NatsConnection } from '../../../src/jetstream/connection.ts'
import type { RunningBurrow } from '../../../src/runtime/start.ts'
import { createTestProject, nats, startTestBurrow } from '../../harness/index.ts'
import { readChunks, readEvents } from '../../harness/log.ts'

let burrow: RunningBurrow
let project: Project
let nc: NatsConnection

beforeAll(async () => {
  burrow = await startTestBurrow({ OVERFLOW_EVENTS_PER_SECOND: '5' })
  project = await createTestProject('capture')
  nc = await nats()
})

function post(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  return fetch(`${burrow.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : new Uint8Array(body),
  })
}

const json = (v: unknown) => JSON.stringify(v)

/** Events sent in this test carry a marker so each test reads only its own. */
async function eventsMarked(marker: string) {
  return (await readEvents(nc, project.id)).filter((e) => e.properties.marker === marker)
}

describe('capture endpoints', () => {
  it('accepts one event on /i/v0/e/, answers {status: 1} and stamps it', async () => {
    const uuid = uuidv4()
    const before = Date.now()
    const res = await post(
      '/i/v0/e/',
      json({
        api_key: project.api_token,
        event: 'signed up',
        distinct_id: 'user-1',
        uuid,
        properties: { marker: 'single', plan: 'pro' },
        timestamp: '2026-01-02T03:04:05.678Z',
      }),
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 1 })
    const [e] = await eventsMarked('single')
    expect(e).toMatchObject({
      uuid,
      event: 'signed up',
      distinct_id: 'user-1',
      team_id: project.id,
      timestamp: '2026-01-02T03:04:05.678Z',
      properties: { marker: 'single', plan: 'pro' },
      sent_at: null,
      ip: '127.0.0.1',
    })
    expect(Date.parse(e!.now)).toBeGreaterThanOrEqual(before)
    expect(e!.subject).toMatch(/^events\.live\.\d+$/)
  })

  it('accepts the paths the SDKs use, with single events, arrays and batch bodies', async () => {
    const ev = (n: number) => ({
      event: 'path test',
      distinct_id: `d${n}`,
      properties: { marker: 'paths', n },
    })
    const responses = await Promise.all([
      post('/e/', json({ ...ev(1), token: project.api_token })),
      post('/capture/', json([{ ...ev(2), api_key: project.api_token }])),
      post('/track/', json({ api_key: project.api_token, batch: [ev(3)] })),
      post('/batch/', json({ api_key: project.api_token, batch: [ev(4), ev(5)] })),
      post('/e', json({ ...ev(6), properties: { ...ev(6).properties, token: project.api_token } })),
      post(
        '/engage/',
        json({
          $token: project.api_token,
          $distinct_id: 'd7',
          $set: { marker: 'x' },
          properties: { marker: 'paths', n: 7 },
        }),
      ),
    ])
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200])
    const got = await eventsMarked('paths')
    expect(got.map((e) => e.properties.n).sort()).toEqual([1, 2, 3, 4, 5, 6, 7])
    // the token is authentication, not data
    expect(got.find((e) => e.properties.n === 6)!.properties.token).toBeUndefined()
    const engage = got.find((e) => e.properties.n === 7)!
    expect(engage.event).toBe('$identify')
    expect(engage.properties.$set).toEqual({ marker: 'x' })
  })

  it('corrects client clock skew with sent_at, as PostHog does', async () => {
    // The client's clock is 1 hour behind; its event happened 10 s before it sent the batch.
    const clientNow = Date.now() - 3600_000
    const before = Date.now()
    const res = await post(
      '/batch/',
      json({
        api_key: project.api_token,
        sent_at: new Date(clientNow).toISOString(),
        batch: [
          {
            event: 'skewed',
            properties: { distinct_id: 'clock', marker: 'skew' },
            timestamp: new Date(clientNow - 10_000).toISOString(),
          },
        ],
      }),
    )
    const after = Date.now()
    expect(res.status).toBe(200)
    const [e] = await eventsMarked('skew')
    const t = Date.parse(e!.timestamp)
    expect(t).toBeGreaterThanOrEqual(before - 10_000)
    expect(t).toBeLessThanOrEqual(after - 10_000)
    expect(e!.sent_at).toBe(new Date(clientNow).toISOString())
  })

  it('decodes every body format', async () => {
    const body = (n: string) =>
      json({
        api_key: project.api_token,
        batch: [{ event: 'fmt', distinct_id: 'f', properties: { marker: 'fmt', n } }],
      })
    const form = (data: string) => `data=${encodeURIComponent(data)}`
    const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' }
    const statuses = await Promise.all([
      post('/batch/', body('plain')),
      post('/batch/', gzipSync(body('content-encoding')), { 'content-encoding': 'gzip' }),
      post('/batch/?compression=gzip-js', gzipSync(body('gzip-js')), { 'content-type': 'text/plain' }),
      post('/batch/?compression=lz64', LZString.compressToBase64(body('lz64')), {
        'content-type': 'text/plain',
      }),
      post('/e/?compression=lz64', form(LZString.compressToBase64(body('form-lz64'))), formHeaders),
      post('/e/', form(Buffer.from(body('form-base64')).toString('base64')), formHeaders),
    ]).then((rs) => rs.map((r) => r.status))
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200])
    const got = (await eventsMarked('fmt')).map((e) => e.properties.n).sort()
    expect(got).toEqual(['content-encoding', 'form-base64', 'form-lz64', 'gzip-js', 'lz64', 'plain'])
  })

  it('drops events without a name or distinct_id and still answers 200', async () => {
    const res = await post(
      '/batch/',
      json({
        api_key: project.api_token,
        batch: [
          { event: 'kept', distinct_id: 'a', properties: { marker: 'drops', n: 1 } },
          { event: 'kept', properties: { distinct_id: 'in-props', marker: 'drops', n: 2 } },
          { event: 'kept', distinct_id: 42, properties: { marker: 'drops', n: 3 } },
          { distinct_id: 'a', properties: { marker: 'drops', n: 4 } },
          { event: '', distinct_id: 'a', properties: { marker: 'drops', n: 5 } },
          { event: 'no id', properties: { marker: 'drops', n: 6 } },
          { event: 'empty id', distinct_id: '', properties: { marker: 'drops', n: 7 } },
          { event: 'object id', distinct_id: { a: 1 }, properties: { marker: 'drops', n: 8 } },
        ],
      }),
    )
    expect(res.status).toBe(200)
    const got = await eventsMarked('drops')
    expect(got.map((e) => [e.properties.n, e.distinct_id]).sort()).toEqual([
      [1, 'a'],
      [2, 'in-props'],
      [3, '42'],
    ])
    const metrics = await (await fetch(`${burrow.url}/metrics`)).text()
    expect(metrics).toMatch(/burrow_capture_events_dropped_total\{reason="no_event_name"\} [2-9]/)
    expect(metrics).toMatch(/burrow_capture_events_dropped_total\{reason="no_distinct_id"\} [2-9]/)
    expect(metrics).toMatch(/burrow_capture_events_dropped_total\{reason="invalid_distinct_id"\} [1-9]/)
  })

  it('answers 401 with a JSON error for a missing or unknown key', async () => {
    const missing = await post('/i/v0/e/', json({ event: 'x', distinct_id: 'a' }))
    expect(missing.status).toBe(401)
    expect(await missing.json()).toMatchObject({ type: 'authentication_error', code: 'missing_api_key' })
    const unknown = await post(
      '/batch/',
      json({ api_key: 'phc_nope', batch: [{ event: 'x', distinct_id: 'a' }] }),
    )
    expect(unknown.status).toBe(401)
    expect(await unknown.json()).toMatchObject({ type: 'authentication_error', code: 'invalid_api_key' })
  })

  it('answers 400 for corrupt bodies and publishes nothing', async () => {
    const before = (await readChunks(nc, project.id)).length
    const cases = await Promise.all([
      post('/batch/', Buffer.from([0x1f, 0x8b, 1, 2, 3, 4]), { 'content-encoding': 'gzip' }),
      post('/batch/?compression=lz64', '@@@not lz@@@', { 'content-type': 'text/plain' }),
      post('/batch/', '{"api_key": "x", "batch": [', {}),
      post('/e/', 'data=%%%%', { 'content-type': 'application/x-www-form-urlencoded' }),
      post('/batch/', json({ api_key: project.api_token, batch: 'nope' })),
      post('/batch/', json('just a string')),
      post('/batch/', Buffer.from([0xff, 0xfe, 0x7b])),
    ])
    for (const r of cases) {
      expect(r.status).toBe(400)
      const body = await r.json()
      expect(body.type).toBe('validation_error')
      expect(body.detail).toEqual(expect.any(String))
    }
    expect((await readChunks(nc, project.id)).length).toBe(before)
  })

  it('deduplicates a resent request by event uuid', async () => {
    // one event per distinct_id keeps this under the spike limit, so the resend takes the same lanes
    const batch = [1, 2, 3].map((n) => ({
      event: 'resent',
      distinct_id: `r${n}`,
      uuid: uuidv4(),
      properties: { marker: 'dedup', n },
    }))
    const body = json({ api_key: project.api_token, batch })
    expect((await post('/batch/', body)).status).toBe(200)
    expect((await post('/batch/', body)).status).toBe(200)
    const got = await eventsMarked('dedup')
    expect(got.map((e) => e.uuid).sort()).toEqual(batch.map((e) => e.uuid).sort())
  })

  it('writes concurrent single-event requests as shared log messages, each event once (group commit)', async () => {
    const before = (await readChunks(nc, project.id)).length
    const n = 40
    const sent = Array.from({ length: n }, (_, i) => ({ uuid: uuidv4(), distinct_id: `g${i}` }))
    const responses = await Promise.all(
      sent.map((e) =>
        post(
          '/i/v0/e/',
          json({ api_key: project.api_token, event: 'grouped', ...e, properties: { marker: 'group' } }),
        ),
      ),
    )
    expect(responses.map((r) => r.status)).toEqual(sent.map(() => 200))
    const got = await eventsMarked('group')
    expect(got.map((e) => e.uuid).sort()).toEqual(sent.map((e) => e.uuid).sort())
    const messages = (await readChunks(nc, project.id)).length - before
    // one message per request would be 40; the requests overlapped, so some shared a message
    expect(messages).toBeLessThan(n)
  })

  it('routes historical migrations to their own lane', async () => {
    const res = await post(
      '/batch/',
      json({
        api_key: project.api_token,
        historical_migration: true,
        batch: [
          {
            event: 'old',
            distinct_id: 'h',
            timestamp: '2020-05-01T00:00:00Z',
            properties: { marker: 'hist' },
          },
        ],
      }),
    )
    expect(res.status).toBe(200)
    const [e] = await eventsMarked('hist')
    expect(e!.subject).toMatch(/^events\.historical\.\d+$/)
    expect(e!.timestamp).toBe('2020-05-01T00:00:00.000Z')
  })

  it('routes a distinct_id sending above the rate to the overflow lane', async () => {
    // this Burrow allows 5 events/s per distinct_id
    const batch = Array.from({ length: 12 }, (_, n) => ({
      event: 'hot',
      distinct_id: 'hot-user',
      properties: { marker: 'spike', n },
    }))
    batch.push({ event: 'calm', distinct_id: 'calm-user', properties: { marker: 'spike', n: 99 } })
    expect((await post('/batch/', json({ api_key: project.api_token, batch }))).status).toBe(200)
    const got = await eventsMarked('spike')
    const lane = (e: { subject: string }) => e.subject.split('.')[1]
    const hot = got.filter((e) => e.distinct_id === 'hot-user')
    expect(hot.filter((e) => lane(e) === 'live').length).toBe(5)
    expect(hot.filter((e) => lane(e) === 'overflow').length).toBe(7)
    expect(lane(got.find((e) => e.distinct_id === 'calm-user')!)).toBe('live')
  })

  it('answers CORS preflight for browsers', async () => {
    const res = await fetch(`${burrow.url}/e/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST' },
    })
    expect(res.status).toBe(204)
    expect(res.headers.get('access-control-allow-origin')).toBe('https://example.com')
  })
})

describe('body size limit', () => {
  it('answers 413 with a JSON error above the configured limit', async () => {
    const small = await startTestBurrow({ CAPTURE_MAX_BODY_BYTES: '2048' })
    const res = await fetch(`${small.url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: json({
        api_key: project.api_token,
        batch: [{ event: 'big', distinct_id: 'b', properties: { pad: 'x'.repeat(4096) } }],
      }),
    })
    expect(res.status).toBe(413)
    expect(await res.json()).toMatchObject({ code: 'payload_too_large' })
  })
})

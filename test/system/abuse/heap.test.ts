// Large query answers and large inflated bodies against a Burrow process with a small heap. Both
// cost several times their size in memory until they are parsed and sent, so a few at once under
// their own caps (an answer 256 MiB, a /s/ body 125 MB once inflated) filled node's heap and ended
// the process for everyone. Answers read at once share a thirty-second of the heap
// (clickhouse/client.ts), inflated bodies an eighth (capture/decode.ts). Answers are read under the
// same cap and budget from an https CLICKHOUSE_URL: a second process reads the harness's ClickHouse
// through a TLS proxy with a self-signed certificate it is told to trust (NODE_EXTRA_CA_CERTS).
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stack, tempDir } from '../../harness/index.ts'
import { startTlsProxy, type TlsProxy } from '../../integration/clickhouse/tls-proxy.ts'
import type { BurrowProcess } from '../reliability/helpers.ts'
import { type Answer, isClearAnswer, ownProject, send, startAbuseTarget, stillHealthy } from './helpers.ts'
import { compressToLz64 } from './lz64-encode.ts'

let b: BurrowProcess
/** the same on an https CLICKHOUSE_URL */
let overTls: BurrowProcess
let proxy: TlsProxy
let key: string
let projectId: number
let token: string

beforeAll(async () => {
  const own = await ownProject('abuse: answers')
  key = own.key
  projectId = own.project.id
  token = own.project.api_token
  // ~400 MB of heap: the answer budget is then ~12 MB, the inflated bodies' ~50 MB.
  // QUERY_MAX_RESULT_BYTES and RECORDINGS_MAX_BODY_BYTES keep their defaults.
  b = await startAbuseTarget({ NODE_OPTIONS: '--max-old-space-size=384' })
  // 20 MB/s: an answer of a few megabytes takes a few hundred milliseconds to arrive, so answers
  // asked for at once are read at once
  proxy = await startTlsProxy(stack().clickhouseUrl, tempDir('tls-'), 20_000_000)
  overTls = await startAbuseTarget({
    NODE_OPTIONS: '--max-old-space-size=384',
    CLICKHOUSE_URL: proxy.url,
    NODE_EXTRA_CA_CERTS: proxy.certFile,
  })
})
afterAll(async () => {
  await b?.stop()
  await overTls?.stop()
  await proxy?.close()
})

const hogqlOn = (on: BurrowProcess, query: string): Promise<Answer> =>
  send(
    on.url,
    'POST',
    `/api/projects/${projectId}/query/`,
    JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
    { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  )

// `n` numbers as strings, 100,000 to a row (each row ~0.9 MB, under the 4 MiB row cap): about 9n
// bytes of JSON (n = 2,000,000: ~19 MB).
const strings = (n: number, salt: number) =>
  `SELECT arrayMap(x -> toString(x + ${salt}), range(100000)) FROM numbers(${n / 100_000})`

describe.each([
  ['plain HTTP', () => b],
  ['https', () => overTls],
])('large answers from ClickHouse over %s cannot fill the heap', (over, target) => {
  const hogql = (query: string) => hogqlOn(target(), query)

  it('answers larger than the budget are refused with a 400, four at once too, and the process stays up', async () => {
    const tooLarge = { type: 'validation_error', code: 'query_too_complex' }
    const alone = await hogql(strings(12_000_000, 0))
    expect(alone.status, alone.text.slice(0, 300)).toBe(400)
    expect(alone.json).toMatchObject(tooLarge)
    // At once, one may find the budget filled by the others' first bytes before it passes its own
    // cap: that one is told to retry (and would then get the 400).
    const answers = await Promise.all([0, 1, 2, 3].map((i) => hogql(strings(2_000_000, i))))
    for (const a of answers) {
      expect([400, 429], a.text.slice(0, 300)).toContain(a.status)
      expect(a.json).toMatchObject(
        a.status === 400 ? tooLarge : { type: 'throttled_error', code: 'concurrency_limit' },
      )
    }
    expect(await stillHealthy(target())).toEqual({ exited: false, health: 200 })
  })

  it('concurrent answers within the budget each get their rows or a 429 to retry', async () => {
    // ~7 MB each: one fits the budget, two at once do not.
    const answers = await Promise.all([0, 1, 2, 3].map((i) => hogql(strings(800_000, i))))
    const rowsOf = (a: Awaited<ReturnType<typeof hogql>>, i: number) => {
      const rows = a.json.results as string[][][]
      const row = rows[0]![0]!
      expect([rows.length, row.length, row[0], row.at(-1)]).toEqual([
        8,
        100_000,
        String(i),
        String(99_999 + i),
      ])
    }
    for (const [i, a] of answers.entries()) {
      expect(isClearAnswer(a), a.text.slice(0, 300)).toBe(true)
      expect([200, 429], a.text.slice(0, 300)).toContain(a.status)
      if (a.status === 200) rowsOf(a, i)
      else {
        expect(a.json).toMatchObject({ type: 'throttled_error', code: 'concurrency_limit' })
        // told to retry: alone, it gets its rows (four at once may all find the budget held)
        const again = await hogql(strings(800_000, i))
        expect(again.status, again.text.slice(0, 300)).toBe(200)
        rowsOf(again, i)
      }
    }
    const after = await hogql('SELECT 1 + 1')
    expect(after.json.results).toEqual([[2]])
    expect(await stillHealthy(target())).toEqual({ exited: false, health: 200 })
  })
})

/** The JSON of a /s/ body of `n` snapshots of 1 MB each (~n MB). */
const snapshotsJson = (n: number, session: string) =>
  JSON.stringify({
    api_key: token,
    batch: Array.from({ length: n }, (_, i) => ({
      event: '$snapshot',
      distinct_id: 'heap',
      properties: {
        $session_id: session,
        $window_id: 'w',
        $snapshot_data: [{ type: 3, timestamp: 1_700_000_000_000 + i, data: { s: 'q'.repeat(1_000_000) } }],
      },
    })),
  })
/** A /s/ body of `n` snapshots of 1 MB each: ~n MB once inflated, ~n KB gzipped. */
const snapshots = (n: number, session: string) => gzipSync(snapshotsJson(n, session))
/**
 * Posts the bodies at once. They are all built before the first is sent: building one takes this
 * process's event loop for a second or more, and a request whose body waited behind the building of
 * the others could pass the server's 30-second request timeout on a busy machine and be cut off.
 */
const sendAll = (bodies: Buffer[]) =>
  Promise.all(
    bodies.map((body) =>
      send(b.url, 'POST', '/s/', body, { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
    ),
  )

describe('large inflated bodies cannot fill the heap', () => {
  it('six bodies at once that inflate past the budget (under their 125 MB cap) are refused with a 400', async () => {
    // 100 KB each on the wire, 100 MB each once inflated: together they ended the process. One body
    // sent six times: each is refused before its session matters.
    const body = snapshots(100, 'heap-big')
    const answers = await sendAll([body, body, body, body, body, body])
    for (const a of answers) {
      expect(a.status, a.text.slice(0, 300)).toBe(400)
      expect(a.json).toMatchObject({ type: 'validation_error', code: 'payload_too_large' })
    }
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })

  it('six bodies at once within the budget are each stored or told to retry, and the process stays up', async () => {
    const answers = await sendAll([0, 1, 2, 3, 4, 5].map((i) => snapshots(30, `heap-${i}`)))
    for (const a of answers) {
      expect([200, 503], a.text.slice(0, 300)).toContain(a.status)
      if (a.status === 503) expect(a.json).toMatchObject({ type: 'server_error', code: 'unavailable' })
    }
    expect(answers.some((a) => a.status === 200)).toBe(true)
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })
})

/** Posts posthog-js's legacy lz64 body; the answer with its Retry-After header. */
async function postLz64(body: string): Promise<Answer & { retryAfter: string | null }> {
  const res = await fetch(`${b.url}/s/?compression=lz64`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body,
  })
  const text = await res.text()
  let json: unknown = null
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, text, json, retryAfter: res.headers.get('retry-after') }
}

describe('lz64 bodies count against the same budget', () => {
  it('a body that decompresses past the budget (under its 125 MB cap) is refused with a 400', async () => {
    // ~60 MB once decompressed, ~30 KB on the wire
    const a = await postLz64(compressToLz64(snapshotsJson(60, 'heap-lz-big')))
    expect(a.status, a.text.slice(0, 300)).toBe(400)
    expect(a.json).toMatchObject({ type: 'validation_error', code: 'payload_too_large' })
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })

  it('six bodies at once, each within the budget, are stored or told to retry with a 503', async () => {
    // ~30 MB each once decompressed: one fits the ~50 MB budget, two at once do not. Without the
    // budget every one was decompressed and parsed at once, ~180 MB of text on a ~400 MB heap.
    const bodies = [0, 1, 2, 3, 4, 5].map((i) => compressToLz64(snapshotsJson(30, `heap-lz-${i}`)))
    const answers = await Promise.all(bodies.map(postLz64))
    for (const a of answers) {
      expect([200, 503], a.text.slice(0, 300)).toContain(a.status)
      if (a.status === 503) {
        expect(a.json).toMatchObject({ type: 'server_error', code: 'unavailable' })
        expect(a.retryAfter).toMatch(/^\d+$/)
      }
    }
    expect(answers.filter((a) => a.status === 503).length).toBeGreaterThan(0)
    expect(answers.some((a) => a.status === 200)).toBe(true)
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })
})

// Query answers from an https CLICKHOUSE_URL against a Burrow process with a small heap: the same
// cap and the same shared answer budget as over plain HTTP (heap.test.ts). ClickHouse is the
// harness's, behind a TLS proxy with a self-signed certificate the process is told to trust
// (NODE_EXTRA_CA_CERTS). Burrow read https answers through @clickhouse/client, whole, with neither.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stack, tempDir } from '../../harness/index.ts'
import { startTlsProxy, type TlsProxy } from '../../integration/clickhouse/tls-proxy.ts'
import type { BurrowProcess } from '../reliability/helpers.ts'
import { type Answer, isClearAnswer, ownProject, send, startAbuseTarget, stillHealthy } from './helpers.ts'

let proxy: TlsProxy
let b: BurrowProcess
let key: string
let projectId: number

beforeAll(async () => {
  const own = await ownProject('abuse: https answers')
  key = own.key
  projectId = own.project.id
  // 20 MB/s: an answer of a few megabytes takes a few hundred milliseconds to arrive, so answers
  // asked for at once are read at once
  proxy = await startTlsProxy(stack().clickhouseUrl, tempDir('tls-'), 20_000_000)
  // ~400 MB of heap: the answer budget is then ~12 MB; QUERY_MAX_RESULT_BYTES keeps its default.
  b = await startAbuseTarget({
    NODE_OPTIONS: '--max-old-space-size=384',
    CLICKHOUSE_URL: proxy.url,
    NODE_EXTRA_CA_CERTS: proxy.certFile,
  })
})
afterAll(async () => {
  await b?.stop()
  await proxy?.close()
})

const hogql = (query: string): Promise<Answer> =>
  send(
    b.url,
    'POST',
    `/api/projects/${projectId}/query/`,
    JSON.stringify({ query: { kind: 'HogQLQuery', query } }),
    { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  )

// One row holding `n` numbers as strings: about 9n bytes of JSON (n = 2,000,000: ~19 MB).
const strings = (n: number, salt: number) => `SELECT arrayMap(x -> toString(x + ${salt}), range(${n}))`

describe('answers over https', () => {
  it('an answer larger than the budget is refused with a 400, and the process stays up', async () => {
    expect((await hogql('SELECT 1 + 1')).json.results).toEqual([[2]])
    // ~110 MB of JSON
    const a = await hogql(strings(12_000_000, 0))
    expect(a.status, a.text.slice(0, 300)).toBe(400)
    expect(a.json).toMatchObject({ type: 'validation_error', code: 'query_too_complex' })
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })

  it('concurrent answers within the budget get their rows or a 429 to retry', async () => {
    // ~7 MB each: one fits the budget, two at once do not.
    const answers = await Promise.all([0, 1, 2, 3].map((i) => hogql(strings(800_000, i))))
    for (const [i, a] of answers.entries()) {
      expect(isClearAnswer(a), a.text.slice(0, 300)).toBe(true)
      expect([200, 429], a.text.slice(0, 300)).toContain(a.status)
      if (a.status === 200) {
        const row = a.json.results[0][0] as string[]
        expect([row.length, row[0], row.at(-1)]).toEqual([800_000, String(i), String(799_999 + i)])
      } else expect(a.json).toMatchObject({ type: 'throttled_error', code: 'concurrency_limit' })
    }
    expect(answers.some((a) => a.status === 200)).toBe(true)
    expect(answers.some((a) => a.status === 429)).toBe(true)
    expect((await hogql('SELECT 1 + 1')).json.results).toEqual([[2]])
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })
})

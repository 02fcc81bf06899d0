// Issue 40, "no project can stall the others": each request of the red team's table, sent with
// project B's keys to a real Burrow process while a prober times `/_health` and project A's capture
// every 50 ms (prober.ts, a worker thread of its own). Each row asserts what B gets (a refusal or its
// answer) and the bound for everyone else: the process's event loop lag within 100 ms and no probe
// more than 300 ms over the slowest with no attack (see bounded()). The figures are printed; on
// main's code before the fix (BURROW_ABUSE_MEASURE_ONLY=1, nothing asserted) they were seconds
// (docs/security.md has both).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { flagDefinitionSchema } from '../../../src/flags/definition.ts'
import { FlagStore } from '../../../src/flags/definition-store.ts'
import { nats } from '../../harness/index.ts'
import type { BurrowProcess } from '../reliability/helpers.ts'
import { ownProject, send, startAbuseTarget, stillHealthy } from './helpers.ts'
import {
  measureOnly,
  probeDuring,
  stall,
  STALL_MAX_MS,
  STALL_P99_MS,
  type Probe,
  type StallFigures,
  PROBE_MS,
} from './prober.ts'

let b: BurrowProcess
let victim: { token: string }
let attacker: { id: number; token: string; key: string }

beforeAll(async () => {
  const a = await ownProject('abuse: stalls victim')
  const x = await ownProject('abuse: stalls attacker')
  victim = { token: a.project.api_token }
  attacker = { id: x.project.id, token: x.project.api_token, key: x.key }
  b = await startAbuseTarget({ CAPTURE_MAX_BODY_BYTES: String(1024 * 1024) })
  // warm every path once (regex and compile workers, caches) so a row measures its attack, not a
  // worker's first start
  const warm = JSON.stringify({
    key: 'warm',
    filters: {
      groups: [{ properties: [{ key: 'email', operator: 'regex', value: '(?:x|y){3}z', type: 'person' }] }],
    },
  })
  const headers = { authorization: `Bearer ${x.key}`, 'content-type': 'application/json' }
  expect(
    (await send(b.url, 'POST', `/api/projects/${x.project.id}/feature_flags/`, warm, headers)).status,
  ).toBe(201)
  await probeDuring(
    b.url,
    victim.token,
    async () => {
      await send(
        b.url,
        'POST',
        '/flags/?v=2',
        JSON.stringify({ token: x.project.api_token, distinct_id: 'w' }),
      )
      await send(
        b.url,
        'POST',
        `/api/projects/${x.project.id}/query/`,
        JSON.stringify({ query: { kind: 'HogQLQuery', query: 'SELECT 1' } }),
        headers,
      )
    },
    300,
  )
  await loopLagMs()
  idle = stall((await probeDuring(b.url, victim.token, async () => undefined, PROBE_MS)).probe)
  // (counted at most 100 ms: a noisier idle machine does not loosen the bound further)
  idleLag = Math.min(await loopLagMs(), STALL_P99_MS)
  console.log(
    `probes with no attack: p50 ${idle.p50} ms, p99 ${idle.p99} ms, max ${idle.max} ms, event loop lag max ${idleLag} ms`,
  )
})
afterAll(async () => {
  await b?.stop()
})

const authed = () => ({ authorization: `Bearer ${attacker.key}`, 'content-type': 'application/json' })
const api = (path: string) => `/api/projects/${attacker.id}${path}`
const hogql = (query: string) =>
  send(b.url, 'POST', api('/query/'), JSON.stringify({ query: { kind: 'HogQLQuery', query } }), authed())

// What the probes see with no attack running, measured in the same run: on a machine shared with
// other test lanes (and with the ClickHouse server doing B's work) the probes wait for a core now
// and then whatever Burrow does.
let idle: StallFigures
let idleLag: number

/**
 * Prints the row's figures and asserts the bound (unless measuring old code): the Burrow process's
 * own event loop lag stays within 100 ms of its lag with no attack (no request of B held the thread
 * that answers everyone; the lag is the worst delay, stricter than a p99), and no probe took more
 * than 300 ms over the slowest one with no attack. The probes' p99 is printed with its margin over the idle p99.
 */
function bounded(row: string, probe: Probe, lagMs: number): void {
  const s = stall(probe)
  console.log(
    `stall while ${row}: ${s.samples} probes, p50 ${s.p50} ms, p99 ${s.p99} ms, max ${s.max} ms, event loop lag max ${lagMs} ms ` +
      `(idle: p99 ${idle.p99} ms, max ${idle.max} ms, lag ${idleLag} ms; margins: lag ${idleLag + STALL_P99_MS - lagMs} ms, max ${idle.max + STALL_MAX_MS - s.max} ms, p99 over idle ${s.p99 - idle.p99} ms)`,
  )
  if (measureOnly) return
  expect(lagMs, `${row}: event loop lag`).toBeLessThanOrEqual(idleLag + STALL_P99_MS)
  expect(s.max, `${row}: max`).toBeLessThanOrEqual(idle.max + STALL_MAX_MS)
}

// (?:a|aa){1000}[0-9]: 4,003 RE2 instructions; on a 9,999-character value ~0.55 s a match
const HEAVY = '(?:a|aa){1000}[0-9]'
const heavyFilters = {
  groups: Array.from({ length: 8 }, () => ({
    properties: [{ key: 'email', operator: 'regex', value: HEAVY, type: 'person' }],
    rollout_percentage: 100,
  })),
}
const longValue = 'a'.repeat(9_999)
const flagsRequest = () =>
  send(
    b.url,
    'POST',
    '/flags/?v=2',
    JSON.stringify({ token: attacker.token, distinct_id: 'x', person_properties: { email: longValue } }),
    { 'content-type': 'application/json' },
  )

/**
 * The largest event loop lag (ms) of the Burrow process since /metrics was last read (prom-client
 * resets it at each read); role all reports the larger of its two processes', which only overstates it.
 */
async function loopLagMs(): Promise<number> {
  const text = await (await fetch(`${b.url}/metrics`)).text()
  return Math.round(Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000)
}

/** `n` /flags requests of B, one after another. */
async function flagsRequests(n: number) {
  const out = []
  for (let i = 0; i < n; i++) out.push(await flagsRequest())
  return out
}

describe.sequential('one project cannot stall the others (issue 40)', () => {
  it('a backtracking recording-domain wildcard, then config with a 38-character Origin', async () => {
    const patch = await send(
      b.url,
      'PATCH',
      api('/'),
      JSON.stringify({
        session_recording_opt_in: true,
        recording_domains: ['https://*a*a*a*a*a*a*a*a*a*a*b.com'],
      }),
      authed(),
    )
    expect(patch.status).toBe(200)
    const origin = `https://${'a'.repeat(26)}.com`
    expect(origin.length).toBe(38)
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, async () => {
      const out = []
      for (const path of ['config', 'config.js', 'config', 'config.js']) {
        out.push(await send(b.url, 'GET', `/array/${attacker.token}/${path}`, undefined, { origin }))
      }
      return out
    })
    bounded('recording-domain wildcard ×4', probe, await loopLagMs())
    expect(result.map((r) => r.status)).toEqual([200, 200, 200, 200])
    expect(result[0]!.json).toMatchObject({ sessionRecording: false })
  })

  it('a flag regex costly on long values, in 8 groups, then /flags with a 9,999-character property', async () => {
    const created = await send(
      b.url,
      'POST',
      api('/feature_flags/'),
      JSON.stringify({ key: 'heavy-regex', filters: heavyFilters }),
      authed(),
    )
    expect(created.status).toBe(201)
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, () => flagsRequests(4))
    bounded('flag regex × 4 /flags', probe, await loopLagMs())
    for (const r of result) {
      expect(r.status).toBe(200)
      // the match is refused (program × value over the cost bound): the flag fails, not the process
      expect(r.json.errorsWhileComputingFlags).toBe(true)
    }
  })

  it('the same regex in a survey targeting flag', async () => {
    const created = await send(
      b.url,
      'POST',
      api('/surveys/'),
      JSON.stringify({ name: 'heavy targeting', type: 'popover', targeting_flag_filters: heavyFilters }),
      authed(),
    )
    expect(created.status).toBe(201)
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, () => flagsRequests(4))
    bounded('survey targeting regex × 4 /flags', probe, await loopLagMs())
    for (const r of result) expect(r.status).toBe(200)
  })

  it('patterns over the size bound are refused at write, naming the field', async () => {
    const big = Array.from({ length: 8 }, (_, i) => `(?:x${i}|y${i}){1000}`).join('')
    const r = await send(
      b.url,
      'POST',
      api('/feature_flags/'),
      JSON.stringify({
        key: 'too-big',
        filters: { groups: [{ properties: [{ key: 'e', operator: 'regex', value: big, type: 'person' }] }] },
      }),
      authed(),
    )
    expect(r.status).toBe(400)
    expect(r.json).toMatchObject({ type: 'validation_error', attr: 'filters.groups.0.properties.0.value' })
    expect(r.json.detail).toContain('too complex')
  })

  it('42 flags with distinct ~12 KB patterns near RE2’s limit (stored as an older Burrow let them), then /flags', async () => {
    const flags = await FlagStore.open(await nats())
    for (let f = 0; f < 42; f++) {
      const pattern = Array.from({ length: 600 }, (_, i) => `(?:p${f}x${i}|q${i}){100}`).join('|')
      const def = flagDefinitionSchema.omit({ id: true, version: true }).parse({
        key: `near-limit-${f}`,
        filters: { groups: [{ properties: [{ key: 'email', operator: 'regex', value: pattern }] }] },
      })
      await flags.create(attacker.id, def, null)
    }
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, () => flagsRequests(3))
    bounded('42 near-limit patterns × 3 /flags', probe, await loopLagMs())
    for (const r of result) {
      expect(r.status).toBe(200)
      // refused on this thread (the pattern is longer than any accepted): the flag fails, alone
      expect(r.json.errorsWhileComputingFlags).toBe(true)
      expect(r.json.flags['near-limit-0']?.enabled ?? false).toBe(false)
    }
    expect(await stillHealthy(b)).toEqual({ exited: false, health: 200 })
  })

  it('a 10M-element array in one cell is refused with a 400', async () => {
    await loopLagMs()
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, () =>
      hogql('SELECT groupArray(number) FROM numbers(10000000)'),
    )
    bounded('a 79 MB cell', probe, await loopLagMs())
    expect(result.status).toBe(400)
    expect(result.json).toMatchObject({ code: 'query_too_complex' })
  })

  it('50,000 rows × 400 columns is refused with a 400 as it is read', async () => {
    const columns = Array.from({ length: 400 }, (_, i) => `${i % 10} AS c${i}`).join(', ')
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, () =>
      hogql(`SELECT ${columns} FROM numbers(50000) LIMIT 50000`),
    )
    bounded('a 50,000 × 400 answer', probe, await loopLagMs())
    expect(result.status).toBe(400)
    expect(result.json).toMatchObject({ code: 'query_too_complex' })
    expect(result.json.detail).toContain('1000000 values')
  })

  it('25,000 rows × 20 columns (the most cells an answer holds) is streamed', async () => {
    const columns = Array.from({ length: 20 }, (_, i) => `number + ${i} AS c${i}`).join(', ')
    await loopLagMs()
    const { result, probe } = await probeDuring(b.url, victim.token, () =>
      hogql(`SELECT ${columns} FROM numbers(25000) LIMIT 25000`),
    )
    bounded('a 25,000 × 20 answer', probe, await loopLagMs())
    expect(result.status, result.text.slice(0, 300)).toBe(200)
    expect(result.json.results).toHaveLength(25_000)
    expect(result.json.results[24_999]).toHaveLength(20)
    expect(result.json.results[24_999][19]).toBe(24_999 + 19)
  })

  it('numbers() with a huge offset is refused at once', async () => {
    const r = await hogql('SELECT number FROM numbers(9007199254740000, 10)')
    expect(r.status).toBe(400)
    expect(r.json.detail).toContain('offset of at most')
  })

  it('a personal key in the query string is refused from another site’s page, and gets no CORS', async () => {
    const path = `/flags/definitions?token=${attacker.token}&personal_api_key=${attacker.key}`
    const cross = await send(b.url, 'GET', path, undefined, { origin: 'https://evil.example' })
    expect(cross.status).toBe(401)
    const fetched = await fetch(`${b.url}${path}`, { headers: { origin: 'https://evil.example' } })
    expect(fetched.headers.get('access-control-allow-origin')).toBeNull()
    await fetched.arrayBuffer()
    expect((await send(b.url, 'GET', path)).status).toBe(200)
  })

  it('live stats carry only the viewer’s project’s figures', async () => {
    const r = await send(b.url, 'GET', api('/live/stats/'), undefined, authed())
    expect(r.status).toBe(200)
    expect(r.json.project_id).toBe(attacker.id)
    expect(r.json).not.toHaveProperty('consumers')
    expect(r.json).not.toHaveProperty('untracked_messages')
  })

  it('a burst of parse-heavy queries from B queues behind itself: A’s one-line query still answers', async () => {
    const a = await ownProject('abuse: stalls query victim')
    const aQuery = () =>
      send(
        b.url,
        'POST',
        `/api/projects/${a.project.id}/query/`,
        JSON.stringify({ query: { kind: 'HogQLQuery', query: 'SELECT 1' }, refresh: 'force_blocking' }),
        { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      )
    const idle: number[] = []
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now()
      expect((await aQuery()).status).toBe(200)
      idle.push(performance.now() - t0)
    }
    // ~2,000 columns with OFFSET: the grammar's parser, about a second each
    const heavy = `SELECT ${Array.from({ length: 2000 }, (_, i) => `e${i}`).join(', ')} FROM events LIMIT 1 OFFSET 1`
    // (answers kept as settled results: a failed bound below must not leave rejections behind)
    const burst = Array.from({ length: 40 }, () => hogql(heavy).catch((err: unknown) => ({ status: 0, err })))
    const during: number[] = []
    await loopLagMs()
    const { probe } = await probeDuring(b.url, victim.token, async () => {
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now()
        expect((await aQuery()).status).toBe(200)
        during.push(performance.now() - t0)
      }
    })
    bounded('40 parse-heavy queries of B', probe, await loopLagMs())
    const answers = await Promise.all(burst)
    // B's own: the project's concurrency cap refuses most of the burst at once (429), the rest compile
    expect(answers.every((r) => [200, 400, 429].includes(r.status))).toBe(true)
    const idleMax = Math.max(...idle)
    const duringMax = Math.max(...during)
    console.log(
      `A's one-line query: idle max ${Math.round(idleMax)} ms, during B's burst max ${Math.round(duringMax)} ms`,
    )
    if (!measureOnly) expect(duringMax).toBeLessThan(Math.max(3 * idleMax, idleMax + 1500))
  })
})

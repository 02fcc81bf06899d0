// Flag evaluation: POST /flags?v=2 for a project with 50 flags, against calling the evaluator in
// process on the same definitions and inputs.
// Run: npx tsx bench/flags.ts   (env REQUESTS, CONCURRENCY to size it; GEOIP=1 sends each request
// from a public address, in X-Forwarded-For, so that GeoIP person properties join the request's)
import { flagDefinitionSchema } from '../src/flags/definition.ts'
import { type EvalInput, evaluateFlags } from '../src/flags/evaluate.ts'
import { randomUUID } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { clickhouseClient } from '../src/clickhouse/client.ts'
import {
  benchBurrow,
  benchChild,
  cpuSnapshot,
  httpPost,
  latencyLine,
  procStats,
  rate,
  runPool,
  untilIdle,
} from './lib.ts'

const REQUESTS = Number(process.env.REQUESTS ?? 4000)
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 16)
const FLAG_COUNT = 50
const ADDRESSES = ['8.8.8.8', '1.1.1.1', '81.2.69.142', '2a00:1450:4001::1']
const from = (i: number): Record<string, string> =>
  process.env.GEOIP === '1' ? { 'x-forwarded-for': ADDRESSES[i % ADDRESSES.length]! } : {}

const loadAtStart = loadavg()[0]!
const burrow = await benchBurrow({ API_RATE_LIMIT_PER_MINUTE: '0' })
const { project_id: projectId, project_api_key: token, personal_api_key: personalKey } = burrow.credentials

const person = (key: string, operator: string, value: unknown) => ({ key, operator, value, type: 'person' })
// A mix like a real project's: plain rollouts, experiments, targeted flags, payloads.
function flagBody(i: number) {
  const key = `bench-flag-${i}`
  const kind = i % 5
  if (kind === 0) return { key, filters: { groups: [{ properties: [], rollout_percentage: (i * 7) % 100 }] } }
  if (kind === 1) {
    return {
      key,
      filters: {
        groups: [{ properties: [], rollout_percentage: 90 }],
        multivariate: {
          variants: [
            { key: 'control', rollout_percentage: 50 },
            { key: 'test', rollout_percentage: 50 },
          ],
        },
        payloads: { test: { color: 'blue', n: i } },
      },
    }
  }
  if (kind === 2) {
    return {
      key,
      filters: {
        groups: [
          { properties: [person('email', 'icontains', '@corp.com')], rollout_percentage: 100 },
          { properties: [person('country', 'exact', ['US', 'CA', 'DE'])], rollout_percentage: 40 },
        ],
      },
    }
  }
  if (kind === 3) {
    return {
      key,
      filters: {
        groups: [
          {
            properties: [person('age', 'gte', '18'), person('plan', 'is_not', 'free')],
            rollout_percentage: 80,
          },
        ],
      },
    }
  }
  return {
    key,
    filters: {
      groups: [
        { properties: [person('email', 'regex', '^user-\\d+@'), person('signup', 'is_date_after', '-30d')] },
      ],
      payloads: { true: '{"banner":"hello"}' },
    },
  }
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${burrow.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
  return JSON.parse(text) as Record<string, unknown>
}

const auth = { authorization: `Bearer ${personalKey}` }
for (let i = 0; i < FLAG_COUNT; i++) {
  await call('POST', `/api/projects/${projectId}/feature_flags/`, flagBody(i), auth)
}
const definitions = (
  (await call('GET', `/flags/definitions?token=${token}`, undefined, auth)).flags as unknown[]
).map((f) => flagDefinitionSchema.parse(f))
if (definitions.length !== FLAG_COUNT)
  throw new Error(`expected ${FLAG_COUNT} definitions, got ${definitions.length}`)

const COUNTRIES = ['US', 'CA', 'DE', 'FR', 'JP']
const properties = (i: number) => ({
  email: `user-${i}@${i % 4 === 0 ? 'corp.com' : 'example.com'}`,
  country: COUNTRIES[i % COUNTRIES.length],
  age: String(10 + (i % 50)),
  plan: i % 3 === 0 ? 'free' : 'pro',
  signup: new Date(Date.now() - (i % 60) * 86_400_000).toISOString(),
})
const distinctId = (i: number) => `bench-user-${i}`

let checked = false
// Stored persons for the first half of the distinct ids (as the projector would have written them);
// the other half has never been seen, like a new visitor.
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const storedPersons = Array.from({ length: Math.ceil(REQUESTS / 2) }, (_, i) => ({ i, id: randomUUID() }))
await ch.insert({
  table: 'person',
  format: 'JSONEachRow',
  values: storedPersons.map(({ i, id }) => ({
    team_id: projectId,
    id,
    created_at: '2024-01-01 00:00:00',
    properties: JSON.stringify(properties(i)),
    is_identified: 1,
    is_deleted: 0,
    version: 1,
  })),
})
await ch.insert({
  table: 'person_distinct_id',
  format: 'JSONEachRow',
  values: storedPersons.map(({ i, id }) => ({
    team_id: projectId,
    distinct_id: distinctId(i),
    person_id: id,
    is_deleted: 0,
    version: 1,
  })),
})
await ch.close()

async function evaluateOverHttp(i: number, withProperties: boolean, url = burrow.url) {
  const res = await httpPost(
    `${url}/flags?v=2`,
    JSON.stringify({
      api_key: token,
      distinct_id: distinctId(i),
      ...(withProperties ? { person_properties: properties(i) } : {}),
    }),
    { 'content-type': 'application/json', ...from(i) },
  )
  if (res.status !== 200) throw new Error(`/flags: ${res.status} ${res.text}`)
  // The answer is read once: parsing it on every request would cost the load generator ~60 µs of
  // the CPU it shares with Burrow.
  if (!checked) {
    const body = JSON.parse(res.text) as Record<string, unknown>
    const count = Object.keys(body.flags as object).length
    if (count !== FLAG_COUNT) throw new Error(`expected ${FLAG_COUNT} flags in the answer, got ${count}`)
    checked = true
  }
}

// CPU time per request of the Burrow process that answers /flags, of its child processes (projector,
// NATS, ClickHouse: none of them is on the request path) and of this load generator, which shares the
// cores: on a loaded machine the wall-clock rate follows whoever else runs, CPU per request much less.
const cpuSeconds = (pid: number) => [...cpuSnapshot(pid).values()].reduce((a, b) => a + b, 0)
const ownCpuSeconds = (pid: number) => procStats(pid)?.cpuSeconds ?? 0

// Warm up the server (JIT, the project token cache, ClickHouse connections).
await runPool(1000, 8, (i) => evaluateOverHttp(i, i % 2 === 0))
// Burrow's start-up work (worker threads loading, the person mirror's first load) would otherwise be
// counted in the first run's CPU: wait until the process is idle (< 5% of a core over half a second).
for (let waited = 0; waited < 20_000; waited += 500) {
  const before = ownCpuSeconds(burrow.pid)
  await new Promise((resolve) => setTimeout(resolve, 500))
  if (ownCpuSeconds(burrow.pid) - before < 0.025) break
}

/** One run of `requests`; with several servers the requests go to each in turn. */
async function measureHttp(
  withProperties: boolean,
  concurrency: number,
  requests: number,
  server: { url: string; pid: number } | { url: string; pid: number }[] = burrow,
) {
  const servers = Array.isArray(server) ? server : [server]
  const own = () => servers.reduce((t, s) => t + ownCpuSeconds(s.pid), 0)
  const tree = () => servers.reduce((t, s) => t + cpuSeconds(s.pid), 0)
  const burrowCpu0 = own()
  const treeCpu0 = tree()
  const benchCpu0 = process.cpuUsage()
  const t0 = performance.now()
  const lat = await runPool(requests, concurrency, (i) =>
    evaluateOverHttp(i, withProperties, servers[i % servers.length]!.url),
  )
  const ms = performance.now() - t0
  const bench = process.cpuUsage(benchCpu0)
  const ownCpu = own() - burrowCpu0
  return {
    ms,
    lat,
    cpuUs: {
      burrow: (ownCpu / requests) * 1e6,
      children: ((tree() - treeCpu0 - ownCpu) / requests) * 1e6,
      bench: (bench.user + bench.system) / requests,
    },
  }
}

const seqWith = await measureHttp(true, 1, Math.min(REQUESTS, 1000))
const loadWith = await measureHttp(true, CONCURRENCY, REQUESTS)
const seqStored = await measureHttp(false, 1, Math.min(REQUESTS, 1000))
const loadStored = await measureHttp(false, CONCURRENCY, REQUESTS)

// What a second core would add: a second Burrow API process on the same NATS and ClickHouse (as two
// instances behind a balancer), the requests sent to each in turn.
const second = await benchBurrow({
  API_RATE_LIMIT_PER_MINUTE: '0',
  // (flag evaluation is one of the SDK endpoints, which role capture serves)
  ROLE: 'capture',
  NATS_URL: burrow.natsUrl,
  CLICKHOUSE_URL: burrow.clickhouseUrl,
})
await runPool(1000, 8, (i) => evaluateOverHttp(i, i % 2 === 0, second.url))
await untilIdle(second.pid)
const loadStoredTwo = await measureHttp(false, CONCURRENCY, REQUESTS, [burrow, second])
await second.cleanup()

// The floor: the least server that answers the same requests with the same evaluator and JSON
// text (bench/flags-floor-server.ts), in a process of its own as Burrow's API is, same generator.
const definitionsFile = join(mkdtempSync(join(tmpdir(), 'burrow-flags-floor-')), 'definitions.json')
writeFileSync(definitionsFile, JSON.stringify(definitions))
const floorChild = await benchChild('flags-floor-server.ts', { DEFINITIONS_FILE: definitionsFile })
const floor = { url: `http://127.0.0.1:${floorChild.port}`, pid: floorChild.pid }
await runPool(1000, 8, (i) => evaluateOverHttp(i, true, floor.url))
const loadFloor = await measureHttp(true, CONCURRENCY, REQUESTS, floor)
await floorChild.stop()

// The same definitions and inputs through the evaluator in this process.
const inputs: EvalInput[] = Array.from({ length: REQUESTS }, (_, i) => ({
  distinctId: distinctId(i),
  personProperties: properties(i),
  groups: {},
  groupProperties: {},
  groupTypeIndexToName: {},
}))
for (const input of inputs.slice(0, 500)) evaluateFlags(definitions, input)
const inProcLat: number[] = []
const t0 = performance.now()
for (const input of inputs) {
  const s = performance.now()
  evaluateFlags(definitions, input)
  inProcLat.push(performance.now() - s)
}
const inProcMs = performance.now() - t0

const line = (
  label: string,
  requests: number,
  r: { ms: number; lat: number[]; cpuUs?: { burrow: number; children: number; bench: number } },
  server = 'Burrow',
) =>
  `${label.padEnd(62)} ${String(rate(requests, r.ms)).padStart(7)} req/s ${String(rate(requests * FLAG_COUNT, r.ms)).padStart(9)} flag evals/s  ${latencyLine(r.lat)}` +
  (r.cpuUs
    ? `  CPU/request: ${server} ${r.cpuUs.burrow.toFixed(0)} µs (its children ${r.cpuUs.children.toFixed(0)} µs), load generator ${r.cpuUs.bench.toFixed(0)} µs`
    : '')

const inProcRate = rate(REQUESTS, inProcMs)
console.log(
  `project with ${FLAG_COUNT} flags; ${REQUESTS} requests per loaded run; load average ${loadAtStart.toFixed(1)} at start, ${loadavg()[0]!.toFixed(1)} at end\n`,
)
console.log(line('POST /flags?v=2, request properties, sequential', Math.min(REQUESTS, 1000), seqWith))
console.log(line(`POST /flags?v=2, request properties, ${CONCURRENCY} in flight`, REQUESTS, loadWith))
console.log(
  line('POST /flags?v=2, stored person properties, sequential', Math.min(REQUESTS, 1000), seqStored),
)
console.log(line(`POST /flags?v=2, stored person properties, ${CONCURRENCY} in flight`, REQUESTS, loadStored))
console.log(
  line(`same, 2 Burrow API processes, ${CONCURRENCY} in flight`, REQUESTS, loadStoredTwo, 'Burrows'),
)
console.log(line(`least server, request properties, ${CONCURRENCY} in flight`, REQUESTS, loadFloor, 'server'))
console.log(
  line('evaluateFlags() in process, same definitions and inputs', REQUESTS, {
    ms: inProcMs,
    lat: inProcLat,
  }) + `  ${((inProcMs * 1000) / REQUESTS).toFixed(0)} µs/request`,
)
console.log(
  `\nratio HTTP (request properties, loaded) / in-process: ${(rate(REQUESTS, loadWith.ms) / inProcRate).toFixed(3)}`,
)
console.log(
  `ratio Burrow / least server (request properties, loaded): ${(loadFloor.ms / loadWith.ms).toFixed(2)}`,
)
await burrow.cleanup()
process.exit(0)

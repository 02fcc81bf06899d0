// Where single-event capture's ceiling is on this machine (issue #17): the same load generator as
// bench/capture.ts (lib.ts httpPost, an undici pool; 32 requests in flight, one event per request)
// against servers that do less and less than Burrow, each in a process of its own as Burrow is:
//   node             node:http, body parsed, a fixed 200 (no durability: the least any Node server does)
//   fastify          the same through Fastify, Burrow's framework
//   fastify-publish  Fastify, then one JetStream message per request, answered after its ack
//   fastify-group    Fastify, the requests of one event-loop turn in one JetStream message, each
//                    answered after that message's ack (group commit with nothing else)
//   fastify-group ×2 the same in two processes on one port (node:cluster): what a second core adds
//   burrow           Burrow's /i/v0/e/ (role capture): key check, validation, group commit
//   burrow ×2        two Burrow capture processes on the same NATS, the requests sent to each in
//                    turn: what a second core adds to Burrow (as two instances behind a balancer)
// and, as in bench/capture.ts, the baseline the issue names: one JetStream publish per event
// straight from the bench process (no HTTP at all).
// Run: npx tsx bench/floor.ts   (env SINGLES, ROUNDS)
import { jetstream } from '@nats-io/jetstream'
import { connectNats } from '../src/jetstream/connection.ts'
import {
  benchBurrow,
  benchChild,
  cpuSnapshot,
  httpPost,
  latencyLine,
  procStats,
  processTree,
  rate,
  runPool,
  sdkPageview,
} from './lib.ts'

const SINGLES = Number(process.env.SINGLES ?? 5000)
const ROUNDS = Number(process.env.ROUNDS ?? 3)
const IN_FLIGHT = 32

const burrow = await benchBurrow({ ROLE: 'capture', OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
const token = burrow.credentials.project_api_key
const teamId = burrow.credentials.project_id

const event = (i: number) => ({ api_key: token, ...sdkPageview(i) })

interface Server {
  url: string
  pid: number
  stop(): Promise<void>
}

async function floorServer(mode: string, workers = 1): Promise<Server> {
  const child = await benchChild('floor-server.ts', {
    MODE: mode,
    WORKERS: String(workers),
    NATS_URL: burrow.natsUrl,
    SUBJECT: 'events.live.0',
  })
  return { ...child, url: `http://127.0.0.1:${child.port}` }
}

const cpuOf = (pids: number[]) => {
  const snaps = pids.map((p) => cpuSnapshot(p))
  return () =>
    pids.reduce(
      (t, p, k) => t + [...cpuSnapshot(p)].reduce((s, [q, v]) => s + v - (snaps[k]!.get(q) ?? 0), 0),
      0,
    )
}

interface Result {
  rate: number
  latency: string
  serverUs: number
  generatorUs: number
}

/** `SINGLES` sends of `send(i)`, 32 in flight; CPU per event of `pids` and of this generator. */
async function measure(pids: number[], send: (i: number) => Promise<void>): Promise<Result> {
  const serverCpu = cpuOf(pids)
  const gen0 = process.cpuUsage()
  const t0 = performance.now()
  const lat = await runPool(SINGLES, IN_FLIGHT, send)
  const ms = performance.now() - t0
  const gen = process.cpuUsage(gen0)
  return {
    rate: rate(SINGLES, ms),
    latency: latencyLine(lat),
    serverUs: (serverCpu() / SINGLES) * 1e6,
    generatorUs: ((gen.user + gen.system) / 1e6 / SINGLES) * 1e6,
  }
}

/**
 * One event per POST to /i/v0/e/ (after one to warm each connection); with several `urls` the
 * requests go to each in turn.
 */
async function drive(urls: string | string[], serverPids: number[]): Promise<Result> {
  const all = typeof urls === 'string' ? [urls] : urls
  for (const url of all) await httpPost(`${url}/i/v0/e/`, JSON.stringify(event(0)))
  return measure(serverPids, async (i) => {
    const url = all[i % all.length]!
    const res = await httpPost(`${url}/i/v0/e/`, JSON.stringify(event(i)))
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.text}`)
  })
}

const nc = await connectNats(burrow.natsUrl)
const js = jetstream(nc)
const enc = new TextEncoder()
const natsPid = processTree(burrow.pid).find((p) => procStats(p)?.name === 'nats-server')

/** One JetStream publish per event from this process, awaited (bench/capture.ts's baseline). */
function direct(): Promise<Result> {
  return measure(natsPid ? [natsPid] : [], async (i) => {
    const e = event(i)
    const body = {
      v: 1,
      team_id: teamId,
      lane: 'live',
      events: [{ ...e, now: e.timestamp, ip: '127.0.0.1' }],
    }
    await js.publish('events.live.0', enc.encode(JSON.stringify(body)), { msgID: e.uuid })
  })
}

const servers: Record<string, Server> = {}
for (const mode of ['node', 'fastify', 'fastify-publish', 'fastify-group'])
  servers[mode] = await floorServer(mode)
servers['fastify-group-2'] = await floorServer('fastify-group', 2)
const burrowPids = [...cpuSnapshot(burrow.pid).keys()]
// A second capture process on the first one's NATS and ClickHouse (it starts no servers of its own).
const burrow2 = await benchBurrow({
  ROLE: 'capture',
  OVERFLOW_EVENTS_PER_SECOND: '1000000000',
  NATS_URL: burrow.natsUrl,
  CLICKHOUSE_URL: burrow.clickhouseUrl,
})
const burrowBoth = [...burrowPids, burrow2.pid]

const rows: Record<string, Result[]> = {}
const add = (name: string, r: Result) => (rows[name] ??= []).push(r)
// Rounds interleave every case so that a change in the machine's load falls on all of them; round 0
// warms up every server and the generator (JIT) and is not counted.
for (let round = 0; round <= ROUNDS; round++) {
  if (round === 0) {
    for (const s of [...Object.values(servers), burrow, burrow2]) await drive(s.url, [])
    await direct()
    continue
  }
  add('direct publish (no HTTP)', await direct())
  add('node:http, parse, 200', await drive(servers.node!.url, [servers.node!.pid]))
  add('fastify, parse, 200', await drive(servers.fastify!.url, [servers.fastify!.pid]))
  const fp = servers['fastify-publish']!
  add('fastify + publish + ack', await drive(fp.url, natsPid ? [fp.pid, natsPid] : [fp.pid]))
  for (const [name, key] of [
    ['fastify + group commit', 'fastify-group'],
    ['same, 2 processes', 'fastify-group-2'],
  ] as const) {
    const g = servers[key]!
    add(name, await drive(g.url, natsPid ? [g.pid, natsPid] : [g.pid]))
  }
  add('burrow /i/v0/e/', await drive(burrow.url, burrowPids))
  add('burrow, 2 processes', await drive([burrow.url, burrow2.url], burrowBoth))
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const directRate = median(rows['direct publish (no HTTP)']!.map((r) => r.rate))
console.log(`${SINGLES} single events per case, ${IN_FLIGHT} in flight, ${ROUNDS} rounds (median of rounds)`)
console.log(
  'case                          events/s  /direct  server CPU/event  generator CPU/event  last round latency',
)
for (const [name, rs] of Object.entries(rows)) {
  const r = median(rs.map((x) => x.rate))
  console.log(
    `${name.padEnd(28)} ${String(r).padStart(9)}  ${(r / directRate).toFixed(2).padStart(7)}  ` +
      `${median(rs.map((x) => x.serverUs))
        .toFixed(0)
        .padStart(12)} µs  ${median(rs.map((x) => x.generatorUs))
        .toFixed(0)
        .padStart(15)} µs  ${rs.at(-1)!.latency}`,
  )
}
console.log(
  'server CPU: the server process (+ nats-server where the case publishes); direct: nats-server only',
)

await nc.close()
for (const s of Object.values(servers)) await s.stop()
await burrow2.cleanup()
await burrow.cleanup()
process.exit(0)

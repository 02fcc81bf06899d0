// Two Burrow checkouts side by side on single events (`/i/v0/e/`, 32 in flight, as bench/floor.ts):
// A is this checkout, B the one at B_ROOT (e.g. `git worktree add /tmp/b <commit>` and a link to
// this node_modules). Both run role capture on the same NATS and ClickHouse, and the rounds alternate
// A B, B A, ... so that the machine's drift (its speed changes by half within minutes here) falls on
// both. Prints each round's rate and each process's CPU per event, and B / A of the medians.
// B_NODE_OPTIONS gives B node flags of its own (B_ROOT may then be this checkout).
// Run: B_ROOT=/tmp/b npx tsx bench/ab.ts   (env SINGLES, ROUNDS, B_NODE_OPTIONS)
import { benchBurrow, cpuSnapshot, httpPost, rate, runPool, sdkPageview } from './lib.ts'

const SINGLES = Number(process.env.SINGLES ?? 10000)
const ROUNDS = Number(process.env.ROUNDS ?? 6)
const B_ROOT = process.env.B_ROOT
if (!B_ROOT) throw new Error('B_ROOT: the checkout to compare with this one')

const env = { ROLE: 'capture', OVERFLOW_EVENTS_PER_SECOND: '1000000000' }
// A third Burrow owns NATS and ClickHouse, so that A and B stand alike.
const stack = await benchBurrow(env)
const servers = { ...env, NATS_URL: stack.natsUrl, CLICKHOUSE_URL: stack.clickhouseUrl }
const a = await benchBurrow(servers)
const b = await benchBurrow(
  process.env.B_NODE_OPTIONS ? { ...servers, NODE_OPTIONS: process.env.B_NODE_OPTIONS } : servers,
  B_ROOT,
)
const token = stack.credentials.project_api_key

const event = (i: number) => ({ api_key: token, ...sdkPageview(i) })

/** CPU seconds of a Burrow's processes. */
const burrowCpu = (pid: number) => [...cpuSnapshot(pid).values()].reduce((s, v) => s + v, 0)

async function drive(url: string, pid: number) {
  const cpu0 = burrowCpu(pid)
  const t0 = performance.now()
  await runPool(SINGLES, 32, async (i) => {
    const res = await httpPost(`${url}/i/v0/e/`, JSON.stringify(event(i)))
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${res.text}`)
  })
  return { rate: rate(SINGLES, performance.now() - t0), us: ((burrowCpu(pid) - cpu0) / SINGLES) * 1e6 }
}

const sides = { A: a, B: b }
const results: Record<'A' | 'B', { rate: number; us: number }[]> = { A: [], B: [] }
// Warming up: this generator first, on the third Burrow, and then A and B in both orders. The side
// warmed up first (while the generator was still cold) measured up to 1.5 times the other's CPU an
// event in every later round, both of the same checkout: what it learned then stays.
await drive(stack.url, stack.pid)
for (const side of ['A', 'B', 'B', 'A'] as const) await drive(sides[side].url, sides[side].pid)
for (let round = 1; round <= ROUNDS; round++) {
  for (const side of round % 2 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
    results[side].push(await drive(sides[side].url, sides[side].pid))
  }
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
console.log(
  `${SINGLES} single events a round, 32 in flight, ${ROUNDS} rounds; ` +
    `B = ${B_ROOT}${process.env.B_NODE_OPTIONS ? ` with ${process.env.B_NODE_OPTIONS}` : ''}`,
)
for (const side of ['A', 'B'] as const) {
  const rs = results[side]
  console.log(
    `${side}: events/s ${rs.map((r) => r.rate).join(' ')} (median ${median(rs.map((r) => r.rate))}); ` +
      `CPU µs/event ${rs.map((r) => r.us.toFixed(0)).join(' ')} (median ${median(rs.map((r) => r.us)).toFixed(0)})`,
  )
}
const ratio = (f: (r: { rate: number; us: number }) => number) =>
  (median(results.B.map(f)) / median(results.A.map(f))).toFixed(3)
console.log(`B / A: CPU per event ${ratio((r) => r.us)}, events/s ${ratio((r) => r.rate)}`)

await b.cleanup()
await a.cleanup()
await stack.cleanup()
process.exit(0)

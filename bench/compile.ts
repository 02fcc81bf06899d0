// HogQL compile time without a server (issues #16, #21): CPU per compileHogQLSync, and per parse
// with PostHog's (WebAssembly) parser and with the fast parser, for insight-sized statements.
// CPU time (process.cpuUsage), not wall-clock: the machine is shared. `npx tsx bench/compile.ts`
import { readFileSync } from 'node:fs'
import { fastParseSelect } from '../src/hogql/fast-parse.ts'
import { compileHogQLSync, prepareHogQL } from '../src/hogql/index.ts'
import { getParser, identifierOracle, parseSelectWasm } from '../src/hogql/parse.ts'

const RUNS = Number(process.env.RUNS ?? 300)
const range = "timestamp >= '2026-10-25 00:00:00' AND timestamp < '2026-11-24 00:00:00'"
const QUERIES: [string, string][] = [
  [
    'count by event',
    `SELECT event, count() AS c FROM events WHERE ${range} GROUP BY event ORDER BY c DESC, event`,
  ],
  [
    'daily unique persons',
    `SELECT toStartOfDay(timestamp) AS day, count(DISTINCT person_id) AS persons FROM events
      WHERE event = '$pageview' AND ${range} GROUP BY day ORDER BY day`,
  ],
  [
    'person.properties.plan breakdown',
    `SELECT person.properties.plan AS plan, count() AS c FROM events
      WHERE event = '$pageview' AND ${range} GROUP BY plan ORDER BY c DESC, plan`,
  ],
]

/** CPU milliseconds per call of `f(i)`, after a warm-up. */
function cpuPerCall(f: (i: number) => unknown): number {
  for (let i = 0; i < 100; i++) f(-1 - i)
  const t0 = process.cpuUsage()
  for (let i = 0; i < RUNS; i++) f(i)
  const t = process.cpuUsage(t0)
  return (t.user + t.system) / 1000 / RUNS
}

await prepareHogQL()
const parser = await getParser()
const words = identifierOracle(parser)
console.log(`load: ${readFileSync('/proc/loadavg', 'utf8').trim()}; ${RUNS} calls each, CPU ms per call`)
console.log(
  `${'query'.padEnd(34)} ${'compile'.padStart(9)} ${'cached'.padStart(9)} ${'wasm'.padStart(9)} ${'fast'.padStart(9)}`,
)
for (const [name, q] of QUERIES) {
  // a text of its own per call (a trailing comment) so the parse cache does not answer
  const compile = cpuPerCall((i) => compileHogQLSync(`${q} /* ${i} */`, { teamId: 1 }))
  const cached = cpuPerCall(() => compileHogQLSync(q, { teamId: 1 }))
  const wasm = cpuPerCall(() => parseSelectWasm(parser, q))
  const fast = cpuPerCall(() => fastParseSelect(q, words))
  const f = (ms: number) => ms.toFixed(3).padStart(9)
  console.log(`${name.padEnd(34)} ${f(compile)} ${f(cached)} ${f(wasm)} ${f(fast)}`)
}

// Shared pieces of the benchmarks: Burrow as its own process on a throw-away embedded stack (so the
// load generator does not share its event loop), and latency statistics.
import { type ChildProcess, spawn } from 'node:child_process'
import { Agent, request } from 'node:http'
import { createWriteStream, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import type { Credentials } from '../src/accounts/bootstrap.ts'
import type { JetStreamClient } from '@nats-io/jetstream'
import { v7 as uuidv7 } from 'uuid'
import { createClient } from '@clickhouse/client'
import { clickhouseClient, type ClickHouseClient } from '../src/clickhouse/client.ts'
import type { ProjectionContext } from '../src/projectors/batch.ts'
import { insertTsv } from '../src/projectors/clickhouse-io.ts'
import { eventLine } from '../src/projectors/rows.ts'
import { EVENT_COLUMNS } from '../src/projectors/tables.ts'
import { createLogger } from '../src/observability/logger.ts'
import { sessionsViewDDL } from '../src/sessions/replay.ts'
import { ensureBinaries } from '../src/stack/install.ts'
import { startNatsServer } from '../src/stack/nats-server.ts'
import { freePort } from '../src/stack/ports.ts'
import { logMessage } from '../src/jetstream/messages.ts'
import { statCpuMs } from '../src/runtime/thread-cpu.ts'
import { TaxonomyCollector } from '../src/taxonomy/collect.ts'

export interface BenchBurrow {
  url: string
  natsUrl: string
  clickhouseUrl: string
  database: string
  credentials: Credentials
  /** the Burrow process (and, when it runs workers in child processes, those are its children) */
  pid: number
  cleanup(): Promise<void>
}

/** Sends `child` SIGTERM when this process exits, however it exits short of SIGKILL. */
function stopOnExit(child: ChildProcess): void {
  const stop = () => child.kill('SIGTERM')
  process.once('exit', stop)
  child.once('exit', () => process.removeListener('exit', stop))
}

/**
 * Starts `burrow start` with `env` over the defaults (a data directory of its own, a free port,
 * LOG_LEVEL warn), from the checkout at `root` (this one unless given: bench/ab.ts compares two).
 */
export async function benchBurrow(
  env: Record<string, string> = {},
  root = join(import.meta.dirname, '..'),
): Promise<BenchBurrow> {
  const dir = mkdtempSync(join(tmpdir(), 'burrow-bench-'))
  const port = await freePort()
  // BURROW_NODE_ARGS: node flags for the Burrow process only, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`
  const nodeArgs = process.env.BURROW_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'bin', 'burrow.js'), 'start'], {
    env: {
      ...process.env,
      DATA_DIR: dir,
      PORT: String(port),
      LOG_LEVEL: process.env.BURROW_LOG_LEVEL ?? 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  // BURROW_LOG_FILE: Burrow's log lines (pino JSON, e.g. the projector's per-batch timings at
  // BURROW_LOG_LEVEL=debug) are copied there
  if (process.env.BURROW_LOG_FILE) child.stdout!.pipe(createWriteStream(process.env.BURROW_LOG_FILE))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  // A bench that throws or exits early takes its Burrow (and so its NATS and ClickHouse) with it.
  stopOnExit(child)
  await untilListening(child, 'burrow')
  const stack = JSON.parse(readFileSync(join(dir, 'stack.json'), 'utf8'))
  return {
    url: `http://127.0.0.1:${port}`,
    natsUrl: process.env.NATS_URL ?? stack.nats_url,
    clickhouseUrl: process.env.CLICKHOUSE_URL ?? stack.clickhouse_url,
    database: env.CLICKHOUSE_DATABASE ?? process.env.CLICKHOUSE_DATABASE ?? 'burrow',
    credentials: JSON.parse(readFileSync(join(dir, 'local-credentials.json'), 'utf8')),
    pid: child.pid!,
    async cleanup() {
      child.kill('SIGTERM')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/**
 * Clients of a bench Burrow's ClickHouse with the benches' long timeouts: `ch` (@clickhouse/client)
 * and `lean` (Burrow's own reader), and the ClickHouse server process's CPU so far, in ms.
 */
export function benchClickHouse(burrow: BenchBurrow) {
  const ch = createClient({
    url: burrow.clickhouseUrl,
    database: burrow.database,
    request_timeout: 600_000,
    clickhouse_settings: { max_execution_time: 600 },
  })
  const lean = clickhouseClient(burrow.clickhouseUrl, burrow.database, { max_execution_time: 600 })
  const serverPid = processTree(burrow.pid).find((p) => procStats(p)?.name.startsWith('clickhouse')) ?? 0
  const serverCpuMs = () => (procStats(serverPid)?.cpuSeconds ?? Number.NaN) * 1000
  return { ch, lean, serverCpuMs }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export function latencyLine(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b)
  return `p50 ${percentile(s, 50).toFixed(2)} ms  p99 ${percentile(s, 99).toFixed(2)} ms`
}

/**
 * When each of `count` batches of `size` events (named `<prefix><batch>`, of `team`) became
 * queryable: ClickHouse is asked every `pollMs` (a lag is read to within one interval, rounded up).
 * Resolves with each batch's performance.now() time; rejects when some are still missing after
 * `timeoutMs`.
 */
export async function queryableTimes(
  ch: ClickHouseClient,
  o: { team: number; prefix: string; count: number; size: number; pollMs: number; timeoutMs?: number },
): Promise<number[]> {
  const visible = new Array<number>(o.count)
  const deadline = performance.now() + (o.timeoutMs ?? 10 * 60_000)
  let seen = 0
  for (;;) {
    const rs = await ch.query({
      query: `SELECT event, count() AS n FROM events WHERE team_id = ${o.team} AND startsWith(event, '${o.prefix}') GROUP BY event`,
      format: 'JSONEachRow',
    })
    const now = performance.now()
    for (const r of await rs.json<{ event: string; n: string }>()) {
      const b = Number(r.event.slice(o.prefix.length))
      if (Number(r.n) >= o.size && visible[b] === undefined) {
        visible[b] = now
        seen++
      }
    }
    if (seen === o.count) return visible
    if (now > deadline) throw new Error(`only ${seen}/${o.count} batches became queryable`)
    await new Promise((r) => setTimeout(r, o.pollMs))
  }
}

/** Runs `task(i)` for i in [0, n) with `concurrency` in flight; returns per-task latencies in ms. */
export async function runPool(
  n: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const lat: number[] = new Array(n)
  let next = 0
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++
        if (i >= n) return
        const t0 = performance.now()
        await task(i)
        lat[i] = performance.now() - t0
      }
    }),
  )
  return lat
}

export const rate = (count: number, ms: number) => Math.round((count / ms) * 1000)

/**
 * The i-th event of the capture benches as an SDK sends it: a `$pageview` of one of 5,000 ids, a
 * new uuid, sent now.
 */
export const sdkPageview = (i: number) => ({
  event: '$pageview',
  distinct_id: `user-${i % 5000}`,
  uuid: uuidv7(),
  timestamp: new Date().toISOString(),
  properties: { $current_url: `https://example.com/p/${i % 100}`, $browser: 'Chrome', $lib: 'bench', n: i },
})

// BENCH_PAGES=per-event: each event of a person is on another page (with its $pathname), as a
// visitor's pageviews are; the default keeps a person on one page (i % 100 with the benches' 5,000 or
// 500 ids), the workload of every figure before stop 37 (docs/performance.md).
// BENCH_EVENTS=web: events as posthog-js sends them (webProperties), each on another page.
const PAGE_PER_EVENT = process.env.BENCH_PAGES === 'per-event'
const WEB_EVENTS = process.env.BENCH_EVENTS === 'web'

/** The page of the i-th event of a person, each event on another one (BENCH_PAGES=per-event). */
const pageOfEvent = (i: number) => Math.floor(i / 7) % 100

/** The properties of the i-th event of the ingestion benches: a web event, a person update every 50th. */
export function benchProperties(i: number): Record<string, unknown> {
  if (WEB_EVENTS) return webProperties(i, pageOfEvent(i))
  const page = PAGE_PER_EVENT ? pageOfEvent(i) : i % 100
  return {
    $current_url: `https://example.com/p/${page}`,
    ...(PAGE_PER_EVENT ? { $pathname: `/p/${page}` } : {}),
    $browser: 'Chrome',
    $session_id: `s-${i % 777}`,
    $lib: 'bench',
    n: i,
    nested: { a: i % 3, b: 'x' },
    ...(i % 50 === 0 ? { $set: { plan: i % 2 ? 'pro' : 'free' } } : {}),
  }
}

/**
 * The properties posthog-js sends with the i-th event of user `i % 5000` on page `page`: its usual
 * ones, an autocapture's elements every tenth event, a person update every 50th (no token).
 */
export function webProperties(i: number, page: number): Record<string, unknown> {
  return {
    $os: 'Mac OS X',
    $os_version: '14.5.0',
    $browser: 'Chrome',
    $device_type: 'Desktop',
    $current_url: `https://app.example.com/project/${page}/insights?tab=trends`,
    $host: 'app.example.com',
    $pathname: `/project/${page}/insights`,
    $raw_user_agent:
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
    $browser_version: 126,
    $browser_language: 'en-US',
    $screen_height: 1117,
    $screen_width: 1728,
    $viewport_height: 971,
    $viewport_width: 1728,
    $lib: 'web',
    $lib_version: '1.150.0',
    $insert_id: `ins${i.toString(36)}`,
    $time: 1_732_000_000 + i / 10,
    distinct_id: `user-${i % 5000}`,
    $device_id: `dev-${i % 5000}`,
    $user_id: `user-${i % 5000}`,
    $initial_referrer: '$direct',
    $initial_referring_domain: '$direct',
    $referrer: 'https://app.example.com/home',
    $referring_domain: 'app.example.com',
    $session_id: `sess-${i % 777}`,
    $window_id: `win-${i % 999}`,
    $pageview_id: `pv-${i % 333}`,
    $is_identified: true,
    $process_person_profile: true,
    ...(i % 50 === 0 ? { $set: { email: `u${i % 5000}@example.com`, plan: 'pro' } } : {}),
    ...(i % 10 === 1
      ? {
          $event_type: 'click',
          $elements_chain: `button.btn.primary:attr__class="btn primary"nth-child="2"nth-of-type="1"text="Save ${page}";div.toolbar:nth-child="1"`,
        }
      : {}),
  }
}

/** A nats-server of the bench's own, in a temporary directory (benches without ClickHouse). */
export async function benchNatsServer(name: string): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), `burrow-${name}-`))
  const log = createLogger('warn')
  const nats = await startNatsServer({
    bin: ensureBinaries(['nats-server'], { autoInstall: true, log })['nats-server'],
    dataDir: join(dir, 'nats'),
    port: await freePort(),
  })
  return {
    url: nats.url,
    async stop() {
      await nats.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** An event of the ingestion benches, as a client sends it. */
export interface BenchEvent {
  event: string
  distinct_id: string
  uuid: string
  timestamp: string
  properties: Record<string, unknown>
}

/**
 * `count` chunks of `size` events over `distinct` ids, one second apart from 2024-01-01; `name(chunk)`
 * is each chunk's event name (the benches count a chunk's rows by it).
 */
export function benchChunks(count: number, size: number, distinct: number, name: (chunk: number) => string) {
  return Array.from({ length: count }, (_, b): BenchEvent[] =>
    Array.from({ length: size }, (_, j) => {
      const i = b * size + j
      return {
        event: name(b),
        distinct_id: `user-${i % distinct}`,
        uuid: uuidv7(),
        timestamp: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString(),
        properties: benchProperties(i),
      }
    }),
  )
}

/**
 * Publishes each chunk straight to the log as capture stamps and writes it (the current log format
 * version), for `team`, on the live lane.
 */
export async function publishChunks(
  js: JetStreamClient,
  team: number,
  chunks: BenchEvent[][],
): Promise<void> {
  const now = new Date().toISOString()
  for (const chunk of chunks) {
    const lines = chunk.map((e) => JSON.stringify({ ...e, team_id: team, now, sent_at: null, ip: null }))
    // in messages under NATS's default max_payload (1 MiB), as capture splits a large batch
    let message: string[] = []
    let bytes = 0
    for (const line of lines) {
      const size = Buffer.byteLength(line) + 1
      if (message.length > 0 && bytes + size > PUBLISH_MAX_BYTES) {
        await js.publish('events.live.0', logMessage(team, 'live', message))
        message = []
        bytes = 0
      }
      message.push(line)
      bytes += size
    }
    await js.publish('events.live.0', logMessage(team, 'live', message))
  }
}

/** The bytes of events one message of publishChunks holds at most. */
const PUBLISH_MAX_BYTES = 900 * 1024

/** The `events` line of a bench event as the projector writes it, without person work (no person). */
export function benchEventLine(team: number, e: BenchEvent, seq: number, offset: number): string {
  const ts = Date.parse(e.timestamp)
  return eventLine({
    teamId: team,
    uuid: e.uuid,
    event: e.event,
    distinctId: e.distinct_id,
    personId: '00000000-0000-0000-0000-000000000000',
    timestampMs: ts,
    properties: e.properties,
    personProperties: {},
    elementsChain: '',
    sessionId: String(e.properties.$session_id),
    groups: ['', '', '', '', ''],
    createdAtMs: ts,
    seq,
    offset,
  })
}

/**
 * The baseline of the ingestion benches: the same rows, serialized as the projector serializes them,
 * inserted straight into a fresh copy of `events`, `perInsert` chunks per INSERT. The copy carries
 * what an INSERT into `events` runs: the sessions' materialized view, into a copy of raw_sessions
 * (`views: false` leaves it out). Returns the wall time in ms; the copies are dropped.
 */
export async function directInsertMs(
  ch: ClickHouseClient,
  team: number,
  chunks: BenchEvent[][],
  perInsert = 10,
  views = true,
): Promise<number> {
  const names = {
    view: 'raw_sessions_mv_bench_direct',
    events: 'events_bench_direct',
    sessions: 'raw_sessions_bench_direct',
  }
  await dropDirect(ch, names)
  await ch.command({ query: `CREATE TABLE ${names.events} AS events` })
  if (views) {
    await ch.command({ query: `CREATE TABLE ${names.sessions} AS raw_sessions` })
    await ch.command({ query: sessionsViewDDL(names) })
  }
  const t = performance.now()
  let seq = 0
  let pending: string[] = []
  for (const chunk of chunks) {
    seq++
    for (const [offset, e] of chunk.entries()) pending.push(benchEventLine(team, e, seq, offset))
    if (seq % perInsert === 0 || seq === chunks.length) {
      await insertTsv(ch, 'events_bench_direct', EVENT_COLUMNS, pending)
      pending = []
    }
  }
  const ms = performance.now() - t
  await dropDirect(ch, names)
  return ms
}

async function dropDirect(ch: ClickHouseClient, n: { view: string; events: string; sessions: string }) {
  await ch.command({ query: `DROP VIEW IF EXISTS ${n.view}` })
  await ch.command({ query: `DROP TABLE IF EXISTS ${n.events}` })
  await ch.command({ query: `DROP TABLE IF EXISTS ${n.sessions}` })
}

/** CPU seconds used so far and peak RSS (MiB) of a process, from /proc (Linux); undefined when gone. */
export function procStats(pid: number): { cpuSeconds: number; peakRssMiB: number; name: string } | undefined {
  try {
    const cpuMs = statCpuMs(readFileSync(`/proc/${pid}/stat`, 'utf8')) ?? Number.NaN
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const hwm = /VmHWM:\s+(\d+) kB/.exec(status)
    const name = /Name:\s+(.*)/.exec(status)?.[1] ?? '?'
    return { cpuSeconds: cpuMs / 1000, peakRssMiB: hwm ? Number(hwm[1]) / 1024 : 0, name }
  } catch {
    return undefined
  }
}

/**
 * The process and its descendants (Linux), for per-process CPU and peak RSS lines. A child belongs to
 * the thread that started it, so every thread's list is read (tsx's esbuild service is started from
 * one of Node's threads, not the main one).
 */
export function processTree(pid: number): number[] {
  const out = [pid]
  for (let i = 0; i < out.length; i++) {
    try {
      for (const task of readdirSync(`/proc/${out[i]}/task`)) {
        const kids = readFileSync(`/proc/${out[i]}/task/${task}/children`, 'utf8').trim()
        if (kids)
          out.push(
            ...kids
              .split(' ')
              .map(Number)
              .filter((k) => !out.includes(k)),
          )
      }
    } catch {
      // gone meanwhile
    }
  }
  return out
}

/** One line per process of the tree: name, pid, CPU seconds since `since` (if given), peak RSS. */
export function processLines(pid: number, since?: Map<number, number>): string[] {
  return processTree(pid).flatMap((p) => {
    const s = procStats(p)
    if (!s) return []
    const cpu = s.cpuSeconds - (since?.get(p) ?? 0)
    return [`  ${s.name} (pid ${p}): cpu ${cpu.toFixed(1)} s  peak RSS ${s.peakRssMiB.toFixed(0)} MiB`]
  })
}

/**
 * Waits until the process tree has at least `nodes` node processes and used less than `cpuSeconds` of
 * CPU in the last `windowMs` (start-up done: tsx boots, migrations, the projector child's start), so
 * that a bench's CPU figures cover its own work only. Gives up after `timeoutMs`.
 */
export async function untilIdle(
  pid: number,
  { nodes = 1, windowMs = 1000, cpuSeconds = 0.05, timeoutMs = 120_000 } = {},
): Promise<void> {
  const total = () => [...cpuSnapshot(pid).values()].reduce((a, b) => a + b, 0)
  const deadline = Date.now() + timeoutMs
  let before = total()
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, windowMs))
    const now = total()
    const running = processTree(pid).filter((p) => procStats(p)?.name === 'node').length
    if (running >= nodes && now - before < cpuSeconds) return
    before = now
  }
  throw new Error('the Burrow under test did not settle after its start')
}

/** CPU seconds per process (by pid) between two snapshots, per 1,000 events, one line each. */
export function cpuPerThousand(
  pid: number,
  from: Map<number, number>,
  to: Map<number, number>,
  events: number,
) {
  return processTree(pid).flatMap((p) => {
    const s = procStats(p)
    if (!s || !to.has(p)) return []
    const cpu = to.get(p)! - (from.get(p) ?? 0)
    return [
      `  ${s.name} (pid ${p}): cpu ${cpu.toFixed(2)} s  = ${((cpu / events) * 1000).toFixed(3)} s per 1K events (${((cpu / events) * 1e6).toFixed(1)} µs/event)`,
    ]
  })
}

/** CPU seconds of each of `pids` now (0 for one that is gone). */
export function cpuOfPids(pids: Iterable<number>): Map<number, number> {
  return new Map([...pids].map((p) => [p, procStats(p)?.cpuSeconds ?? 0]))
}

/** CPU seconds of each process of the tree now, to pass as `since` to processLines. */
export function cpuSnapshot(pid: number): Map<number, number> {
  return cpuOfPids(processTree(pid))
}

// The load generator shares the 2 cores with the stack it measures, so its own cost per request
// is taken from Burrow's. undici's Pool costs ~75–110 µs of CPU a request here against node:http's
// ~175–190 µs and fetch's ~1 ms (same server, 16 in flight). BENCH_CLIENT=node sends through
// node:http instead, to compare a figure with one measured before stop 35.
const pools = new Map<string, Pool>()
const nodeAgent = new Agent({ keepAlive: true, maxSockets: 256 })

function poolFor(origin: string): Pool {
  let pool = pools.get(origin)
  if (!pool) {
    pool = new Pool(origin, { connections: 256, keepAliveTimeout: 60_000 })
    pools.set(origin, pool)
  }
  return pool
}

function nodePost(url: URL, body: string, headers: Record<string, string>) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: nodeAgent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (res) => {
        const parts: Buffer[] = []
        res.on('data', (b: Buffer) => parts.push(b))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString() }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** POSTs a body over a kept-alive connection and resolves with status and text. */
export async function httpPost(
  url: string,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; text: string }> {
  const target = new URL(url)
  if (process.env.BENCH_CLIENT === 'node') return nodePost(target, body, headers)
  const res = await poolFor(target.origin).request({
    path: target.pathname + target.search,
    method: 'POST',
    headers,
    body,
  })
  return { status: res.statusCode, text: await res.body.text() }
}

/** A helper process of a bench, and the port it listens on (0 for one that does not listen). */
export interface BenchChild {
  port: number
  pid: number
  stop(): Promise<void>
}

/**
 * Starts `script` (a file beside this one, run through tsx) with `env` added to this process's, and
 * resolves once it printed `listening <port>` or `ready`; rejects if it exits first.
 */
export async function benchChild(script: string, env: Record<string, string>): Promise<BenchChild> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, script)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  stopOnExit(child)
  const ready = await untilOutput(child, /listening (\d+)|ready/, script)
  return {
    port: Number(ready[1] ?? 0),
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM')
      await exited
    },
  }
}

/** Resolves with the match once `child`'s stdout matches `pattern`; rejects if it exits first. */
function untilOutput(child: ChildProcess, pattern: RegExp, name: string): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = pattern.exec(out)
      if (m) resolve(m)
    })
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${out}`)))
  })
}

/** Resolves once a started `burrow` prints that it listens; rejects if it exits first. */
export async function untilListening(child: ChildProcess, name: string): Promise<void> {
  await untilOutput(child, /Burrow listening on/, name)
}

/**
 * A projection context for deciding batches alone (prepareBatch): the decision reads only the
 * identity store, so ClickHouse, JetStream and the writer are left out.
 */
export function decideOnlyContext(
  store: ProjectionContext['store'],
  tables: ProjectionContext['tables'],
  source: string,
  log: ProjectionContext['log'],
): ProjectionContext {
  return {
    store,
    tables,
    source,
    log,
    ch: undefined as never,
    js: undefined as never,
    writer: undefined as never,
    // the taxonomy's step runs as in a projector (its rows are written by writeRows, not timed here)
    taxonomy: new TaxonomyCollector(),
  }
}

const pageview = { kind: 'EventsNode', event: '$pageview' }

/** The series of the dashboard benches' 10 trends insights (bench/dashboard.ts, bench/saved-dashboard.ts). */
export const TRENDS_TILES: object[] = [
  { series: [pageview] },
  { series: [{ ...pageview, math: 'dau' }] },
  { series: [{ kind: 'EventsNode', event: 'purchase', math: 'sum', math_property: 'amount' }] },
  { series: [{ kind: 'EventsNode', event: 'signed_up' }] },
  { series: [{ kind: 'EventsNode', event: '$autocapture', math: 'unique_session' }] },
  { series: [{ ...pageview, properties: [{ key: '$browser', value: 'Chrome', type: 'event' }] }] },
  { series: [pageview, { kind: 'EventsNode', event: 'purchase' }], trendsFilter: { formula: 'B / A' } },
  { series: [{ kind: 'EventsNode', event: null }] },
  { series: [pageview], interval: 'week' },
  { series: [{ kind: 'EventsNode', event: '$rageclick', math: 'dau' }] },
]

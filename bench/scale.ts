// Projector scale-out: events/s and CPU-seconds per 1,000 events with 1, 2 and 4 projector
// processes (`burrow start --role projector`, PROJECTOR_PARTITION_LEASES=true) sharing the log's
// partitions, for one big project and for the same volume spread over 8 projects. Also the bytes
// per event in the log (JetStream) and in ClickHouse (events table on disk, compressed).
// Servers: one nats-server and one clickhouse-server (18.16) of its own. For each run the events
// (fresh team ids) are published while the projectors idle, then the wall time until ClickHouse
// holds them all is measured, with the CPU time (user + system, from /proc) the projector
// processes and clickhouse-server spent in that window.
// Baseline in the same run: 1 process; the figure that matters is how throughput grows with
// processes. Run: npx tsx bench/scale.ts   (env EVENTS=10000 per run, PARTITIONS=8)
// MODE=spread runs the processes with PROJECTOR_TEAM_SPREAD=true (identity stages and row writers,
// docs/scaling.md); PROJECTS=1 only the one big project. One mode per invocation: each mode's
// durables start at the beginning of the log, so a second mode in the same log would first project
// every earlier run's events again; compare modes by alternating invocations.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { v7 as uuidv7 } from 'uuid'
import { EVENTS_STREAM, eventsSubject, RESOLVED_STREAM } from '../schema/jetstream.ts'
import { clickhouseClient, selectRows } from '../src/clickhouse/client.ts'
import { migrateClickHouse } from '../src/clickhouse/migrate.ts'
import { connectNats, migrateJetStream } from '../src/jetstream/connection.ts'
import {
  type CapturedEvent,
  chunkMessageId,
  encodeChunk,
  type EventChunk,
  LOG_FORMAT_VERSION,
  partitionOf,
} from '../src/jetstream/messages.ts'
import { createLogger } from '../src/observability/logger.ts'
import { clickhouseLibrary } from '../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../src/stack/clickhouse-server.ts'
import { ensureBinaries } from '../src/stack/install.ts'
import { startNatsServer } from '../src/stack/nats-server.ts'
import { freePort } from '../src/stack/ports.ts'
import { benchProperties, procStats, untilListening } from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 10_000)
const PARTITIONS = Number(process.env.PARTITIONS ?? 8)
const MODE = process.env.MODE === 'spread' ? 'spread' : 'leases'
const PROJECTS = (process.env.PROJECTS ?? '1,8').split(',').map(Number)
const DATABASE = 'burrow'
const BIN = join(import.meta.dirname, '..', 'bin', 'burrow.js')

const log = createLogger('warn')
const bins = ensureBinaries(['nats-server'], { autoInstall: true, log })
const dir = mkdtempSync(join(tmpdir(), 'burrow-bench-scale-'))
const [nats, ch] = await Promise.all([
  startNatsServer({ bin: bins['nats-server'], dataDir: join(dir, 'nats'), port: await freePort() }),
  startClickHouseServer({
    library: await clickhouseLibrary(),
    dataDir: join(dir, 'ch'),
    httpPort: await freePort(),
    tcpPort: await freePort(),
  }),
])

/** CPU seconds (user + system) a process has used so far; throws once it is gone. */
function cpuSeconds(pid: number): number {
  const stats = procStats(pid)
  if (!stats) throw new Error(`process ${pid} has exited`)
  return stats.cpuSeconds
}

async function startProjectors(n: number) {
  const procs = []
  for (let i = 0; i < n; i++) {
    const child = spawn(process.execPath, [BIN, 'start', '--role', 'projector'], {
      env: {
        ...process.env,
        NATS_URL: nats.url,
        CLICKHOUSE_URL: ch.url,
        CLICKHOUSE_DATABASE: DATABASE,
        DATA_DIR: join(dir, `p${n}-${i}`),
        PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
        LOG_PARTITIONS: String(PARTITIONS),
        PROJECTOR_PARTITION_LEASES: 'true',
        PROJECTOR_TEAM_SPREAD: String(MODE === 'spread'),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    await untilListening(child, 'projector')
    procs.push(child)
  }
  // leases settle: every process holds its share (a renewal every 2 s)
  await new Promise((r) => setTimeout(r, 5000))
  return procs
}

const nc = await connectNats(nats.url, 'bench-scale')
await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
const { client } = await migrateClickHouse(ch.url, DATABASE)
await client.close()
const db = clickhouseClient(ch.url, DATABASE)
const js = jetstream(nc)
let nextTeam = 100

/** Publishes EVENTS events over `teams` new team ids (chunks of 1,000, as capture writes). */
async function publish(teams: number): Promise<number[]> {
  const ids = Array.from({ length: teams }, () => nextTeam++)
  const now = new Date().toISOString()
  for (let start = 0; start < EVENTS; start += 1000) {
    for (const team of ids) {
      const per = Math.min(1000, Math.ceil(EVENTS / teams) - start)
      if (per <= 0) continue
      const events: CapturedEvent[] = Array.from({ length: per }, (_, k) => {
        const i = start + k
        return {
          uuid: uuidv7(),
          event: i % 20 === 0 ? '$identify' : '$pageview',
          distinct_id: i % 20 === 0 ? `user-${i % 500}` : `anon-${i % 2000}`,
          properties: {
            ...benchProperties(i),
            ...(i % 20 === 0 ? { $anon_distinct_id: `anon-${i % 2000}` } : {}),
          },
          timestamp: now,
          now,
          sent_at: null,
          ip: null,
          team_id: team,
        }
      })
      const chunk: EventChunk = { v: LOG_FORMAT_VERSION, team_id: team, lane: 'live', events }
      await js.publish(eventsSubject('live', partitionOf(team, PARTITIONS)), encodeChunk(chunk), {
        msgID: chunkMessageId(chunk),
      })
    }
  }
  return ids
}

async function stored(teams: number[]): Promise<number> {
  const [r] = await selectRows<{ n: string }>(
    db,
    `SELECT count() AS n FROM events WHERE team_id IN (${teams.join(',')})`,
  )
  return Number(r!.n)
}

const rows: string[] = []
for (const projects of PROJECTS) {
  for (const processes of [1, 2, 4]) {
    const procs = await startProjectors(processes)
    const pids = procs.map((p) => p.pid!)
    const each0 = pids.map(cpuSeconds)
    const cpu0 = each0.reduce((a, b) => a + b, 0)
    const ch0 = cpuSeconds(ch.pid)
    const t0 = performance.now()
    const teams = await publish(projects)
    const total = Math.ceil(EVENTS / projects) * projects
    while ((await stored(teams)) < total) await new Promise((r) => setTimeout(r, 100))
    const secs = (performance.now() - t0) / 1000
    const cpu = pids.reduce((s, p) => s + cpuSeconds(p), 0) - cpu0
    const chCpu = cpuSeconds(ch.pid) - ch0
    // per process: with spread and 2 processes, the first holds the identity stages, the second the row writers
    const each = pids.map((p, i) => (((cpuSeconds(p) - each0[i]!) / total) * 1000).toFixed(3)).join(' / ')
    rows.push(
      `| ${MODE} | ${projects} | ${processes} | ${total} | ${(total / secs).toFixed(0)} | ${((cpu / total) * 1000).toFixed(3)} | ${each} | ${((chCpu / total) * 1000).toFixed(2)} |`,
    )
    console.error(rows.at(-1))
    for (const p of procs) p.kill('SIGTERM')
    await Promise.all(
      procs.map((p) => new Promise((r) => (p.exitCode === null ? p.once('exit', r) : r(null)))),
    )
  }
}

const jsm = await jetstreamManager(nc)
const logState = (await jsm.streams.info(EVENTS_STREAM)).state
const [disk] = await selectRows<{ bytes: string; rows: string }>(
  db,
  `SELECT sum(bytes_on_disk) AS bytes, sum(rows) AS rows FROM system.parts WHERE database = '${DATABASE}' AND table = 'events' AND active`,
)
console.log(`load before: see uptime; events per run ${EVENTS}, partitions ${PARTITIONS}`)
console.log(
  '| mode | projects | projector processes | events | events/s (wall) | projector CPU-s per 1K | per process | clickhouse CPU-s per 1K |',
)
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |')
for (const r of rows) console.log(r)
console.log(
  `log: ${(logState.bytes / logState.messages).toFixed(0)} bytes per message (chunk of up to 1,000 events), ` +
    `${(logState.bytes / Number(disk!.rows)).toFixed(0)} bytes per event`,
)
console.log(
  `clickhouse events: ${(Number(disk!.bytes) / Number(disk!.rows)).toFixed(1)} bytes per event on disk (compressed)`,
)
if (MODE === 'spread') {
  const resolved = (await jsm.streams.info(RESOLVED_STREAM)).state
  console.log(`resolved stream: ${(resolved.bytes / Number(disk!.rows)).toFixed(0)} bytes per event`)
}

await db.close()
await nc.close()
await Promise.all([nats.stop(), ch.stop()])
rmSync(dir, { recursive: true, force: true })

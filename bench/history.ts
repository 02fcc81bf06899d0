// History at speed (issue #17's "replay and import"): events/s from the log to queryable with
// `burrow replay` (the whole log rebuilt into fresh tables and swapped in) and from a JSON-lines file
// to queryable with `burrow import`, each against a direct ClickHouse insert of the same rows
// (serialized the way the projector does) into a copy of `events` in the same run.
// The log is filled first by publishing chunks of 1,000 events straight to it (as capture writes
// them), which also gives the live projector's rate for the same events.
// Run: npx tsx bench/history.ts   (env EVENTS=200000, DISTINCT=5000 ids; PROJECTOR_BATCH_SIZE etc.
// are passed on to the Burrow under test; REPLAY_BATCH_SIZE: the replay's messages a batch;
// REPLAY_BATCH_MIB=4,16: its batches' MiB, one figure per replay in turn; REPLAYS=n replays n times
// in a row, each its own figure; IMPORT=0 leaves the import out; IMPORT_NODE_ARGS are node flags
// for the import command; PROFILE=1 writes a CPU profile of the last replay to ./replay.cpuprofile)
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { jetstream } from '@nats-io/jetstream'
import { clickhouseClient, selectRows } from '../src/clickhouse/client.ts'
import { connectNats } from '../src/jetstream/connection.ts'
import { createLogger } from '../src/observability/logger.ts'
import { replay } from '../src/projectors/replay.ts'
import {
  benchBurrow,
  benchChunks,
  cpuSnapshot,
  directInsertMs,
  procStats,
  publishChunks,
  rate,
  untilIdle,
} from './lib.ts'

const EVENTS = Number(process.env.EVENTS ?? 200_000)
const DISTINCT = Number(process.env.DISTINCT ?? 5000)
const REPLAYS = Number(process.env.REPLAYS ?? 1)
/** MiB of message data a replay batch holds at most, one figure per replay in turn (e.g. `4,16`) */
const REPLAY_BATCH_MIB = (process.env.REPLAY_BATCH_MIB ?? '').split(',').filter(Boolean).map(Number)
const IMPORT = process.env.IMPORT !== '0'
const CHUNK = 1000
const CHUNKS = Math.ceil(EVENTS / CHUNK)
const total = CHUNKS * CHUNK

const burrow = await benchBurrow({ OVERFLOW_EVENTS_PER_SECOND: '1000000000' })
const ch = clickhouseClient(burrow.clickhouseUrl, burrow.database)
const nc = await connectNats(burrow.natsUrl)
const team = burrow.credentials.project_id
const dir = mkdtempSync(join(tmpdir(), 'burrow-history-'))

/** Waits until `team` has `n` events named `name` (or any, without a name); returns when (ms). */
async function untilQueryable(n: number, name?: string): Promise<number> {
  const deadline = performance.now() + 15 * 60_000
  const where = name === undefined ? '' : ` AND event = '${name}'`
  for (;;) {
    const [{ c } = { c: '0' }] = await selectRows<{ c: string }>(
      ch,
      `SELECT count() AS c FROM events WHERE team_id = ${team}${where}`,
    )
    if (Number(c) >= n) return performance.now()
    if (performance.now() > deadline) throw new Error(`only ${c}/${n} events became queryable`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** CPU seconds of the Burrow tree (Burrow, projector process, nats-server, clickhouse-server) and this process. */
function cpuNow(): { tree: Map<number, number>; self: number } {
  const u = process.cpuUsage()
  return { tree: cpuSnapshot(burrow.pid), self: (u.user + u.system) / 1e6 }
}

/** µs of CPU per event between two readings, per process name, and in all. */
function cpuLine(from: ReturnType<typeof cpuNow>, to: ReturnType<typeof cpuNow>, events: number): string {
  const parts: string[] = []
  let sum = 0
  for (const [pid, cpu] of to.tree) {
    const d = cpu - (from.tree.get(pid) ?? 0)
    sum += d
    if (d >= 0.05) parts.push(`${procStats(pid)?.name ?? pid} ${((d / events) * 1e6).toFixed(1)}`)
  }
  const self = to.self - from.self
  sum += self
  parts.push(`bench process ${((self / events) * 1e6).toFixed(1)}`)
  return `${((sum / events) * 1e6).toFixed(1)} µs/event of CPU (${parts.join(', ')})`
}

try {
  await untilIdle(burrow.pid, { nodes: process.env.PROJECTOR_PROCESS === 'false' ? 1 : 2 })
  const chunks = benchChunks(CHUNKS, CHUNK, DISTINCT, () => 'logged')

  // The log: chunks as capture writes them, projected by the live projector.
  const c0 = cpuNow()
  const t0 = performance.now()
  await publishChunks(jetstream(nc), team, chunks)
  const liveMs = (await untilQueryable(total, 'logged')) - t0
  const c1 = cpuNow()

  const directMs = await directInsertMs(ch, team, chunks)
  // the same without the sessions view of `events`: what the view costs a direct insert
  const bareMs = await directInsertMs(ch, team, chunks, 10, false)
  await untilIdle(burrow.pid, { nodes: 2 })

  // Replay: the engine of `burrow replay`, with its default batch size from the environment.
  const replays: { ms: number; cpu: string; mib: number | undefined; peakRss: number }[] = []
  for (let r = 1; r <= REPLAYS; r++) {
    await untilIdle(burrow.pid, { nodes: 2 })
    const session = process.env.PROFILE && r === REPLAYS ? new Session() : undefined
    if (session) {
      session.connect()
      await session.post('Profiler.enable')
      await session.post('Profiler.start')
    }
    const mib = REPLAY_BATCH_MIB.length > 0 ? REPLAY_BATCH_MIB[(r - 1) % REPLAY_BATCH_MIB.length] : undefined
    let peakRss = 0
    const rss = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50)
    const c2 = cpuNow()
    const t2 = performance.now()
    const replayed = await replay({
      nc,
      ch,
      log: createLogger('warn'),
      ...(process.env.REPLAY_BATCH_SIZE ? { batchSize: Number(process.env.REPLAY_BATCH_SIZE) } : {}),
      ...(mib === undefined ? {} : { batchBytes: mib * 2 ** 20 }),
    })
    const replayMs = performance.now() - t2
    const c3 = cpuNow()
    clearInterval(rss)
    if (session) {
      const { profile } = await session.post('Profiler.stop')
      writeFileSync('replay.cpuprofile', JSON.stringify(profile))
      session.disconnect()
    }
    if (!replayed.swapped || replayed.events !== total) {
      throw new Error(`replay: swapped ${replayed.swapped}, ${replayed.events}/${total} events`)
    }
    await untilQueryable(total, 'logged')
    replays.push({ ms: replayMs, cpu: cpuLine(c2, c3, total), mib, peakRss })
  }
  const imported = IMPORT ? await importRun() : undefined

  const direct = rate(total, directMs)
  const line = (what: string, ms: number) =>
    `${what}${String(rate(total, ms)).padStart(8)} events/s  (${(ms / 1000).toFixed(2)} s)  / direct ${(rate(total, ms) / direct).toFixed(2)}`
  console.log(
    `events: ${total} in chunks of ${CHUNK}, ${DISTINCT} distinct ids; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)} at the end`,
  )
  console.log(
    `direct ClickHouse insert (TSV, 10 chunks an INSERT): ${direct} events/s  (${(directMs / 1000).toFixed(2)} s)`,
  )
  console.log(
    `  without the sessions view:                         ${rate(total, bareMs)} events/s  (${(bareMs / 1000).toFixed(2)} s)`,
  )
  console.log(line('live projector, log -> queryable:     ', liveMs))
  console.log(`  ${cpuLine(c0, c1, total)}`)
  for (const r of replays) {
    const batches = r.mib === undefined ? '' : ` (batches ≤ ${r.mib} MiB)`
    console.log(line('burrow replay, log -> swapped in:     ', r.ms) + batches)
    console.log(`  ${r.cpu} (the replay runs in the bench process)`)
    console.log(`  the bench process's peak RSS during the replay: ${Math.round(r.peakRss / 2 ** 20)} MiB`)
  }
  if (imported) {
    console.log(line('burrow import, file -> queryable:     ', imported.ms))
    console.log(
      `  the command itself ${(imported.ackedMs / 1000).toFixed(2)} s (${rate(total, imported.ackedMs)} events/s acknowledged)`,
    )
    console.log(
      `  ${imported.cpu} plus the import command's ${((imported.commandCpu / total) * 1e6).toFixed(1)} (sampled)`,
    )
  }
} finally {
  await nc.close()
  await ch.close()
  await burrow.cleanup()
  rmSync(dir, { recursive: true, force: true })
}

/** The same events under new uuids as a JSON-lines file, through `burrow import`. */
async function importRun(): Promise<{ ms: number; ackedMs: number; cpu: string; commandCpu: number }> {
  const file = join(dir, 'history.jsonl')
  writeFileSync(
    file,
    benchChunks(CHUNKS, CHUNK, DISTINCT, () => 'imported')
      .flat()
      .map((e) => JSON.stringify(e))
      .join('\n') + '\n',
  )
  await untilIdle(burrow.pid, { nodes: 2 })
  const c4 = cpuNow()
  const t4 = performance.now()
  const cli = spawn(
    process.execPath,
    [
      // IMPORT_NODE_ARGS: node flags for the import command, e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`
      ...(process.env.IMPORT_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      join(import.meta.dirname, '..', 'bin', 'burrow.js'),
      'import',
      file,
      '--url',
      burrow.url,
      '--token',
      burrow.credentials.project_api_key,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  // the command's CPU, read until it exits (its /proc entry goes with it)
  let importCpu = 0
  const sampler = setInterval(() => (importCpu = procStats(cli.pid!)?.cpuSeconds ?? importCpu), 100)
  let summary = ''
  cli.stdout.on('data', (b: Buffer) => (summary += b.toString()))
  const code = await new Promise<number | null>((r) => cli.once('exit', r))
  clearInterval(sampler)
  if (code !== 0) throw new Error(`burrow import exited with ${code}: ${summary}`)
  const importAckedMs = performance.now() - t4
  const importMs = (await untilQueryable(total, 'imported')) - t4
  const c5 = cpuNow()

  return { ms: importMs, ackedMs: importAckedMs, cpu: cpuLine(c4, c5, total), commandCpu: importCpu }
}

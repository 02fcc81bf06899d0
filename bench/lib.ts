// Shared pieces of the benchmarks: Burrow as its own process on a throw-away embedded stack (so the
// load generator does not share its event loop), and latency statistics.
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Credentials } from '../src/accounts/bootstrap.ts'
import { freePort } from '../src/stack/ports.ts'

export interface BenchBurrow {
  url: string
  natsUrl: string
  clickhouseUrl: string
  database: string
  credentials: Credentials
  cleanup(): Promise<void>
}

export async function benchBurrow(env: Record<string, string> = {}): Promise<BenchBurrow> {
  const dir = mkdtempSync(join(tmpdir(), 'burrow-bench-'))
  const port = await freePort()
  const child = spawn(process.execPath, [join(import.meta.dirname, '..', 'bin', 'burrow.js'), 'start'], {
    env: { ...process.env, DATA_DIR: dir, PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      if (out.includes('Burrow listening on')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`burrow exited with ${code}: ${out}`)))
  })
  const stack = JSON.parse(readFileSync(join(dir, 'stack.json'), 'utf8'))
  return {
    url: `http://127.0.0.1:${port}`,
    natsUrl: process.env.NATS_URL ?? stack.nats_url,
    clickhouseUrl: process.env.CLICKHOUSE_URL ?? stack.clickhouse_url,
    database: env.CLICKHOUSE_DATABASE ?? process.env.CLICKHOUSE_DATABASE ?? 'burrow',
    credentials: JSON.parse(readFileSync(join(dir, 'local-credentials.json'), 'utf8')),
    async cleanup() {
      child.kill('SIGTERM')
      await exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

export function latencyLine(ms: number[]): string {
  const s = [...ms].sort((a, b) => a - b)
  return `p50 ${percentile(s, 50).toFixed(2)} ms  p99 ${percentile(s, 99).toFixed(2)} ms`
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

/** The properties of the i-th event of the ingestion benches: a web event, a person update every 50th. */
export function benchProperties(i: number): Record<string, unknown> {
  return {
    $current_url: `https://example.com/p/${i % 100}`,
    $browser: 'Chrome',
    $session_id: `s-${i % 777}`,
    $lib: 'bench',
    n: i,
    nested: { a: i % 3, b: 'x' },
    ...(i % 50 === 0 ? { $set: { plan: i % 2 ? 'pro' : 'free' } } : {}),
  }
}

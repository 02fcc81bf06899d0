// Runs the real `burrow` CLI as a child process, the way a user does.
import { type ChildProcess, spawn } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../src/stack/ports.ts'
import { stack, tempDir } from './index.ts'

export const BURROW_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'burrow.js')

export interface CliProcess {
  child: ChildProcess
  output(): string
  /** Resolves when the output matches, rejects when the process exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>
  exited: Promise<number | null>
}

export function spawnBurrow(args: string[], env: Record<string, string>): CliProcess {
  const child = spawn(process.execPath, [BURROW_BIN, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  const listeners = new Set<() => void>()
  const onData = (b: Buffer) => {
    out += b.toString()
    for (const l of listeners) l()
  }
  child.stdout!.on('data', onData)
  child.stderr!.on('data', onData)
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    child,
    output: () => out,
    exited,
    waitFor(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern)
          if (m) {
            cleanup()
            resolve(m)
          }
        }
        const timer = setTimeout(() => {
          cleanup()
          reject(new Error(`timed out waiting for ${pattern}; output:\n${out}`))
        }, timeoutMs)
        const cleanup = () => {
          clearTimeout(timer)
          listeners.delete(check)
        }
        listeners.add(check)
        exited.then((code) => {
          if (listeners.has(check)) {
            cleanup()
            reject(new Error(`burrow exited (${code}) before ${pattern}; output:\n${out}`))
          }
        })
        check()
      })
    },
  }
}

/** Runs a CLI command to completion. */
export async function runBurrow(args: string[], env: Record<string, string>) {
  const p = spawnBurrow(args, env)
  const code = await p.exited
  return { code, output: p.output() }
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * The environment of a `burrow` process on this vitest project's shared servers, with a data dir
 * and a port of its own (`DATA_DIR`, `PORT`), plus `extra`.
 */
export async function sharedServersEnv(
  extra: Record<string, string> = {},
): Promise<Record<string, string> & { DATA_DIR: string; PORT: string }> {
  const s = stack()
  return {
    NATS_URL: s.natsUrl,
    CLICKHOUSE_URL: s.clickhouseUrl,
    CLICKHOUSE_DATABASE: s.database,
    DATA_DIR: tempDir(),
    PORT: String(await freePort()),
    // Tests check the exit code of a clean shutdown, not its speed: a loaded CI machine may need
    // more than the default budget before the forced exit (which exits 1).
    SHUTDOWN_TIMEOUT_MS: '120000',
    ...extra,
  }
}

// Starts the chdb test server (ClickHouse 26.x over HTTP, see README.md) as a child process.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ensureChdb } from './install.ts'

export { CHDB_LIB_VERSION, CHDB_VERSION, chdbDir, ensureChdb } from './install.ts'

export interface ChdbServerOptions {
  /** chdb's data directory (databases persist here across restarts); created if missing. */
  dataDir: string
  /** 0 (the default) picks a free port. */
  port?: number
  /** How long to wait for the server to answer (default 60 s). */
  timeoutMs?: number
  /** Server time zone (default UTC, like the 18.16 test server's config). */
  timezone?: string
  /** Concurrent queries (pooled chdb connections); default 16. */
  poolSize?: number
}

export interface ChdbServer {
  url: string
  /** ClickHouse's version(), e.g. 26.7.2.1 */
  version: string
  pid: number
  /** The server's stderr goes here. */
  logFile: string
  stop(): Promise<void>
}

const here = dirname(fileURLToPath(import.meta.url))
export const SERVER_SCRIPT = join(here, 'server.ts')

/** tsx's ESM loader as a file URL, so the child needs no particular working directory. */
function tsxLoader(): string {
  const require = createRequire(import.meta.url)
  const pkg = require.resolve('tsx/package.json')
  return pathToFileURL(join(dirname(pkg), 'dist', 'loader.mjs')).href
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', () => r()))
}

export async function startChdbServer(opts: ChdbServerOptions): Promise<ChdbServer> {
  const chdb = await ensureChdb()
  const dataDir = resolve(opts.dataDir)
  mkdirSync(dataDir, { recursive: true })
  const logFile = join(dataDir, 'chdb-server.log')
  const logFd = openSync(logFile, 'a')
  const poolSize = opts.poolSize ?? 16
  const child = spawn(
    process.execPath,
    [
      '--import',
      tsxLoader(),
      SERVER_SCRIPT,
      '--port',
      String(opts.port ?? 0),
      '--data-dir',
      dataDir,
      '--chdb-dir',
      chdb,
      '--timezone',
      opts.timezone ?? 'UTC',
      '--watch-stdin',
    ],
    {
      stdio: ['pipe', 'pipe', logFd],
      env: {
        ...process.env,
        BURROW_CHDB_POOL_SIZE: String(poolSize),
        // libuv reads this once, at the first use of its pool: each running query holds a worker.
        UV_THREADPOOL_SIZE: String(poolSize + 4),
      },
    },
  )
  closeSync(logFd)
  const tail = () => {
    try {
      return readFileSync(logFile, 'utf8').slice(-4000)
    } catch {
      return ''
    }
  }

  const ready = await new Promise<{ url: string; version: string; pid: number }>((resolveReady, reject) => {
    let buf = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`chdb server did not start within ${opts.timeoutMs ?? 60_000} ms\n${tail()}`))
    }, opts.timeoutMs ?? 60_000)
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer)
      reject(new Error(`chdb server exited (${signal ?? code}) before it was ready\n${tail()}`))
    }
    child.once('exit', onExit)
    child.once('error', (err) => {
      clearTimeout(timer)
      reject(err)
    })
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString()
      const nl = buf.indexOf('\n')
      if (nl < 0) return
      clearTimeout(timer)
      child.off('exit', onExit)
      try {
        resolveReady(JSON.parse(buf.slice(0, nl)))
      } catch (err) {
        child.kill('SIGKILL')
        reject(new Error(`chdb server printed ${buf.slice(0, nl)}`, { cause: err }))
      }
    })
  })
  // Keep draining stdout so the child never blocks on a full pipe.
  child.stdout!.resume()

  return {
    url: ready.url,
    version: ready.version,
    pid: child.pid!,
    logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const done = exited(child)
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
      await done
      clearTimeout(timer)
      child.stdin?.destroy()
    },
  }
}

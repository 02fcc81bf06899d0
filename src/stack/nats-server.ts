import { mkdirSync } from 'node:fs'
import { connect as netConnect } from 'node:net'
import { join, resolve } from 'node:path'
import { type ManagedProcess, startProcess, stopStale, untilServing } from './process.ts'

export interface NatsServerOptions {
  bin: string
  dataDir: string
  port: number
  timeoutMs?: number
  /**
   * Joins a JetStream cluster: this server's route port, the route ports of all members (its own
   * included; nats-server ignores a route to itself), and a server name unique in the cluster.
   */
  cluster?: { name: string; serverName: string; port: number; routes: number[] }
}

/**
 * The embedded nats-server's soft memory limit (Go's GOMEMLIMIT). At 10K events/s its RSS peaked at
 * 101-106 MiB with 96MiB against 108-133 MiB with 128MiB, at the same CPU (docs/performance.md).
 */
export const NATS_GOMEMLIMIT = '96MiB'

function tcpAnswers(port: number): Promise<boolean> {
  return new Promise((resolveCheck) => {
    const sock = netConnect({ host: '127.0.0.1', port })
    sock.setTimeout(500)
    // NATS greets every client with an INFO line: seeing it means the server is serving.
    sock.once('data', (buf) => {
      sock.destroy()
      resolveCheck(buf.toString().startsWith('INFO'))
    })
    sock.once('error', () => resolveCheck(false))
    sock.once('timeout', () => {
      sock.destroy()
      resolveCheck(false)
    })
  })
}

function clusterArgs(opts: NatsServerOptions): string[] {
  const c = opts.cluster
  if (!c) return []
  return [
    '--server_name',
    c.serverName,
    '--cluster_name',
    c.name,
    '--cluster',
    `nats://127.0.0.1:${c.port}`,
    '--routes',
    c.routes.map((p) => `nats://127.0.0.1:${p}`).join(','),
  ]
}

export async function startNatsServer(opts: NatsServerOptions): Promise<ManagedProcess & { url: string }> {
  const dir = resolve(opts.dataDir)
  mkdirSync(join(dir, 'jetstream'), { recursive: true })
  const pidFile = join(dir, 'server.pid')
  await stopStale(pidFile, 'nats-server')
  const proc = startProcess({
    name: 'nats-server',
    bin: opts.bin,
    args: [
      '-a',
      '127.0.0.1',
      '-p',
      String(opts.port),
      '-js',
      '-sd',
      join(dir, 'jetstream'),
      ...clusterArgs(opts),
    ],
    logFile: join(dir, 'server.log'),
    pidFile,
    // Go's collector otherwise lets the heap reach twice what is live before collecting; under a
    // flood that was ~300 MB of a local stack meant to fit in 1 GiB. A soft limit: above it the
    // server collects more often, it does not fail (GOMEMLIMIT in the environment wins).
    env: { GOMEMLIMIT: process.env.GOMEMLIMIT ?? NATS_GOMEMLIMIT },
  })
  try {
    await untilServing(proc.child, () => tcpAnswers(opts.port), opts.timeoutMs ?? 30_000)
  } catch (err) {
    proc.kill()
    throw new Error(
      `nats-server did not answer on port ${opts.port} (${(err as Error).message}); see ${join(dir, 'server.log')}`,
      { cause: err },
    )
  }
  return { ...proc, url: `nats://127.0.0.1:${opts.port}` }
}

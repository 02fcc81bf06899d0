import { mkdirSync } from 'node:fs'
import { connect as netConnect } from 'node:net'
import { join, resolve } from 'node:path'
import { type ManagedProcess, startProcess, stopStale, waitFor } from './process.ts'

export interface NatsServerOptions {
  bin: string
  dataDir: string
  port: number
  timeoutMs?: number
}

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

export async function startNatsServer(opts: NatsServerOptions): Promise<ManagedProcess & { url: string }> {
  const dir = resolve(opts.dataDir)
  mkdirSync(join(dir, 'jetstream'), { recursive: true })
  const pidFile = join(dir, 'server.pid')
  await stopStale(pidFile, 'nats-server')
  const proc = startProcess({
    name: 'nats-server',
    bin: opts.bin,
    args: ['-a', '127.0.0.1', '-p', String(opts.port), '-js', '-sd', join(dir, 'jetstream')],
    logFile: join(dir, 'server.log'),
    pidFile,
  })
  let exitCode: number | null = null
  proc.child.once('exit', (code) => {
    exitCode = code ?? -1
  })
  try {
    await waitFor(async () => {
      if (exitCode !== null) throw new Error(`nats-server exited with ${exitCode}`)
      return tcpAnswers(opts.port)
    }, opts.timeoutMs ?? 30_000)
  } catch (err) {
    proc.kill()
    throw new Error(`nats-server did not answer on port ${opts.port}; see ${join(dir, 'server.log')}`, {
      cause: err,
    })
  }
  return { ...proc, url: `nats://127.0.0.1:${opts.port}` }
}

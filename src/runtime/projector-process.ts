import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import type { MetricObjectWithValues, MetricValue } from 'prom-client'
import type { Logger } from '../observability/logger.ts'
import { registry } from '../observability/metrics.ts'

type Metrics = MetricObjectWithValues<MetricValue<string>>[]
const METRICS_TIMEOUT_MS = 2000

// The projectors of `burrow start` (role all) in a child process: capture, flags and the API keep one
// core, projection gets the other (a Node process runs JavaScript on one core). The child is
// `burrow start --role projector` on the servers of the parent, so it is the same code a deployment
// runs per role. It is supervised here:
// - it runs in a process group of its own, so a Ctrl-C in the terminal reaches only the parent, which
//   stops it as a named step of its shutdown (after HTTP, before the connections and the embedded
//   servers it needs);
// - it exits at once when the parent dies (the IPC channel closes), so a killed Burrow never leaves
//   a projector behind to race the next one's;
// - if it dies on its own it is started again after a pause.

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'burrow.js')
const RESTART_MS = 1000

/** Set in the child: its parent supervises it (see exitWithParent). */
export const SUPERVISED_ENV = 'BURROW_SUPERVISED'

export interface ProjectorProcessOptions {
  natsUrl: string
  clickhouseUrl: string
  log: Logger
  /** how long `stop` waits for a clean exit before SIGKILL */
  stopTimeoutMs: number
  /** extra environment (tests) */
  env?: Record<string, string>
}

export class ProjectorProcess {
  private child?: ChildProcess
  private stopping = false
  private isReady = false
  private metricRequests = new Map<number, (m: Metrics) => void>()
  private nextRequest = 0

  constructor(private readonly o: ProjectorProcessOptions) {}

  /** The child's pid, while it runs. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): void {
    this.isReady = false
    // The parent's node flags too (as fork passes them): memory limits and profiling flags
    // (`--cpu-prof`) apply to the projectors as well.
    const child = spawn(process.execPath, [...process.execArgv, BIN, 'start', '--role', 'projector'], {
      env: {
        ...process.env,
        ...this.o.env,
        ROLE: 'projector',
        NATS_URL: this.o.natsUrl,
        CLICKHOUSE_URL: this.o.clickhouseUrl,
        // the projector's own /_health and /metrics, on a free port
        PORT: '0',
        [SUPERVISED_ENV]: '1',
      },
      detached: true,
      stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
    })
    this.child = child
    this.o.log.info({ pid: child.pid }, 'projector process started')
    // Its JSON log lines join ours; its console banner (meant for a terminal) does not.
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('{')) process.stdout.write(`${line}\n`)
    })
    child.on('message', (raw: unknown) => {
      const m = raw as { type?: string; id?: number; metrics?: Metrics }
      if (m?.type === 'metrics' && typeof m.id === 'number') {
        this.metricRequests.get(m.id)?.(m.metrics ?? [])
        this.metricRequests.delete(m.id)
      }
      if (m?.type !== 'ready') return
      this.isReady = true
    })
    child.once('exit', (code, signal) => {
      this.child = undefined
      if (this.stopping) return
      this.o.log.error({ code, signal }, 'projector process exited; starting it again')
      setTimeout(() => {
        if (!this.stopping) this.start()
      }, RESTART_MS).unref()
    })
  }

  /** The child's metrics (prom-client JSON) for the parent's /metrics; none when it does not answer. */
  metrics(): Promise<Metrics> {
    const child = this.child
    if (!child?.connected || !this.isReady) return Promise.resolve([])
    const id = ++this.nextRequest
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.metricRequests.delete(id)
        resolve([])
      }, METRICS_TIMEOUT_MS)
      this.metricRequests.set(id, (m) => {
        clearTimeout(t)
        resolve(m)
      })
      child.send({ type: 'metrics', id }, (err) => {
        if (err) this.metricRequests.get(id)?.([])
      })
    })
  }

  /** SIGTERM, wait for the child's clean shutdown; SIGKILL after stopTimeoutMs. */
  async stop(): Promise<void> {
    this.stopping = true
    const child = this.child
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    if (!this.isReady) {
      // Still starting (a tsx boot, connections, migrations: tens of seconds on a loaded machine):
      // it has projected nothing a clean stop would finish, and waiting for its start-up would
      // spend the parent's whole shutdown budget. The projectors are crash-safe either way.
      child.kill('SIGKILL')
      await exited
      return
    }
    child.kill('SIGTERM')
    const timer = setTimeout(() => {
      this.o.log.error('projector process did not stop in time: killed')
      child.kill('SIGKILL')
    }, this.o.stopTimeoutMs)
    await exited
    clearTimeout(timer)
  }
}

/**
 * In a supervised child: tells the parent it runs, and exits as soon as the parent is gone (a
 * SIGKILLed parent cannot stop it; the projectors are crash-safe, so exiting at once is safe).
 */
export function reportToSupervisor(log: Logger): void {
  if (process.env[SUPERVISED_ENV] !== '1' || !process.send) return
  process.send({ type: 'ready' })
  process.on('message', (raw: unknown) => {
    const m = raw as { type?: string; id?: number }
    if (m?.type !== 'metrics') return
    void registry.getMetricsAsJSON().then((metrics) => process.send?.({ type: 'metrics', id: m.id, metrics }))
  })
  process.once('disconnect', () => {
    log.warn('supervising process gone: exiting')
    process.exit(1)
  })
}

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

/**
 * V8 flags of the projector process. V8 lets the old generation grow to a multiple of what is live
 * before a full collection, and that multiple follows the heap's hard limit: 4 when the limit is
 * 2 GiB or more (Node's default here is ~4 GiB), ~1.6 at 1 GiB. The projector makes ~20 MB/s of
 * short-lived old-generation garbage at 10K events/s (a batch's rows outlive two young-generation
 * passes) over ~40–60 MB live, so by default it swung between ~45 and ~190 MB of heap (RSS 280–500
 * MiB); with the 1 GiB limit 40–70 MB (RSS 170–215 MiB), for 13–23 % more CPU (docs/performance.md,
 * "Compiled JavaScript and the projector's heap limit"). The limit stays ~15 times what the projector
 * holds live at 10K events/s; a projector run on its own (`--role projector`) keeps Node's defaults.
 */
export const PROJECTOR_NODE_FLAGS = ['--max-old-space-size=1024']

/** The name of a node flag (`--max-old-space-size=1024` → `--max-old-space-size`; `_` read as `-`). */
const flagName = (flag: string) => flag.split('=')[0]!.replaceAll('_', '-')

/**
 * The node flags of the projector process: the parent's own (as fork passes them: profiling flags such
 * as `--cpu-prof` apply to the projectors too), after PROJECTOR_NODE_FLAGS less those the parent was
 * given itself, on its command line or in NODE_OPTIONS (the user's choice wins).
 */
export function projectorNodeFlags(execArgv: readonly string[], nodeOptions = ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/).filter(Boolean)].map(flagName))
  return [...PROJECTOR_NODE_FLAGS.filter((f) => !given.has(flagName(f))), ...execArgv]
}

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
    const flags = projectorNodeFlags(process.execArgv, process.env.NODE_OPTIONS)
    const child = spawn(process.execPath, [...flags, BIN, 'start', '--role', 'projector'], {
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

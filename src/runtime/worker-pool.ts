import { createRequire } from 'node:module'
import { setPriority } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type ResourceLimits, Worker } from 'node:worker_threads'
import { FairQueue, type FairQueueLimits } from './fair-queue.ts'
import { threadCpuMs } from './thread-cpu.ts'

// Worker threads shared by every project for work that must not run on the event loop (HogQL
// compiles, user-written regexes). What each pool adds to a plain set of workers:
// - fairness: jobs wait in one FIFO per project and projects take turns (fair-queue.ts), with a cap
//   on one project's running and waiting jobs, so a burst queues behind itself;
// - a time budget per job, counted in the worker thread's own CPU time where Linux tells it (see
//   timeLeft): past it the worker is terminated mid-job and replaced, and the job refused;
// - optional heap limits per worker: a worker that runs out of memory dies alone and is replaced,
//   the process and every other request stay up.
//
// The protocol: the worker posts `{ ready: true, tid }` once it can take jobs (tid: its kernel
// thread id, for the CPU budget), then answers each `{ id, ... }` it is sent with `{ id, ok }` or
// `{ id, ...failure }`; the pool's `rebuild` turns a failure back into an error.

/** How many times its budget a job may take on the wall clock while its CPU time is within it. */
export const WALL_BUDGETS = 4

/**
 * How much longer (ms) a job that has run `wallMs` may go on before it is refused, given the CPU
 * time its worker used meanwhile (undefined: not known, so the wall clock counts); 0 refuses it now.
 * The CPU time counts against the budget; the wall clock only past WALL_BUDGETS budgets, so a job
 * starved of a core is not refused for the wait but nothing holds a worker forever.
 */
export function timeLeft(budgetMs: number, wallMs: number, cpuUsedMs: number | undefined): number {
  const wallLeft = budgetMs * (cpuUsedMs === undefined ? 1 : WALL_BUDGETS) - wallMs
  if (wallLeft <= 0) return 0
  if (cpuUsedMs === undefined) return wallLeft
  const cpuLeft = budgetMs - cpuUsedMs
  // the CPU time cannot run out sooner than the time left: look again then
  return cpuLeft <= 0 ? 0 : Math.min(cpuLeft, wallLeft)
}

/**
 * A worker module's URL: the compiled JavaScript beside `tsUrl` when this module runs compiled
 * (bin/compile.js), else the TypeScript source through tsx (vitest, `npx tsx`).
 */
export function workerModuleUrl(tsUrl: URL): URL {
  if (import.meta.url.endsWith('.js')) return new URL(tsUrl.href.replace(/\.ts$/, '.js'))
  const tsxApi = join(
    dirname(createRequire(import.meta.url).resolve('tsx/package.json')),
    'dist/esm/api/index.mjs',
  )
  const boot = `import { register } from ${JSON.stringify(pathToFileURL(tsxApi).href)}; register(); await import(${JSON.stringify(tsUrl.href)})`
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`)
}

/**
 * The nice value of every pool worker's thread (Linux schedules threads one by one: setpriority on a
 * thread id applies to that thread). A worker busy with a project's costly job then takes a core
 * only when the event loop, which answers every project, does not need it: on 2 cores, two workers
 * at full load left the event loop a third of a core, and /_health answers hundreds of ms late.
 */
export const WORKER_NICE = 10

function lowerPriority(tid: number | undefined): void {
  if (tid === undefined) return
  try {
    setPriority(tid, WORKER_NICE)
  } catch {
    // not permitted or not Linux: the worker keeps the process's priority
  }
}

export interface WorkerPoolOptions<A> {
  /** the worker module (workerModuleUrl) */
  url: URL
  size: number
  /** each job's time budget, ms */
  budgetMs: number
  fairness: FairQueueLimits
  /** heap limits of each worker; past them the worker dies and is replaced */
  resourceLimits?: ResourceLimits
  /** the error a failure answer stands for */
  rebuild(answer: A): Error
  /** the error a job past its budget is refused with */
  overBudget(budgetMs: number): Error
  /** the error a job refused for its project's full queue gets */
  queueFull(): Error
}

interface Pending {
  message: { id: number }
  resolve(value: unknown): void
  reject(err: unknown): void
}

interface Slot {
  worker: Worker
  ready: boolean
  tid?: number
  current?: { key: number; pending: Pending; timer: NodeJS.Timeout; startedMs: number; cpuAtStartMs?: number }
}

type Answer = { ready: true; tid?: number } | { id: number; ok: unknown } | { id: number }

/** Workers started with the first job (each holds its own copy of what it loads), shared fairly. */
export class WorkerPool<A extends { id: number }> {
  private readonly slots: Slot[] = []
  private readonly queue: FairQueue<number, Pending>
  private nextId = 1
  private closed = false

  constructor(private readonly opts: WorkerPoolOptions<A>) {
    this.queue = new FairQueue(opts.fairness)
  }

  /** Runs `job` for project `key` (its `id` is set here); resolves with the worker's `ok`. */
  run<T>(key: number, job: object): Promise<T> {
    if (this.closed) return Promise.reject(new Error('the worker pool is closed'))
    while (this.slots.length < this.opts.size) this.slots.push(this.spawn())
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { message: { ...job, id: this.nextId++ }, resolve: resolve as never, reject }
      if (!this.queue.push(key, pending)) return reject(this.opts.queueFull())
      this.dispatch()
    })
  }

  async close(): Promise<void> {
    this.closed = true
    for (const p of this.queue.drain()) p.reject(new Error('the worker pool is closed'))
    await Promise.all(this.slots.map((s) => s.worker.terminate()))
  }

  private spawn(): Slot {
    const slot: Slot = {
      worker: new Worker(this.opts.url, { resourceLimits: this.opts.resourceLimits }),
      ready: false,
    }
    slot.worker.unref()
    slot.worker.on('message', (m: Answer) => this.answer(slot, m))
    slot.worker.on('error', (err) => this.lost(slot, err))
    slot.worker.on('exit', () => this.lost(slot, new Error('worker exited')))
    return slot
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.current) continue
      const next = this.queue.take()
      if (!next) return
      const { key, item: pending } = next
      const timer = setTimeout(() => this.checkBudget(slot), this.opts.budgetMs)
      const cpuAtStartMs = slot.tid === undefined ? undefined : threadCpuMs(slot.tid)
      slot.current = { key, pending, timer, startedMs: performance.now(), cpuAtStartMs }
      slot.worker.postMessage(pending.message)
    }
  }

  private finish(slot: Slot): Slot['current'] {
    const current = slot.current
    if (!current) return undefined
    clearTimeout(current.timer)
    slot.current = undefined
    this.queue.done(current.key)
    return current
  }

  private answer(slot: Slot, m: Answer): void {
    if ('ready' in m) {
      slot.ready = true
      slot.tid = m.tid
      lowerPriority(m.tid)
      return this.dispatch()
    }
    if (slot.current?.pending.message.id !== m.id) return
    const current = this.finish(slot)!
    if ('ok' in m) current.pending.resolve(m.ok)
    else current.pending.reject(this.opts.rebuild(m as A))
    this.dispatch()
  }

  /** The job's time is up unless its CPU time says otherwise: its worker is stopped mid-job and replaced. */
  private checkBudget(slot: Slot): void {
    const current = slot.current
    if (!current) return
    const cpuNow = slot.tid === undefined ? undefined : threadCpuMs(slot.tid)
    const cpuUsed =
      cpuNow === undefined || current.cpuAtStartMs === undefined ? undefined : cpuNow - current.cpuAtStartMs
    const left = timeLeft(this.opts.budgetMs, performance.now() - current.startedMs, cpuUsed)
    if (left > 0) {
      current.timer = setTimeout(() => this.checkBudget(slot), left)
      return
    }
    this.finish(slot)
    current.pending.reject(this.opts.overBudget(this.opts.budgetMs))
    this.replace(slot)
  }

  private lost(slot: Slot, err: Error): void {
    if (this.closed || !this.slots.includes(slot)) return
    this.finish(slot)?.pending.reject(err)
    this.replace(slot)
  }

  private replace(slot: Slot): void {
    const i = this.slots.indexOf(slot)
    if (i < 0) return
    slot.worker.removeAllListeners()
    void slot.worker.terminate()
    if (this.closed) return
    this.slots[i] = this.spawn()
    this.dispatch()
  }
}

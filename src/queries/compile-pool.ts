import type { Capabilities } from '../hogql/capabilities.ts'
import type { HogQLCatalog } from '../hogql/index.ts'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { Project } from '../accounts/documents.ts'
import { HogQLError } from '../hogql/errors.ts'
import { materializedProperties } from '../hogql/materialized.ts'
import { ZodError } from 'zod'
import { AppError } from '../http/errors.ts'
import { threadCpuMs } from '../runtime/thread-cpu.ts'
import type { CompileAnswer, CompileFailure, CompileJob } from './compile-worker.ts'
import { QueryTooComplex } from './hogql-bounds.ts'
import type { KindCompiled } from './kinds.ts'
import type { DataFacts } from './person-overrides.ts'

// Worker threads that parse and compile queries. The grammar's parser runs synchronously and
// some texts take seconds (a 73 KB query: 8 s), which on the main thread would stall /_health and
// every other request; here it stalls only its worker, and a job over its time budget has its
// worker terminated (and replaced) and the query refused. The budget is the worker thread's own CPU
// time where Linux's /proc tells it (see compileTimeLeft), so a busy machine does not refuse a
// query that is merely waiting for a core. The compiled query comes back by
// structured clone: a kind's compiled plan must be plain data (objects, arrays, Dates), which every
// kind's is today; a function or class instance in it would not survive the trip.

interface Pending {
  job: CompileJob
  budgetMs: number
  resolve(value: unknown): void
  reject(err: unknown): void
}

interface Slot {
  worker: Worker
  ready: boolean
  /** the worker's kernel thread id, when it could tell */
  tid?: number
  current?: { pending: Pending; timer: NodeJS.Timeout; startedMs: number; cpuAtStartMs?: number }
}

/** How many times its budget a compile may take on the wall clock while its CPU time is within it. */
export const WALL_BUDGETS = 4

/**
 * How much longer (ms) a compile that has run `wallMs` may go on before it is refused, given the CPU
 * time its worker used meanwhile (undefined: not known, so the wall clock counts); 0 refuses it now.
 * The CPU time counts against the budget; the wall clock only past WALL_BUDGETS budgets, so a compile
 * starved of a core is not refused for the wait but nothing holds a worker forever.
 */
export function compileTimeLeft(budgetMs: number, wallMs: number, cpuUsedMs: number | undefined): number {
  const wallLeft = budgetMs * (cpuUsedMs === undefined ? 1 : WALL_BUDGETS) - wallMs
  if (wallLeft <= 0) return 0
  if (cpuUsedMs === undefined) return wallLeft
  const cpuLeft = budgetMs - cpuUsedMs
  // the CPU time cannot run out sooner than the time left: look again then
  return cpuLeft <= 0 ? 0 : Math.min(cpuLeft, wallLeft)
}

/**
 * The worker module: compiled JavaScript beside this one when this module is (bin/compile.js), else
 * the TypeScript source through tsx (vitest, `npx tsx`).
 */
function workerUrl(): URL {
  if (import.meta.url.endsWith('.js')) return new URL('./compile-worker.js', import.meta.url)
  const tsxApi = join(
    dirname(createRequire(import.meta.url).resolve('tsx/package.json')),
    'dist/esm/api/index.mjs',
  )
  const entry = new URL('./compile-worker.ts', import.meta.url).href
  const boot = `import { register } from ${JSON.stringify(pathToFileURL(tsxApi).href)}; register(); await import(${JSON.stringify(entry)})`
  return new URL(`data:text/javascript,${encodeURIComponent(boot)}`)
}

/** The compile's error as the class it was thrown as, so it maps to the same HTTP answer. */
function rebuild(f: CompileFailure): Error {
  if ('hogql' in f)
    return new HogQLError(f.hogql.code, f.hogql.message, { start: f.hogql.start, end: f.hogql.end })
  if ('app' in f) {
    const { status, type, code, detail, attr, extra } = f.app
    return new AppError(status, type, code, detail, attr, {}, extra)
  }
  if ('zod' in f) return new ZodError(f.zod)
  return new Error(`compiling the query failed: ${f.failed}`)
}

export class CompilePool {
  private readonly slots: Slot[] = []
  private readonly queue: Pending[] = []
  private nextId = 1
  private closed = false
  private readonly url = workerUrl()

  // Workers start with the first compile, not with the process: each holds its own copy of the
  // compiler (~57 MiB RSS measured), which a process that only ingests never needs. The first
  // query waits for them to load (its time budget starts when a worker takes the job).
  constructor(
    private readonly size: number,
    private readonly budgetMs: number,
  ) {}

  /** Compiles `query` in a worker within the time budget; throws what the compile threw. */
  compile(
    query: { kind: string },
    project: Project,
    server: Capabilities,
    facts?: DataFacts,
    catalog?: HogQLCatalog,
  ): Promise<KindCompiled> {
    if (this.closed) return Promise.reject(new Error('the compile pool is closed'))
    const job: CompileJob = {
      id: this.nextId++,
      query,
      project,
      server,
      facts,
      materialized: [...materializedProperties()],
      catalog,
    }
    while (this.slots.length < this.size) this.slots.push(this.spawn())
    return new Promise((resolve, reject) => {
      this.queue.push({ job, budgetMs: this.budgetMs, resolve: resolve as (v: unknown) => void, reject })
      this.dispatch()
    })
  }

  async close(): Promise<void> {
    this.closed = true
    for (const p of this.queue.splice(0)) p.reject(new Error('the compile pool is closed'))
    await Promise.all(this.slots.map((s) => s.worker.terminate()))
  }

  private spawn(): Slot {
    const slot: Slot = { worker: new Worker(this.url), ready: false }
    slot.worker.unref()
    slot.worker.on('message', (m: CompileAnswer) => this.answer(slot, m))
    slot.worker.on('error', (err) => this.lost(slot, err))
    slot.worker.on('exit', () => this.lost(slot, new Error('compile worker exited')))
    return slot
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.current || this.queue.length === 0) continue
      const pending = this.queue.shift()!
      const timer = setTimeout(() => this.overBudget(slot), pending.budgetMs)
      const cpuAtStartMs = slot.tid === undefined ? undefined : threadCpuMs(slot.tid)
      slot.current = { pending, timer, startedMs: performance.now(), cpuAtStartMs }
      slot.worker.postMessage(pending.job)
    }
  }

  private answer(slot: Slot, m: CompileAnswer): void {
    if ('ready' in m) {
      slot.ready = true
      slot.tid = m.tid
      return this.dispatch()
    }
    const current = slot.current
    if (!current || current.pending.job.id !== m.id) return
    clearTimeout(current.timer)
    slot.current = undefined
    if ('ok' in m) current.pending.resolve(m.ok)
    else current.pending.reject(rebuild(m))
    this.dispatch()
  }

  /** The job's time is up unless its CPU time says otherwise: its worker is stopped mid-parse and replaced. */
  private overBudget(slot: Slot): void {
    const current = slot.current
    if (!current) return
    const cpuNow = slot.tid === undefined ? undefined : threadCpuMs(slot.tid)
    const cpuUsed =
      cpuNow === undefined || current.cpuAtStartMs === undefined ? undefined : cpuNow - current.cpuAtStartMs
    const left = compileTimeLeft(current.pending.budgetMs, performance.now() - current.startedMs, cpuUsed)
    if (left > 0) {
      current.timer = setTimeout(() => this.overBudget(slot), left)
      return
    }
    slot.current = undefined
    current.pending.reject(
      new QueryTooComplex(
        `The query could not be compiled within ${current.pending.budgetMs} ms; simplify it.`,
      ),
    )
    this.replace(slot)
  }

  private lost(slot: Slot, err: Error): void {
    if (this.closed || !this.slots.includes(slot)) return
    const current = slot.current
    slot.current = undefined
    if (current) {
      clearTimeout(current.timer)
      current.pending.reject(err)
    }
    this.replace(slot)
  }

  private replace(slot: Slot): void {
    const i = this.slots.indexOf(slot)
    if (i < 0) return
    slot.worker.removeAllListeners()
    void slot.worker.terminate()
    if (this.closed) return
    this.slots[i] = this.spawn()
  }
}

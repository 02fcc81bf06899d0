import type { HogQLCatalog } from '../hogql/index.ts'
import type { Project } from '../accounts/documents.ts'
import { HogQLError } from '../hogql/errors.ts'
import { materializedProperties } from '../hogql/materialized.ts'
import { ZodError } from 'zod'
import { AppError } from '../http/errors.ts'
import { workerModuleUrl, WorkerPool } from '../runtime/worker-pool.ts'
import { TooManyQueries } from './admission.ts'
import type { CompileAnswer, CompileFailure, CompileJob } from './compile-worker.ts'
import { QueryTooComplex } from './hogql-bounds.ts'
import type { KindCompiled } from './kinds.ts'
import type { DataFacts } from './person-overrides.ts'

// Worker threads that parse and compile queries. The grammar's parser runs synchronously and
// some texts take seconds (a 73 KB query: 8 s), which on the main thread would stall /_health and
// every other request; here it stalls only its worker, and a job over its time budget has its
// worker terminated (and replaced) and the query refused. The budget is the worker thread's own CPU
// time where Linux's /proc tells it (src/runtime/worker-pool.ts), so a busy machine does not refuse
// a query that is merely waiting for a core. Projects take turns for the workers, and one project
// runs at most all workers but one at once: another project's query finds a worker within one
// compile, whatever the first one sends. The compiled query comes back by structured clone: a
// kind's compiled plan must be plain data (objects, arrays, Dates), which every kind's is today; a
// function or class instance in it would not survive the trip.

/** The pool's budget arithmetic, shared with every worker pool. */
export { timeLeft as compileTimeLeft, WALL_BUDGETS } from '../runtime/worker-pool.ts'

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

/** How many compiles one project may run at once: all workers but one (at least one). */
export const perProjectCompiles = (workers: number) => Math.max(1, workers - 1)

/** Compiles one project may have waiting for a worker; past it the query is a 429 at once. */
const PER_PROJECT_QUEUED = 64

export class CompilePool {
  private readonly pool: WorkerPool<CompileAnswer & { id: number }>

  // Workers start with the first compile, not with the process: each holds its own copy of the
  // compiler (~57 MiB RSS measured), which a process that only ingests never needs. The first
  // query waits for them to load (its time budget starts when a worker takes the job).
  constructor(size: number, budgetMs: number) {
    this.pool = new WorkerPool({
      url: workerModuleUrl(new URL('./compile-worker.ts', import.meta.url)),
      size,
      budgetMs,
      fairness: { perKeyRunning: perProjectCompiles(size), perKeyQueued: PER_PROJECT_QUEUED },
      rebuild: (m) => rebuild(m as unknown as CompileFailure),
      overBudget: (ms) =>
        new QueryTooComplex(`The query could not be compiled within ${ms} ms; simplify it.`),
      queueFull: () => new TooManyQueries('waiting to compile in this project', PER_PROJECT_QUEUED),
    })
  }

  /** Compiles `query` in a worker within the time budget; throws what the compile threw. */
  compile(
    query: { kind: string },
    project: Project,
    facts?: DataFacts,
    catalog?: HogQLCatalog,
  ): Promise<KindCompiled> {
    const job: Omit<CompileJob, 'id'> = {
      query,
      project,
      facts,
      materialized: [...materializedProperties()],
      catalog,
    }
    return this.pool.run<KindCompiled>(project.id, job)
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}

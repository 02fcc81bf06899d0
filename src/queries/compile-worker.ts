// Runs in a worker thread (compile-pool.ts): compiles a query of any kind away from the event
// loop that answers every other request. Nothing is shared with the main thread but messages.
import { parentPort } from 'node:worker_threads'
import { ZodError } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { AppError } from '../http/errors.ts'
import { HogQLError } from '../hogql/errors.ts'
import { setMaterializedProperties } from '../hogql/materialized.ts'
import { getParser } from '../hogql/parse.ts'
import { currentThreadId } from '../runtime/thread-cpu.ts'
import { withCatalog, withEventProperties } from './compile-cache.ts'
import type { HogQLCatalog } from '../hogql/index.ts'
import { queryKind } from './kinds.ts'
import type { DataFacts } from './person-overrides.ts'
import './kind-registrations.ts'

/** A job the pool sends. */
export interface CompileJob {
  id: number
  query: { kind: string }
  project: Project
  facts?: DataFacts
  materialized: [string, string][]
  /** the project's cohorts and actions (src/queries/catalog.ts) */
  catalog?: HogQLCatalog
}

/** A compile error as plain data, to be rebuilt as the same class on the main thread. */
export type CompileFailure =
  | { hogql: { code: HogQLError['code']; message: string; start?: number; end?: number } }
  | {
      app: Pick<AppError, 'status' | 'type' | 'code' | 'detail' | 'attr' | 'extra'>
    }
  | { zod: ZodError['issues'] }
  | { failed: string }

/** What the worker answers; `ready` carries its kernel thread id (Linux) for the CPU budget. */
export type CompileAnswer =
  ({ id: number; ok: unknown } | ({ id: number } & CompileFailure)) | { ready: true; tid?: number }

const port = parentPort
if (!port) throw new Error('compile-worker.ts runs only as a worker thread')

function failure(err: unknown): CompileFailure {
  if (err instanceof HogQLError)
    return { hogql: { code: err.code, message: err.message, start: err.start, end: err.end } }
  if (err instanceof AppError) {
    const { status, type, code, detail, attr, extra } = err
    return { app: { status, type, code, detail, attr, extra } }
  }
  if (err instanceof ZodError) return { zod: err.issues }
  return { failed: err instanceof Error ? err.message : String(err) }
}

port.on('message', (job: CompileJob) => {
  setMaterializedProperties(new Map(job.materialized))
  // the kind's own compile, exactly as the main thread would run it
  Promise.resolve()
    .then(() =>
      withCatalog(job.catalog, () =>
        withEventProperties(() => queryKind(job.query.kind).compile(job.query, job.project, job.facts)),
      ),
    )
    .then(
      (ok) => port.postMessage({ id: job.id, ok } satisfies CompileAnswer),
      (err: unknown) => port.postMessage({ id: job.id, ...failure(err) } satisfies CompileAnswer),
    )
})

// Instantiating the WebAssembly parser takes a moment: do it before saying ready, so no job's
// time budget pays for it.
void getParser().then(() => port.postMessage({ ready: true, tid: currentThreadId() } satisfies CompileAnswer))

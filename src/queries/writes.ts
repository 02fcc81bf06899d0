import type { ClickHouseClient } from '@clickhouse/client'
import type { Project } from '../accounts/documents.ts'
import { AppError } from '../http/errors.ts'
import { executeWrite, mapClickHouseError } from './execute.ts'
import { clickhouseQueryId, type QueryLog, type QueryRunner } from './runner.ts'
import type { QueryStatus } from './schema.ts'
import { newStatus } from './status.ts'

const cancelled = () => new AppError(409, 'invalid_request', 'query_cancelled', 'The query was cancelled.')

/**
 * Runs a statement that writes what queries read (a cohort's INSERT … SELECT of its members) as a
 * query like any other: it takes a slot of `runner`'s concurrency caps (the project's, and
 * `keyId`'s), is held to the query limits, has a status under `id` (GET /query/:id shows it, DELETE
 * cancels it) and is killed in ClickHouse when `signal` aborts. Throws what a query throws
 * (cancelled: 409, too many running: 429).
 */
export async function runWrite(
  runner: QueryRunner,
  ch: ClickHouseClient,
  project: Project,
  sql: string,
  opts: { id: string; keyId: string; log: QueryLog; signal?: AbortSignal },
): Promise<void> {
  const release = runner.admit(project.id, opts.keyId)
  const abort = new AbortController()
  const untrack = runner.track(project.id, opts.id, abort)
  const onAbort = () => abort.abort()
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const onKill = () =>
    void runner
      .kill(project.id, opts.id)
      .catch((err) => opts.log.warn({ err, query_id: opts.id }, 'kill failed'))
  abort.signal.addEventListener('abort', onKill, { once: true })
  const started = { ...newStatus(project.id, opts.id, new Date()), pickup_time: new Date().toISOString() }
  // a cancel written meanwhile (by any process) wins over what this run reports
  const save = async (next: QueryStatus) => {
    const stored = await runner.statuses.get(project.id, opts.id).catch(() => undefined)
    if (!stored?.cancelled) await runner.statuses.put(next).catch(() => undefined)
  }
  try {
    await runner.statuses.put(started)
    if (abort.signal.aborted)
      throw new AppError(409, 'invalid_request', 'query_cancelled', 'The query was cancelled.')
    await executeWrite(ch, sql, {
      ...runner.queryLimits,
      queryId: clickhouseQueryId(project.id, opts.id),
      abort: abort.signal,
      log: opts.log,
      teamId: project.id,
    })
    await save({ ...started, complete: true, end_time: new Date().toISOString() })
  } catch (err) {
    // an aborted request fails in the client before ClickHouse says anything: it was cancelled
    const mapped = abort.signal.aborted ? cancelled() : mapClickHouseError(err)
    await save({
      ...started,
      complete: true,
      error: true,
      error_message: mapped.detail,
      end_time: new Date().toISOString(),
    })
    throw mapped
  } finally {
    abort.signal.removeEventListener('abort', onKill)
    opts.signal?.removeEventListener('abort', onAbort)
    untrack()
    release()
  }
}

import type { Project } from '../accounts/documents.ts'
import { AppError } from '../http/errors.ts'
import { FRESHNESS_SECONDS } from '../queries/cache.ts'
import type { QueryLog, QueryRunner } from '../queries/runner.ts'
import { REFRESH_MODES, type QueryRequest, type RefreshMode } from '../queries/schema.ts'
import { sleep } from '../retry/backoff.ts'
import { WRAPPER_KINDS } from './filters.ts'

// An insight's results: its query's source run through the query endpoint's runner, with its
// refresh modes and its results cache (src/queries), so an insight answers exactly what POST
// /query/ answers for the same source and mode (the same cache entry).

/** The fields of PostHog's InsightSerializer that come from the calculation. */
export interface InsightResult {
  result: unknown
  hasMore: boolean | null
  columns: unknown[] | null
  last_refresh: string | null
  cache_target_age: string | null
  next_allowed_client_refresh: string | null
  is_cached: boolean
  query_status: unknown
  hogql: string | null
  types: unknown[] | null
  timezone: string
  filters_hash: string | null
}

/**
 * PostHog's `?refresh=` (utils.refresh_requested_by_client + execution_mode_from_refresh): a mode
 * by name; true / 1 / yes / "" mean force_blocking; anything else, or nothing, force_cache (never
 * calculate), which is also what PostHog answers by default.
 */
export function refreshMode(raw: unknown): RefreshMode {
  if (typeof raw === 'boolean') return raw ? 'force_blocking' : 'force_cache'
  if (typeof raw !== 'string') return 'force_cache'
  if (['true', '1', 'yes', ''].includes(raw.toLowerCase())) return 'force_blocking'
  return (REFRESH_MODES as readonly string[]).includes(raw) ? (raw as RefreshMode) : 'force_cache'
}

/** The query a saved insight runs: the source of its wrapper node, or the query itself. */
export function runnableQuery(query: unknown): { kind: string } | undefined {
  if (typeof query !== 'object' || query === null) return undefined
  const q = query as { kind?: unknown; source?: unknown }
  const inner = (WRAPPER_KINDS as readonly unknown[]).includes(q.kind) ? q.source : q
  if (typeof inner !== 'object' || inner === null) return undefined
  const kind = (inner as { kind?: unknown }).kind
  return typeof kind === 'string' ? (inner as { kind: string }) : undefined
}

const plus = (iso: string | null, seconds: number) =>
  iso === null ? null : new Date(Date.parse(iso) + seconds * 1000).toISOString()

/** An insight whose query cannot run (none, or a legacy `filters` insight): nothing calculated. */
export function noResult(project: Project): InsightResult {
  return {
    result: null,
    hasMore: null,
    columns: null,
    last_refresh: null,
    cache_target_age: null,
    next_allowed_client_refresh: null,
    is_cached: false,
    query_status: null,
    hogql: null,
    types: null,
    timezone: project.timezone,
    filters_hash: null,
  }
}

/** How one caller's queries are admitted: its key's id (or a share's), its logger, a signal. */
export interface RunAs {
  keyId: string
  log: QueryLog
  signal?: AbortSignal
}

/** How long a tile waits for a free query slot (the key's concurrency cap) before it fails. */
const ADMISSION_WAIT_MS = 30_000

/**
 * Runs `query` (a wrapper or a source) in `mode`. A query refused for the concurrency caps waits for
 * a slot (a dashboard's tiles share them) for at most ADMISSION_WAIT_MS.
 */
export async function insightResult(
  runner: QueryRunner,
  project: Project,
  query: unknown,
  mode: RefreshMode,
  as: RunAs,
): Promise<InsightResult> {
  const source = runnableQuery(query)
  if (!source) return noResult(project)
  const req: QueryRequest = { query: source, refresh: mode }
  const deadline = Date.now() + ADMISSION_WAIT_MS
  let r: Record<string, unknown>
  for (;;) {
    try {
      r = await runner.run(project, req, as.log, as.keyId, as.signal)
      break
    } catch (err) {
      const busy = err instanceof AppError && err.code === 'concurrency_limit'
      if (!busy || Date.now() > deadline || as.signal?.aborted) throw err
      await sleep(50)
    }
  }
  const lastRefresh = typeof r.last_refresh === 'string' ? r.last_refresh : null
  return {
    result: r.results ?? null,
    hasMore: typeof r.hasMore === 'boolean' ? r.hasMore : null,
    columns: Array.isArray(r.columns) ? r.columns : null,
    last_refresh: lastRefresh,
    cache_target_age: plus(lastRefresh, FRESHNESS_SECONDS.somewhatFresh),
    next_allowed_client_refresh: plus(lastRefresh, FRESHNESS_SECONDS.veryFresh),
    is_cached: r.is_cached === true,
    query_status: r.query_status ?? null,
    hogql: typeof r.hogql === 'string' ? r.hogql : null,
    types: Array.isArray(r.types) ? r.types : null,
    timezone: project.timezone,
    filters_hash: typeof r.cache_key === 'string' ? r.cache_key : null,
  }
}

/** Runs `jobs` at most `width` at a time, each result in its place. */
export async function inPool<T>(jobs: (() => Promise<T>)[], width: number): Promise<T[]> {
  const out = new Array<T>(jobs.length)
  let next = 0
  const lane = async () => {
    while (next < jobs.length) {
      const i = next++
      out[i] = await jobs[i]!()
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, jobs.length)) }, lane))
  return out
}

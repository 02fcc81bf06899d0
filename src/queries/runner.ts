// Long because one query's whole path is here (admission, the cache modes, async status, execution, the
// kinds' prepare and shape hooks); three features added to it at once, and splitting it is left to a change of its own.
import { v4 as uuidv4 } from 'uuid'
import type { Project } from '../accounts/documents.ts'
import { AppError, NotFound } from '../http/errors.ts'
import type { Logger } from '../observability/logger.ts'
import { queryDurationSeconds } from '../observability/metrics.ts'
import type { Runtime } from '../runtime/types.ts'
import { selectRows } from '../clickhouse/client.ts'
import {
  type CachedResult,
  cacheKey,
  FINGERPRINT_SQL,
  Fingerprints,
  FRESHNESS_SECONDS,
  MAX_ENTRY_BYTES,
  ResultCache,
  revalidatable,
} from './cache.ts'
import { answerBytesOf, setAnswerBytes } from './answer-size.ts'
import { type BucketRun, DayCache } from './day-cache.ts'
import { execute, mapClickHouseError, readServerInfo } from './execute.ts'
import { killQuery, queryProgress } from './processes.ts'
import { type AdmissionLimits, QueryAdmission } from './admission.ts'
import { CompileGate, type CompileGateOptions } from './compile-gate.ts'
import { type KindCompiled, queryKind } from './kinds.ts'
import type { QueryRequest, QueryStatus, RefreshMode } from './schema.ts'
import { FactsCompiler } from './facts-compile.ts'
import { hotProperties } from './hot-properties.ts'
import { PersonOverrides } from './person-overrides.ts'
import { newStatus, QueryStatusStore } from './status.ts'
import { asksForTestAccounts } from './test-accounts.ts'
import { type Catalogs, catalogsFor } from './catalog.ts'

export interface QueryLimits {
  maxExecutionSeconds: number
  maxResultRows: number
  maxResultBytes?: number
}

/** How queries are let in: the limits ClickHouse applies, concurrency caps, the compile workers. */
export interface RunnerOptions {
  limits: QueryLimits
  admission: AdmissionLimits
  compile: CompileGateOptions
}

/** How long a cancel waits for ClickHouse to drop the query from system.processes. */
const CANCEL_WAIT_MS = 10_000

type Response = Record<string, unknown>

/** What a query run logs through: the request's logger (with its request and project ids). */
export type QueryLog = Pick<Logger, 'debug' | 'info' | 'warn' | 'error'>

/** ClickHouse query ids are global; the team prefix keeps one project's ids from touching another's. */
export const clickhouseQueryId = (teamId: number, id: string) => `t${teamId}-${id}`

/** What run() hands to calculate besides the compiled query. */
interface CalculateExtra {
  compileSeconds?: number
  fingerprint?: string
  /** this request's use of stored bucket values (day-cache.ts) */
  buckets?: BucketRun
}

const ageSeconds = (iso: string) => (Date.now() - Date.parse(iso)) / 1000

/** Runs query requests with PostHog's refresh modes, the results cache and async status. */
export class QueryRunner {
  private readonly running = new Map<string, AbortController>()

  private readonly limits: QueryLimits
  private readonly admission: QueryAdmission
  private readonly gate: CompileGate
  private readonly fingerprints = new Fingerprints(() => this.readFingerprint())
  private readonly compiler: FactsCompiler
  private readonly dayCache: DayCache

  private constructor(
    private readonly rt: Runtime,
    readonly statuses: QueryStatusStore,
    private readonly cache: ResultCache,
    opts: RunnerOptions,
  ) {
    this.dayCache = new DayCache(rt.ch, rt.nc)
    this.limits = opts.limits
    this.admission = QueryAdmission.of(rt, opts.admission)
    this.gate = new CompileGate(opts.compile)
    this.compiler = new FactsCompiler(this.gate, new PersonOverrides(rt.ch), this.dayCache)
  }

  private catalogsOpened?: Promise<Catalogs>

  /** The cohorts and actions queries may name (opened on first use). */
  catalogs(): Promise<Catalogs> {
    this.catalogsOpened ??= catalogsFor(this.rt.nc, this.rt.log)
    return this.catalogsOpened
  }

  static async create(rt: Runtime, opts: RunnerOptions) {
    return new QueryRunner(rt, await QueryStatusStore.open(rt.nc), await ResultCache.open(rt.nc), opts)
  }

  /**
   * Answers a query request. `keyId` is the personal API key's, for its concurrency cap; `signal`
   * aborts when the client goes away, which stops a blocking query in ClickHouse too.
   */
  async run(
    project: Project,
    req: QueryRequest,
    log: QueryLog,
    keyId: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const prepare = queryKind(req.query.kind).prepare // an unknown kind is a 400 whatever the cache holds
    if (prepare) req = { ...req, query: await prepare(req.query, project, this.rt) }
    let mode: RefreshMode = req.refresh
    if (req.async === true && mode === 'blocking') mode = 'async'
    // the project's cohorts and actions: a new definition or calculated version is a new answer
    const catalog = (await this.catalogs()).get(project.id)
    const key = cacheKey(project.id, req.query, {
      filters_override: req.filters_override ?? null,
      variables_override: req.variables_override ?? null,
      ...(catalog.cohorts.length || catalog.actions.length ? { catalog: catalog.key } : {}),
      // the project's cleaning rules rewrite paths and pages (pathReplacements, doPathCleaning)
      ...(project.settings.path_cleaning_filters?.length
        ? { path_cleaning: project.settings.path_cleaning_filters }
        : {}),
      // filterTestAccounts (anywhere in the query) AND's the project's test-account filters
      ...(project.settings.test_account_filters?.length && asksForTestAccounts(req.query)
        ? { test_accounts: project.settings.test_account_filters }
        : {}),
    })
    const useCacheWithin: number | null =
      mode === 'blocking' || mode === 'async'
        ? FRESHNESS_SECONDS.veryFresh
        : mode === 'lazy_async'
          ? FRESHNESS_SECONDS.somewhatFresh
          : mode === 'force_cache'
            ? Number.POSITIVE_INFINITY
            : null
    let stale: CachedResult | undefined
    if (useCacheWithin !== null) {
      const hit = await this.cache.get(key)
      if (hit && ageSeconds(hit.last_refresh) <= useCacheWithin) {
        return { ...hit.response, is_cached: true, last_refresh: hit.last_refresh, cache_key: key }
      }
      stale = hit
      if (mode === 'force_cache') {
        return { results: null, is_cached: false, cache_key: key, last_refresh: null, query_status: null }
      }
    }
    // A slot is held from compiling until ClickHouse is done (a background run gives it back).
    const release = this.admission.admit(project.id, keyId)
    let handedOff = false
    try {
      // Compile first: a query that cannot compile is a 400 now, not a failed background job.
      // the data's state before the query runs, read while it compiles (cache.ts, revalidation):
      // read afresh when a stale entry may be reused, else a recent read is enough to store
      const fingerprint =
        stale?.sql !== undefined && stale.fingerprint !== undefined
          ? this.fingerprints.forCheck()
          : this.fingerprints.forStore()
      const info = await readServerInfo(this.rt.ch)
      const kind = queryKind(req.query.kind)
      const { compiled, compileSeconds, buckets } = await this.compiler.compile(
        req.query,
        project,
        kind.buckets,
        info.version,
        !mode.startsWith('force_'),
        catalog,
      )
      const state = await fingerprint
      if (
        stale?.sql !== undefined &&
        state !== undefined &&
        stale.sql === compiled.clickhouse &&
        stale.fingerprint === state &&
        revalidatable(compiled.clickhouse)
      ) {
        return { ...stale.response, is_cached: true, last_refresh: stale.last_refresh, cache_key: key }
      }
      const extra = { compileSeconds, fingerprint: state, buckets }
      const id = req.client_query_id ?? uuidv4()
      const background = mode === 'async' || mode === 'lazy_async' || mode === 'force_async'
      if (!background) return await this.calculate(project, req, compiled, id, key, log, signal, extra)
      const status = newStatus(project.id, id, new Date())
      await this.statuses.put(status)
      handedOff = true
      void this.runInBackground(project, req, compiled, status, key, log, extra).finally(release)
      return { query_status: status, cache_key: key, is_cached: false, results: null }
    } finally {
      if (!handedOff) release()
    }
  }

  private async calculate(
    project: Project,
    req: QueryRequest,
    compiled: KindCompiled,
    id: string,
    key: string,
    log: QueryLog,
    abort?: AbortSignal,
    extra: CalculateExtra = {},
  ): Promise<Response> {
    const kind = queryKind(req.query.kind)
    const t0 = performance.now()
    // A client that leaves, a cancel or a shutdown stops the query in ClickHouse, not only here.
    const onAbort = () =>
      void this.kill(project.id, id).catch((err) => log.warn({ err, query_id: id }, 'kill failed'))
    abort?.addEventListener('abort', onAbort, { once: true })
    let out
    try {
      if (abort?.aborted)
        throw new AppError(409, 'invalid_request', 'query_cancelled', 'The query was cancelled.')
      out = await execute(this.rt.queryCh, compiled, {
        ...this.limits,
        queryId: clickhouseQueryId(project.id, id),
        abort,
        log,
        teamId: project.id,
      })
    } finally {
      abort?.removeEventListener('abort', onAbort)
    }
    const ms = performance.now() - t0
    queryDurationSeconds.observe({ kind: req.query.kind }, ms / 1000)
    hotProperties.record(compiled.eventProperties, out.elapsed)
    const finished = extra.buckets ? await extra.buckets.finish(out.rows, compiled) : undefined
    const rows = finished?.rows ?? out.rows
    const limit = compiled.paging?.limit ?? compiled.limit ?? null
    const hasMore = kind.hasMore
      ? kind.hasMore(rows, compiled)
      : compiled.paging
        ? out.rows.length > compiled.paging.limit
        : limit !== null && out.rows.length >= limit
    const lastRefresh = new Date().toISOString()
    const shaped = kind.shape ? kind.shape(rows, compiled, req.query, project) : rows
    const response: Response = {
      ...(kind.topLevel ? (shaped as Response) : { results: shaped }),
      columns: compiled.columns,
      types: out.types.length ? out.types : compiled.types,
      hogql: compiled.hogql,
      clickhouse: compiled.clickhouse,
      // compile: text to SQL (in a worker); clickhouse: the server's own time; execute: the round
      // trip to ClickHouse and reading its answer (bench/insights.ts reads them to split the cost)
      timings: [
        { k: './compile', t: extra.compileSeconds ?? 0 },
        { k: './clickhouse', t: out.elapsed },
        { k: './execute', t: ms / 1000 },
      ],
      hasMore,
      limit,
      offset: compiled.paging?.offset ?? 0,
      is_cached: false,
      last_refresh: lastRefresh,
      cache_key: key,
      query_status: null,
    }
    // how many chart buckets came from stored values and how many the statement computed
    if (finished) response.bucket_cache = finished.use
    setAnswerBytes(response, out.answerBytes)
    log.info(
      { query_id: id, ms: Math.round(ms), rows: out.rows.length, rows_read: out.rowsRead },
      'query executed',
    )
    const entry: CachedResult = { response, last_refresh: lastRefresh }
    if (extra.fingerprint !== undefined && revalidatable(compiled.clickhouse)) {
      Object.assign(entry, { sql: compiled.clickhouse, fingerprint: extra.fingerprint })
    }
    // the result and the buckets' values are written side by side, both before the answer goes;
    // an answer too large for the cache is not serialized to find that out
    await Promise.all([
      out.answerBytes > MAX_ENTRY_BYTES
        ? undefined
        : this.cache.put(key, entry).catch((err) => {
            log.warn({ err, query_id: id }, 'could not cache the query result')
          }),
      finished?.kept,
    ])
    return response
  }

  private async runInBackground(
    project: Project,
    req: QueryRequest,
    compiled: KindCompiled,
    initial: QueryStatus,
    key: string,
    log: QueryLog,
    extra: CalculateExtra,
  ): Promise<void> {
    const abort = new AbortController()
    const runKey = `${project.id}.${initial.id}`
    this.running.set(runKey, abort)
    let status: QueryStatus = { ...initial, pickup_time: new Date().toISOString() }
    const save = async (next: QueryStatus) => {
      // A cancel written by any process wins over whatever this run reports afterwards.
      const stored = await this.statuses.get(project.id, next.id).catch(() => undefined)
      if (stored?.cancelled) return
      status = next
      const results = next.results as object | null | undefined
      await this.statuses.put(next, results ? answerBytesOf(results) : undefined)
    }
    await save(status).catch(() => undefined)
    const progress = setInterval(() => {
      void this.progress(project.id, initial.id)
        .then((p) => (p && !abort.signal.aborted ? save({ ...status, query_progress: p }) : undefined))
        .catch(() => undefined)
    }, 500)
    try {
      const response = await this.calculate(project, req, compiled, initial.id, key, log, abort.signal, extra)
      clearInterval(progress)
      await save({ ...status, complete: true, end_time: new Date().toISOString(), results: response })
    } catch (err) {
      clearInterval(progress)
      const mapped = mapClickHouseError(err)
      if (mapped.status >= 500) {
        // ClickHouse's message can quote row values: the detail goes to debug only
        log.error({ query_id: initial.id, code: mapped.code }, 'background query failed')
        log.debug({ err, query_id: initial.id }, 'background query failure detail')
      }
      await save({
        ...status,
        complete: true,
        error: true,
        error_message: mapped.detail,
        end_time: new Date().toISOString(),
      }).catch((e) => log.warn({ err: e }, 'could not store query status'))
    } finally {
      this.running.delete(runKey)
    }
  }

  /** Takes a slot of the concurrency caps for `keyId` (throws TooManyQueries); call the result to give it back. */
  admit(projectId: number, keyId: string): () => void {
    return this.admission.admit(projectId, keyId)
  }

  /** Lists a query run outside run() (writes.ts) so cancel() reaches it; returns what unlists it. */
  track(teamId: number, id: string, abort: AbortController): () => void {
    const key = `${teamId}.${id}`
    this.running.set(key, abort)
    return () => this.running.delete(key)
  }

  /** The limits every query this runner runs is held to. */
  get queryLimits(): QueryLimits {
    return this.limits
  }

  /** The database's state (cache.ts FINGERPRINT_SQL); undefined when it cannot be read. */
  private async readFingerprint(): Promise<string | undefined> {
    try {
      const [row] = await selectRows<{ f: string }>(this.rt.ch, FINGERPRINT_SQL)
      return row?.f
    } catch {
      return undefined
    }
  }

  private progress(teamId: number, id: string): Promise<QueryStatus['query_progress']> {
    return queryProgress(this.rt.ch, clickhouseQueryId(teamId, id))
  }

  async status(teamId: number, id: string): Promise<QueryStatus> {
    const s = await this.statuses.get(teamId, id)
    if (!s) throw new NotFound('Query not found.')
    return s
  }

  /**
   * Kills the ClickHouse query (whichever process started it), marks the status cancelled, and
   * answers whether ClickHouse no longer runs it (checked in system.processes).
   */
  async cancel(teamId: number, id: string): Promise<boolean> {
    const s = await this.status(teamId, id)
    this.running.get(`${teamId}.${id}`)?.abort()
    if (!s.complete || !s.error) {
      await this.statuses.put({
        ...s,
        complete: true,
        error: true,
        cancelled: true,
        error_message: 'Query cancelled',
        end_time: new Date().toISOString(),
      })
    }
    return this.kill(teamId, id)
  }

  /** killQuery (processes.ts) of this project's query `id`: true once ClickHouse no longer runs it. */
  kill(teamId: number, id: string, waitMs = CANCEL_WAIT_MS): Promise<boolean> {
    return killQuery(this.rt.ch, clickhouseQueryId(teamId, id), waitMs)
  }

  /** Stops this process's background queries, in ClickHouse too (graceful shutdown). */
  async stop(): Promise<void> {
    for (const a of this.running.values()) a.abort()
    await this.gate.close()
  }
}

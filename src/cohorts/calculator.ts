import { randomUUID } from 'node:crypto'
import type { Project } from '../accounts/documents.ts'
import { AppError } from '../http/errors.ts'
import type { CompiledQuery } from '../hogql/index.ts'
import type { Logger } from '../observability/logger.ts'
import type { Catalogs } from '../queries/catalog.ts'
import { compileHogQLCached } from '../queries/compile-cache.ts'
import { execute } from '../queries/execute.ts'
import type { QueryRunner } from '../queries/runner.ts'
import { runWrite } from '../queries/writes.ts'
import type { Runtime } from '../runtime/types.ts'
import type { CohortDocs } from './cache.ts'
import { type Cohort, cohortRefs } from './document.ts'
import { membersHogQL } from './hogql.ts'
import { insertMembersSql, staleMembersClause } from './sql.ts'
import type { CohortStore } from './store.ts'

// Calculating dynamic cohorts: each calculation is one INSERT … SELECT of the members (the
// cohort's HogQL, src/cohorts/hogql.ts) under the cohort's next version, run as a query like any
// other (QueryRunner.runWrite: concurrency caps, query limits, a status, cancellable), in the
// background: a request only marks the cohort as wanting a calculation (`pending_version`,
// `is_calculating`) and returns.
//
// Every api process runs a calculator. A calculation is claimed by a revision-checked write of
// `calculation` on the cohort, so one process runs it; a claim whose owner died is taken over once
// it is older than the longest a query may run. A change of definition while a calculation runs
// supersedes it: the running query is killed and the new version is calculated. The version a
// calculation writes becomes current (readers switch to it) only when it is complete; older
// versions' rows are deleted afterwards.
//
// Cohorts are recalculated on a schedule as well, since relative windows ("in the last 30 days")
// drift: every `recalculateMs` after the last calculation, waiting twice as long after each error
// in a row (at most 32 times).

export interface CalculatorOptions {
  /** how long after its last calculation a cohort is calculated again */
  recalculateMs: number
  /** how often the calculator looks for work besides being told of changes */
  tickMs?: number
  /** calculations running at once in this process */
  parallel?: number
}

/** The personal-key slot calculations take in the query admission: one shared "key" for all. */
export const CALCULATION_KEY = 'cohort-calculations'

const MAX_BACKOFF_DOUBLINGS = 5

interface Running {
  team: number
  id: number
  version: number
  abort: AbortController
  /** why it was aborted: superseded by a newer version (not an error) */
  superseded?: boolean
}

export class CohortCalculator {
  private readonly owner = `${process.pid}-${randomUUID().slice(0, 8)}`
  private readonly running = new Map<string, Running>()
  private timer?: NodeJS.Timeout
  private scanning = false
  private rescan = false
  private stopped = false
  private readonly tickMs: number
  private readonly parallel: number
  private readonly unsubscribe: () => void

  constructor(
    private readonly rt: Runtime,
    private readonly store: CohortStore,
    private readonly docs: CohortDocs,
    private readonly catalogs: Catalogs,
    private readonly runner: QueryRunner,
    private readonly log: Logger,
    private readonly opts: CalculatorOptions,
  ) {
    this.tickMs = opts.tickMs ?? 5_000
    this.parallel = opts.parallel ?? 2
    this.unsubscribe = docs.onChange(() => this.kick())
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return
      this.kick()
      this.timer = setTimeout(tick, this.tickMs)
      this.timer.unref()
    }
    tick()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    this.unsubscribe()
    for (const r of this.running.values()) r.abort.abort()
  }

  /**
   * Marks cohort `id` (and every dynamic cohort that contains it) as wanting a calculation of its
   * next version, and returns the cohort as marked. Never waits for the calculation.
   */
  async request(team: number, id: number): Promise<Cohort> {
    const marked = await this.store.change(team, id, markPending)
    for (const dependent of this.dependents(team, id)) {
      await this.store.change(team, dependent, markPending).catch((err) => {
        this.log.warn({ err, cohort_id: dependent }, 'could not mark a dependent cohort for calculation')
      })
    }
    this.kick()
    return marked
  }

  /** Dynamic cohorts of the project that contain `id`, directly or through others. */
  dependents(team: number, id: number): number[] {
    const all = this.docs.list(team).filter((c) => !c.deleted && !c.is_static && c.filters)
    const found = new Set<number>()
    let frontier = [id]
    while (frontier.length) {
      const next: number[] = []
      for (const c of all) {
        if (found.has(c.id) || c.id === id) continue
        if (cohortRefs(c.filters!.properties).some((r) => frontier.includes(r))) {
          found.add(c.id)
          next.push(c.id)
        }
      }
      frontier = next
    }
    return [...found]
  }

  /** Looks for work soon (coalescing calls that come together). */
  kick(): void {
    if (this.stopped) return
    if (this.scanning) {
      this.rescan = true
      return
    }
    this.scanning = true
    setImmediate(() => {
      void this.scan()
        .catch((err) => this.log.warn({ err }, 'cohort calculation scan failed'))
        .finally(() => {
          this.scanning = false
          if (this.rescan) {
            this.rescan = false
            this.kick()
          }
        })
    })
  }

  private async scan(): Promise<void> {
    const now = Date.now()
    for (const team of this.docs.teams()) {
      for (const c of this.docs.list(team)) {
        if (this.stopped) return
        const mine = this.running.get(runKey(c))
        if (c.deleted || c.is_static) {
          // nothing will read what a running calculation writes
          if (mine) {
            mine.superseded = true
            mine.abort.abort()
          }
          continue
        }
        if (mine && (c.pending_version ?? 0) > mine.version) {
          // a newer definition: this calculation's answer would be stale
          mine.superseded = true
          mine.abort.abort()
          continue
        }
        if (mine) continue
        if (c.is_calculating && c.pending_version !== null && this.claimable(c, now)) {
          if (this.running.size < this.parallel) await this.claimAndRun(c)
        } else if (!c.is_calculating && this.due(c, now)) {
          await this.store.change(team, c.id, markPending).catch(() => undefined)
        }
      }
    }
  }

  private claimable(c: Cohort, now: number): boolean {
    const claim = c.calculation
    if (!claim) return true
    if (claim.owner === this.owner) return !this.running.has(runKey(c))
    // the owner seems gone: no query may run longer than this
    const longest = this.rt.config.QUERY_MAX_EXECUTION_SECONDS * 1000 + 60_000
    return now - Date.parse(claim.started_at) > longest
  }

  private due(c: Cohort, now: number): boolean {
    const last = Date.parse(c.last_calculation ?? c.last_error_at ?? c.created_at)
    const wait = this.opts.recalculateMs * 2 ** Math.min(c.errors_calculating, MAX_BACKOFF_DOUBLINGS)
    return now - last >= wait
  }

  private async claimAndRun(c: Cohort): Promise<void> {
    const queryId = randomUUID()
    let claimed: Cohort | undefined
    try {
      claimed = await this.store.change(c.team_id, c.id, (cur) => {
        if (cur.deleted || cur.is_static || !cur.is_calculating || cur.pending_version === null)
          return undefined
        if (!this.claimable(cur, Date.now())) return undefined
        return {
          ...cur,
          calculation: {
            version: cur.pending_version,
            query_id: queryId,
            started_at: new Date().toISOString(),
            owner: this.owner,
          },
        }
      })
    } catch (err) {
      this.log.warn({ err, cohort_id: c.id }, 'could not claim a cohort calculation')
      return
    }
    if (claimed.calculation?.query_id !== queryId) return
    const run: Running = {
      team: c.team_id,
      id: c.id,
      version: claimed.calculation.version,
      abort: new AbortController(),
    }
    this.running.set(runKey(c), run)
    void this.calculate(claimed, run, queryId).finally(() => {
      this.running.delete(runKey(c))
      this.kick()
    })
  }

  private async calculate(c: Cohort, run: Running, queryId: string): Promise<void> {
    const log = this.log.child({
      cohort_id: c.id,
      team_id: c.team_id,
      version: run.version,
      query_id: queryId,
    })
    try {
      const project = await this.rt.accounts.getProject(c.team_id)
      if (!project) throw new AppError(404, 'invalid_request', 'not_found', 'The project no longer exists.')
      const compiled = await this.compileMembers(project, c)
      await runWrite(
        this.runner,
        this.rt.queryCh,
        project,
        insertMembersSql(c.team_id, c.id, run.version, compiled.clickhouse),
        {
          id: queryId,
          keyId: CALCULATION_KEY,
          log,
          signal: run.abort.signal,
        },
      )
      const count = await this.countMembers(project, c.id, run.version)
      const done = await this.store.change(c.team_id, c.id, (cur) => {
        if (cur.calculation?.query_id !== queryId) return undefined
        const current = cur.pending_version === run.version
        return {
          ...cur,
          ...(current ? { version: run.version, count } : {}),
          last_calculation: new Date().toISOString(),
          errors_calculating: 0,
          last_error_at: null,
          last_error: null,
          calculation: null,
          is_calculating: !current,
        }
      })
      log.info({ count, current: done.version === run.version }, 'cohort calculated')
      if (done.version === run.version) await this.dropStale(c.team_id, c.id, run.version)
    } catch (err) {
      const e = err instanceof AppError ? err : undefined
      // not the cohort's fault: too many queries running now, or a newer definition took over
      const retry = e?.code === 'concurrency_limit' || run.superseded === true
      if (!retry) log.warn({ err }, 'cohort calculation failed')
      await this.store
        .change(c.team_id, c.id, (cur) => {
          if (cur.calculation?.query_id !== queryId) return undefined
          if (retry) return { ...cur, calculation: null }
          return {
            ...cur,
            calculation: null,
            errors_calculating: cur.errors_calculating + 1,
            last_error_at: new Date().toISOString(),
            last_error: e?.detail ?? 'The calculation failed.',
            // a newer definition still waits; this version's is abandoned
            is_calculating: (cur.pending_version ?? 0) > run.version,
          }
        })
        .catch((e2) => log.warn({ err: e2 }, 'could not record a cohort calculation failure'))
    }
  }

  /** The cohort's members query, compiled for the server the calculation runs on. */
  async compileMembers(project: Project, c: Cohort): Promise<CompiledQuery> {
    const hogql = membersHogQL(c, {
      cohort: (id) => this.docs.get(c.team_id, id),
      timezone: project.timezone,
      now: Date.now(),
    })
    return compileHogQLCached(hogql, {
      teamId: project.id,
      timezone: project.timezone,
      defaultLimit: Number.MAX_SAFE_INTEGER,
      maxLimit: Number.MAX_SAFE_INTEGER,
      catalog: this.catalogs.get(project.id),
    })
  }

  private async countMembers(project: Project, cohortId: number, version: number): Promise<number> {
    const compiled = await compileHogQLCached(
      `SELECT count(DISTINCT person_id) FROM cohort_people WHERE cohort_id = ${cohortId} AND version = ${version}`,
      { teamId: project.id, timezone: project.timezone },
    )
    const out = await execute(this.rt.queryCh, compiled, {
      maxExecutionSeconds: this.rt.config.QUERY_MAX_EXECUTION_SECONDS,
      maxResultRows: 1,
      queryId: `t${project.id}-cohort-count-${randomUUID()}`,
    })
    return Number(out.rows[0]?.[0] ?? 0)
  }

  /** Deletes the rows of versions older than `current` (in the background: a mutation). */
  private async dropStale(team: number, id: number, current: number): Promise<void> {
    await this.rt.tables
      .alter('cohortpeople', staleMembersClause(team, id, current))
      .catch((err) => this.log.warn({ err, cohort_id: id }, 'could not delete old cohort versions'))
  }

  /** Deletes every row of a deleted cohort. */
  async dropAll(team: number, id: number): Promise<void> {
    await this.dropStale(team, id, 0)
  }
}

const runKey = (c: Pick<Cohort, 'team_id' | 'id'>) => `${c.team_id}.${c.id}`

/** The cohort wanting the calculation of its next version (static cohorts are not calculated). */
function markPending(c: Cohort): Cohort | undefined {
  if (c.is_static || c.deleted) return undefined
  const next = Math.max(c.version ?? 0, c.pending_version ?? 0) + 1
  return { ...c, pending_version: next, is_calculating: true }
}

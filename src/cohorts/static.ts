import { randomUUID } from 'node:crypto'
import { parse } from 'csv-parse/sync'
import type { Project } from '../accounts/documents.ts'
import { ValidationError } from '../http/errors.ts'
import type { Logger } from '../observability/logger.ts'
import { compileHogQLCached } from '../queries/compile-cache.ts'
import { execute } from '../queries/execute.ts'
import type { QueryRunner } from '../queries/runner.ts'
import { runWrite } from '../queries/writes.ts'
import type { Runtime } from '../runtime/types.ts'
import { CALCULATION_KEY, type CohortCalculator } from './calculator.ts'
import type { Cohort } from './document.ts'
import { staticMembersSql } from './sql.ts'
import type { CohortStore } from './store.ts'

// Members of static cohorts: from a CSV upload (PostHog's rules for its columns, posthog/api/
// cohort.py), a list of person ids, or a copy of a dynamic cohort's current members. The ids are
// resolved to persons in ClickHouse (one HogQL SELECT per chunk, inserted by INSERT … SELECT, run
// as queries like any other), in the background: the request that sent them has its answer first.

/** How a list names persons. */
export type IdKind = 'distinct_id' | 'person_id' | 'email'

const PERSON_ID_HEADERS = ['person_id', 'person-id', 'person .id']
const DISTINCT_ID_HEADERS = ['distinct_id', 'distinct-id']
const EMAIL_HEADERS = ['email', 'e-mail']

const bad = (detail: string): never => {
  throw new ValidationError(detail, 'csv')
}

/** The ids a CSV upload names and what they are; throws ValidationError (attr `csv`). */
export function parseCohortCsv(text: string): { ids: string[]; kind: IdKind } {
  let rows: string[][]
  try {
    rows = parse(text, { relax_column_count: true, skip_empty_lines: true, bom: true, trim: true })
  } catch {
    return bad('CSV file format is invalid. Please check your file format and try again.')
  }
  rows = rows.filter((r) => r.some((c) => c !== ''))
  const first = rows[0]
  if (!first) return bad('CSV file is empty. Please upload a CSV file with at least one row of data.')
  const header = first.map((h) => h.toLowerCase())
  let ids: string[]
  let kind: IdKind
  if (first.filter((c) => c !== '').length <= 1) {
    // one column: a person_id or email header names it, anything else is a distinct id (the
    // first row too, as PostHog reads files without a header)
    const h = header.find((c) => c !== '') ?? ''
    kind = PERSON_ID_HEADERS.includes(h) ? 'person_id' : EMAIL_HEADERS.includes(h) ? 'email' : 'distinct_id'
    const body = kind === 'distinct_id' ? rows : rows.slice(1)
    ids = body.map((r) => r.find((c) => c !== '') ?? '').filter((c) => c !== '')
  } else {
    const find = (names: string[]) => header.findIndex((h) => names.includes(h))
    const pick = [
      ['person_id', find(PERSON_ID_HEADERS)],
      ['distinct_id', find(DISTINCT_ID_HEADERS)],
      ['email', find(EMAIL_HEADERS)],
    ].find(([, i]) => (i as number) >= 0) as [IdKind, number] | undefined
    if (!pick) {
      return bad(
        "Multi-column CSV must contain at least one column with a supported ID header: 'person_id', 'Person .id' " +
          `(PostHog export format), 'distinct_id', 'distinct-id', or 'email'. Found columns: ${first.filter((c) => c).join(', ') || 'none'}`,
      )
    }
    ;[kind] = pick
    ids = rows
      .slice(1)
      .map((r) => r[pick[1]] ?? '')
      .filter((c) => c !== '')
  }
  if (!ids.length) {
    bad(
      'CSV file contains no valid person IDs, distinct IDs, or email addresses. Please ensure your file has data rows with person IDs, distinct IDs, or email addresses.',
    )
  }
  return { ids: [...new Set(ids)], kind }
}

/** HogQL of the persons a list of ids names (the list is the placeholder {ids}). */
export function idsHogQL(kind: IdKind): string {
  if (kind === 'distinct_id')
    return 'SELECT DISTINCT person_id AS id FROM person_distinct_ids WHERE has({ids}, distinct_id)'
  if (kind === 'person_id') return 'SELECT id FROM persons WHERE has({ids}, toString(id))'
  return 'SELECT id FROM persons WHERE has({ids}, toString(properties.email))'
}

const CHUNK = 10_000

// Versions of static members' rows: later changes have higher ones, even within a millisecond.
let lastVersion = 0
const nextVersion = () => (lastVersion = Math.max(Date.now(), lastVersion + 1))

export class StaticMembers {
  constructor(
    private readonly rt: Runtime,
    private readonly store: CohortStore,
    private readonly runner: QueryRunner,
    private readonly calculator: CohortCalculator,
    private readonly log: Logger,
  ) {}

  /**
   * Adds (or with `remove`, removes) the persons `ids` name to static cohort `c`, in the
   * background; `c` is marked as calculating until the count is updated.
   */
  change(project: Project, c: Cohort, kind: IdKind, ids: string[], remove = false): void {
    void this.apply(project, c, kind, ids, remove).catch((err) =>
      this.log.warn({ err, cohort_id: c.id }, 'static cohort change failed'),
    )
  }

  /** change(), awaited: resolves once the members and the count are stored. */
  async apply(project: Project, c: Cohort, kind: IdKind, ids: string[], remove = false): Promise<void> {
    let error: string | null = null
    try {
      const version = nextVersion()
      for (let i = 0; i < ids.length; i += CHUNK) {
        const compiled = await compileHogQLCached(idsHogQL(kind), {
          teamId: project.id,
          timezone: project.timezone,
          values: { ids: ids.slice(i, i + CHUNK) },
          defaultLimit: Number.MAX_SAFE_INTEGER,
          maxLimit: Number.MAX_SAFE_INTEGER,
        })
        await runWrite(
          this.runner,
          this.rt.queryCh,
          project,
          staticMembersSql(project.id, c.id, version, compiled.clickhouse, remove),
          {
            id: randomUUID(),
            keyId: CALCULATION_KEY,
            log: this.log,
          },
        )
      }
    } catch (err) {
      error = err instanceof ValidationError ? err.detail : 'The members could not be stored.'
      this.log.warn({ err, cohort_id: c.id }, 'static cohort members not stored')
    }
    await this.finish(project, c.id, error)
  }

  /** Copies the current members of dynamic cohort `from` into static cohort `c`, in the background. */
  copy(project: Project, c: Cohort, from: Cohort): void {
    void (async () => {
      let error: string | null = null
      try {
        const compiled = await compileHogQLCached(
          `SELECT person_id AS id FROM cohort_people WHERE cohort_id = ${from.id} AND version = ${from.version ?? 0}`,
          {
            teamId: project.id,
            timezone: project.timezone,
            defaultLimit: Number.MAX_SAFE_INTEGER,
            maxLimit: Number.MAX_SAFE_INTEGER,
          },
        )
        await runWrite(
          this.runner,
          this.rt.queryCh,
          project,
          staticMembersSql(project.id, c.id, nextVersion(), compiled.clickhouse),
          {
            id: randomUUID(),
            keyId: CALCULATION_KEY,
            log: this.log,
          },
        )
      } catch (err) {
        error = 'The members could not be copied.'
        this.log.warn({ err, cohort_id: c.id }, 'static cohort copy failed')
      }
      await this.finish(project, c.id, error)
    })().catch((err) => this.log.warn({ err, cohort_id: c.id }, 'static cohort copy failed'))
  }

  /** Counts the members, records the outcome, and recalculates the cohorts that contain this one. */
  private async finish(project: Project, id: number, error: string | null): Promise<void> {
    const count = await this.count(project, id).catch(() => null)
    const now = new Date().toISOString()
    await this.store.change(project.id, id, (cur) => ({
      ...cur,
      count: count ?? cur.count,
      is_calculating: false,
      members_changed_at: now,
      ...(error
        ? { errors_calculating: cur.errors_calculating + 1, last_error_at: now, last_error: error }
        : { last_calculation: now, errors_calculating: 0, last_error_at: null, last_error: null }),
    }))
    for (const dependent of this.calculator.dependents(project.id, id)) {
      await this.calculator.request(project.id, dependent).catch(() => undefined)
    }
  }

  private async count(project: Project, id: number): Promise<number> {
    const compiled = await compileHogQLCached(
      `SELECT count() FROM static_cohort_people WHERE cohort_id = ${id}`,
      {
        teamId: project.id,
        timezone: project.timezone,
      },
    )
    const out = await execute(this.rt.queryCh, compiled, {
      maxExecutionSeconds: this.rt.config.QUERY_MAX_EXECUTION_SECONDS,
      maxResultRows: 1,
      queryId: `t${project.id}-cohort-count-${randomUUID()}`,
    })
    return Number(out.rows[0]?.[0] ?? 0)
  }
}

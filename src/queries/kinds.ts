import type { Project } from '../accounts/documents.ts'
import type { Runtime } from '../runtime/types.ts'
import { ValidationError } from '../http/errors.ts'
import type { CompiledQuery } from '../hogql/index.ts'
import { compileHogQLCached } from './compile-cache.ts'
import { filtersCondition } from './hogql-filters.ts'
import type { BucketKind } from './day-cache.ts'
import type { DataFacts } from './person-overrides.ts'
import { HogQLQuerySchema } from './schema.ts'

/**
 * A query kind turns its request object into one compiled ClickHouse query and, optionally,
 * reshapes the rows into the kind's result format. Insight kinds (trends, funnels, …) register here.
 */
export interface KindCompiled extends CompiledQuery {
  /** Set by kinds that page: the SQL reads `limit + 1` rows from `offset`, the extra one meaning "more". */
  paging?: { limit: number; offset: number }
}

export interface QueryKind {
  /**
   * Kinds whose query names stored configuration (an ExperimentQuery's experiment_id) read it here,
   * on the main thread where the stores are (compile workers have none), and return the query with
   * it inlined: the results cache key and the compile both see the returned query.
   */
  prepare?(query: unknown, project: Project, rt: Runtime): Promise<{ kind: string }>
  /** `facts`: what the project's data is known to hold now (person-overrides.ts), for a cheaper plan. */
  compile(query: unknown, project: Project, facts?: DataFacts): Promise<KindCompiled>
  /**
   * The shape is PostHog's whole response body for the kind (ExperimentQuery's baseline and
   * variant_results at the top level), not its `results`.
   */
  topLevel?: boolean
  /** Default: rows as arrays, in column order. */
  shape?(rows: unknown[][], compiled: KindCompiled, query: unknown, project: Project): unknown
  /** Whether there is more than these rows show (e.g. breakdown values folded into "other"). */
  hasMore?(rows: unknown[][], compiled: KindCompiled): boolean
  /** Kinds whose closed buckets' values are stored and reused (day-cache.ts). */
  buckets?: BucketKind
}

const hogql: QueryKind = {
  async compile(raw, project, facts) {
    const q = HogQLQuerySchema.parse(raw)
    const filters = filtersCondition(q.filters, project)
    if (filters !== undefined && q.values && Object.hasOwn(q.values, 'filters')) {
      throw new ValidationError(
        "The query gives 'filters' both as a placeholder value and as filters; give one of them",
        'filters',
      )
    }
    return compileHogQLCached(q.query, {
      teamId: project.id,
      values: q.values,
      filters,
      timezone: project.timezone,
      personOverrides: facts?.personOverrides,
    })
  },
}

const KINDS = new Map<string, QueryKind>([['HogQLQuery', hogql]])

export function registerQueryKind(kind: string, impl: QueryKind): void {
  KINDS.set(kind, impl)
}

export function queryKind(kind: string): QueryKind {
  const k = KINDS.get(kind)
  if (!k) {
    throw new ValidationError(
      `Unsupported query kind '${kind}'. Supported: ${[...KINDS.keys()].sort().join(', ')}.`,
      'query.kind',
      'unsupported_query_kind',
    )
  }
  return k
}

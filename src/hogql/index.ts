import type { HogQLCatalog } from './catalog.ts'
import { HogQLError } from './errors.ts'
import { outputItems, type Query } from './ir.ts'
import { getParser, parseSelect } from './parse.ts'
import { Printer } from './printer.ts'
import { Resolver } from './resolver.ts'

// The HogQL compiler: HogQL text → parser AST → resolved IR (resolver.ts) → ClickHouse SQL
// (printer.ts), with the project's team guard on every table read.

export type { ServerInfo } from './server-settings.ts'
export type { CatalogAction, CatalogCohort, HogQLCatalog } from './catalog.ts'
export type { HogQLErrorCode } from './errors.ts'
export { HogQLError } from './errors.ts'
export { TABLES } from './schema.ts'

/** What one compilation needs: whose data, placeholder values, limits and time zone. */
export interface CompileOptions {
  teamId: number
  // Values for `{name}` placeholders; printed as escaped literals.
  values?: Record<string, unknown>
  /**
   * What `{filters}` stands for: a HogQL condition on the events of the SELECT it appears in
   * (PostHog's HogQLFilters, built by the query runner). Absent: `{filters}` is true.
   */
  filters?: string
  defaultLimit?: number
  maxLimit?: number
  // The project's time zone (IANA name); DateTime values are shown and truncated in it.
  timezone?: string
  /**
   * false promises the project has no person_overrides rows: `person_id` is then the id each event
   * was stamped with, printed without the override join. Absent or true: resolved through merges.
   */
  personOverrides?: boolean
  /** The project's cohorts and actions, for `IN COHORT` and `matchesAction` (absent: none exist). */
  catalog?: HogQLCatalog
}

/** A compiled statement: the SQL to run and how to read its columns. */
export interface CompiledQuery {
  hogql: string
  clickhouse: string
  // Output names as HogQL sees them. The ClickHouse column names may differ (`_c0` for an
  // expression, a suffix on a repeated name or one of the guard's): read results by position.
  columns: string[]
  types: string[]
  /** the LIMIT applied to the outermost SELECT (default or capped); none for a UNION and the like */
  limit?: number
  /**
   * Top-level event properties read from the key/value arrays (no materialized column), when any:
   * the query runner counts their ClickHouse time for auto-materialization.
   */
  eventProperties?: string[]
}

/** The LIMIT a statement without one gets. */
export const DEFAULT_LIMIT = 100
/** The largest LIMIT a statement may ask for. */
export const MAX_LIMIT = 50000

function checkTimezone(tz: string): string {
  if (!/^[A-Za-z0-9_+\-/]+$/.test(tz)) throw new HogQLError('bad_argument', `Invalid time zone '${tz}'`)
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz })
  } catch {
    throw new HogQLError('bad_argument', `Invalid time zone '${tz}'`)
  }
  return tz
}

// The default LIMIT goes on the statement's SELECT, or on each SELECT of a UNION / INTERSECT /
// EXCEPT, as PostHog does (`test_hogql_union_all_limits`: two branches of 80 rows give 160); a
// LIMIT written in the statement is capped at the maximum.
function applyLimit(q: Query, opts: CompileOptions): number | undefined {
  const max = opts.maxLimit ?? MAX_LIMIT
  const fallback = Math.min(opts.defaultLimit ?? DEFAULT_LIMIT, max)
  if (q.k === 'select') {
    // `LIMIT <expression>` is capped at the maximum where it is printed; no bound is known here.
    if (q.limitExpr) {
      q.limit = max
      return undefined
    }
    q.limit = q.limit === undefined ? fallback : Math.min(q.limit, max)
    return q.limit
  }
  for (const branch of q.queries) applyLimit(branch, opts)
  // no single LIMIT bounds the result (so no hasMore either)
  return undefined
}

// Warm the WebAssembly parser so compileHogQLSync can be used (e.g. at server start).
let readyParser: Awaited<ReturnType<typeof getParser>> | undefined

/** Loads the parser, so compileHogQLSync can be called. */
export async function prepareHogQL(): Promise<void> {
  readyParser = await getParser()
}

/** Compiles HogQL to team-guarded ClickHouse SQL; throws HogQLError for anything it refuses. */
export async function compileHogQL(query: string, opts: CompileOptions): Promise<CompiledQuery> {
  readyParser = await getParser()
  return compileHogQLSync(query, opts)
}

/** compileHogQL without the await, once prepareHogQL() has run. */
export function compileHogQLSync(query: string, opts: CompileOptions): CompiledQuery {
  if (!readyParser) throw new Error('call prepareHogQL() (or compileHogQL) before compileHogQLSync')
  if (!Number.isSafeInteger(opts.teamId)) throw new HogQLError('bad_argument', 'teamId must be an integer')
  const tz = checkTimezone(opts.timezone ?? 'UTC')
  const ast = parseSelect(readyParser, query)
  const resolver = new Resolver(
    readyParser,
    {
      teamId: opts.teamId,
      tz,
      values: opts.values ?? {},
      filters: opts.filters,
      personOverrides: opts.personOverrides,
      catalog: opts.catalog,
    },
    query,
  )
  const q = resolver.query(ast)
  const limit = applyLimit(q, opts)
  const printer = new Printer({ teamId: opts.teamId, tz })
  const clickhouse = printer.query(q)
  const columns = outputItems(q)
    .filter((i) => !i.hidden)
    .map((i) => i.name)
  const compiled: CompiledQuery = { hogql: query, clickhouse, columns, types: printer.outputTypes(q), limit }
  if (resolver.eventProperties.size) compiled.eventProperties = [...resolver.eventProperties]
  return compiled
}

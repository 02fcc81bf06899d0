import type { HogQLCatalog } from '../hogql/index.ts'
import type { Project } from '../accounts/documents.ts'
import { CompilePool } from './compile-pool.ts'
import { checkHogQLText, checkQueryStrings, DEFAULT_HOGQL_BOUNDS, type HogQLBounds } from './hogql-bounds.ts'
import { type KindCompiled, queryKind } from './kinds.ts'
import type { DataFacts } from './person-overrides.ts'
import { HogQLQuerySchema } from './schema.ts'

// Where a query request becomes ClickHouse SQL without the HogQL parser running on the event loop.
// The parser (ANTLR in WebAssembly) is slow and its time grows steeply with nesting — a few nested
// calls can take seconds, a crafted 73 KB query 8 s — so every kind is compiled in a worker thread:
// the text is bounds-checked here (cheap), then compiled there within QUERY_COMPILE_TIMEOUT_MS, and
// a compile past that budget has its worker replaced and the query refused.

export interface CompileGateOptions {
  workers: number
  budgetMs: number
  bounds?: HogQLBounds
}

export class CompileGate {
  private readonly pool: CompilePool
  private readonly bounds: HogQLBounds

  constructor(opts: CompileGateOptions) {
    this.pool = new CompilePool(opts.workers, opts.budgetMs)
    this.bounds = opts.bounds ?? DEFAULT_HOGQL_BOUNDS
  }

  /** The compiled query; throws the compiler's errors (HogQLError, validation) or QueryTooComplex. */
  async compile(
    raw: { kind: string },
    project: Project,
    facts?: DataFacts,
    catalog?: HogQLCatalog,
  ): Promise<KindCompiled> {
    queryKind(raw.kind) // an unknown kind is a 400 before any work
    if (raw.kind === 'HogQLQuery') checkHogQLText(HogQLQuerySchema.parse(raw).query, this.bounds)
    else checkQueryStrings(raw, this.bounds)
    return this.pool.compile(raw, project, facts, catalog)
  }

  close(): Promise<void> {
    return this.pool.close()
  }
}

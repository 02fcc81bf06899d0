import type { HogQLParser } from '@posthog/hogql-parser'
import type { CTENode, Node } from './ast.ts'
import type { HogQLCatalog } from './catalog.ts'
import type { Span } from './errors.ts'
import type { Expr, Query, Select, SelectItem } from './ir.ts'

// The shared vocabulary of the resolver's parts (resolver.ts: scopes, CTEs and aliases;
// resolve-expr.ts: expressions and their types; resolve-fields.ts: binding names to sources;
// resolve-joins.ts: FROM/JOIN and the join rules). They call each other through `Resolution`,
// which resolver.ts implements, so no part imports another in a circle.

/** How one query is resolved: the project, its time zone, and placeholder values. */
export interface ResolveOptions {
  teamId: number
  tz: string
  values: Record<string, unknown>
  /** The HogQL condition `{filters}` stands for; absent: true. */
  filters?: string
  /** event property → materialized column of `events` */
  materialized?: ReadonlyMap<string, string>
  /** false: the project has no person overrides, so fields print their `plain` form (no join). */
  personOverrides?: boolean
  /** The project's cohorts and actions (`IN COHORT`, `matchesAction`). */
  catalog?: HogQLCatalog
}

/** A select alias: registered before any item resolves, resolved on first use. */
export interface AliasSlot {
  node: Node
  item: SelectItem
  state: 'pending' | 'resolving' | 'done'
  /** An alias inside an expression: a use repeats the expression instead of naming an item. */
  inline?: boolean
}

/** A CTE and the CTEs visible where it was defined (it may use earlier ones, never itself). */
export interface CteEntry {
  node: CTENode
  scope: Map<string, CteEntry>
}

/** The names visible while resolving one SELECT level. */
export interface Scope {
  select: Select
  ctes: Map<string, CteEntry>
  aliases: Map<string, AliasSlot>
  arrayJoinAliases: Set<string>
  lambdas: string[][]
  /** Set while resolving a schema expression field: names resolve on this source only. */
  internal?: Select['sources'][number]
  cteColumnsResolving: Set<string>
  /** Names of this level's `WINDOW name AS (...)` definitions. */
  windows: Set<string>
  /** The definitions of those windows, for functions that copy one (lag / lead). */
  windowNodes?: Map<string, Node>
}

/** What the resolver's parts ask of each other; implemented once, by Resolver. */
export interface Resolution {
  readonly opts: ResolveOptions
  readonly parser: HogQLParser
  /**
   * Top-level event properties the statement reads from the key/value arrays (those without a
   * materialized column): what auto-materialization counts (src/queries/hot-properties.ts).
   */
  readonly eventProperties: Set<string>
  /** A fresh id for a new source. */
  newSourceId(): number
  /** Resolves a SELECT or set query with the CTEs in scope. */
  query(node: Node, ctes: Map<string, CteEntry>): Query
  /** Resolves an expression in `scope`. */
  expr(node: Node, scope: Scope): Expr
  /** Binds a (possibly qualified) name with trailing accessors; undefined when nothing has it. */
  tryField(chain: string[], scope: Scope, s: Span, path: (string | number)[]): Expr | undefined
  /** Resolves a select alias's expression (once). */
  resolveAlias(slot: AliasSlot, scope: Scope): void
  /** The user's text of `node` (the name of an unaliased select item). */
  text(node: Node): string
}

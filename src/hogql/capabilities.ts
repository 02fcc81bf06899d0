// What the ClickHouse server Burrow talks to can run, derived from its version (read once at start,
// `SELECT version()`), and the per-query settings that keep the printer's team guard first. The
// resolver asks it before accepting a construct, the printer before printing one; docs/hogql.md
// carries the same table for readers. Burrow prints the portable form of everything 18.16 lacks
// (CTEs inlined, joins nested, ilike rewritten, ...) on every server, so only constructs with no
// portable form depend on the version: a server without them gets a 400 naming the construct and
// the release that runs it.

/** A ClickHouse release as numbers, e.g. 26.7.2.1 → [26, 7, 2, 1]. */
export type Version = number[]

/** What Burrow learns about its ClickHouse server at start. */
export interface ServerInfo {
  /** `SELECT version()`, e.g. '18.16.1' or '26.7.2.1' */
  version: string
  /** The guard-hardening settings (GUARD_SETTING_NAMES) this server knows, from system.settings. */
  settings: string[]
}

/** One thing a server may or may not run, and the first release that runs it. */
export interface Feature {
  /** What a user or reader calls it, used in refusals: "window functions (OVER)" */
  name: string
  /** The first release that has it, as the ClickHouse changelog states it. */
  since: string
}

/** Features whose availability changes what Burrow accepts or prints. */
export const FEATURES = {
  /** `OVER (...)` and `WINDOW w AS (...)`: experimental from 21.3, general from 21.9. */
  windowFunctions: { name: 'window functions (OVER / WINDOW)', since: '21.9' },
  /** accurateCastOrNull and toUUIDOrNull: PostHog's exact conversion forms. */
  accurateCastOrNull: { name: 'accurateCastOrNull', since: '21.1' },
  /** Current releases refuse `JOIN (SELECT ...)` without an alias (joined_subquery_requires_alias = 1). */
  joinedSubqueryAlias: { name: 'an alias on every joined subquery', since: '20.3' },
  /** `INTERSECT` and `EXCEPT` between SELECTs. */
  intersectExcept: { name: 'INTERSECT and EXCEPT', since: '21.8' },
  /** `LIMIT n WITH TIES`: rows tied with the last one on the ORDER BY keys come along. */
  limitWithTies: { name: 'queries with LIMIT ... WITH TIES', since: '20.1' },
  /**
   * JOIN ON conditions other than `left = right` equalities (`a.t < b.t`, OR): 18.16 hash joins
   * take only key equalities. 26.1 is the tested boundary (the analyzer's join conditions), not
   * the release that introduced them.
   */
  joinConditions: { name: 'JOIN conditions other than equalities of the two sides', since: '26.1' },
  /**
   * `LIMIT (SELECT ...)`, `LIMIT toInt('2')`: expressions the server computes (whole-number
   * arithmetic of literals is computed by Burrow everywhere). 26.1 is the tested boundary.
   */
  limitExpressions: { name: 'LIMIT and OFFSET expressions (LIMIT (SELECT ...))', since: '26.1' },
  /** `properties.list.1`: JSON paths into a property (JSONExtractRaw; 26.1 is the tested boundary). */
  propertyPaths: {
    name: 'JSON paths into properties (properties.list.1, poe.properties.x)',
    since: '26.1',
  },
} as const satisfies Record<string, Feature>

/**
 * What keeps the server's filter push-down out of a guarded read (guard.ts, where the figures are):
 * - `limit`: a LIMIT no filter is pushed below. Every release stops both of its push-downs there
 *   (18.16's AST rewrite, current releases' query plan), and on 26.x it costs nothing;
 * - `with`: a WITH clause, which 18.16's push-down refuses to enter. There a LIMIT is not free: it
 *   merges the read's streams into one before the outer query, which then aggregates in one thread.
 * `with` is proven on 18.16 only (test/integration/hogql/isolation.test.ts); current releases
 * push filters into such a subquery, so every other server takes `limit`.
 */
export type GuardBarrier = 'limit' | 'with'

/** What the compiler may rely on for one server. */
export interface Capabilities {
  /** The server release this describes, e.g. '26.7.2.1'; 'portable' for the 18.16 baseline. */
  version: string
  /** `OVER` / `WINDOW` print as they are written (they have no portable form). */
  windowFunctions: boolean
  /** Conversions print as PostHog prints them (accurateCastOrNull, toUUIDOrNull). */
  accurateCastOrNull: boolean
  /** The server refuses a joined subquery without an alias (Burrow aliases every one regardless). */
  joinedSubqueryNeedsAlias: boolean
  /** INTERSECT / EXCEPT print as written (they have no portable form). */
  intersectExcept: boolean
  /** `LIMIT n WITH TIES` prints as written. */
  limitWithTies: boolean
  /** JOIN ON may hold any condition on the two sides, not only key equalities. */
  joinConditions: boolean
  /** LIMIT / OFFSET take expressions the server computes. */
  limitExpressions: boolean
  /** How the team guard's reads stop filter push-down (GuardBarrier). */
  guardBarrier: GuardBarrier
}

/** The server's version string as numbers; [0] when it cannot be read. */
export function parseVersion(text: string): Version {
  const parts = /^(\d+(?:\.\d+)*)/.exec(text.trim())?.[1]?.split('.').map(Number)
  return parts?.length ? parts : [0]
}

/** Whether release `v` is at least `since` ('21.9'). */
export function atLeast(v: Version, since: string): boolean {
  const want = parseVersion(since)
  for (let i = 0; i < want.length; i++) {
    const a = v[i] ?? 0
    const b = want[i]!
    if (a !== b) return a > b
  }
  return true
}

/** The capabilities of the server that answered `version()` with `version`. */
export function capabilitiesOf(version: string): Capabilities {
  const v = parseVersion(version)
  return {
    version,
    windowFunctions: atLeast(v, FEATURES.windowFunctions.since),
    accurateCastOrNull: atLeast(v, FEATURES.accurateCastOrNull.since),
    joinedSubqueryNeedsAlias: atLeast(v, FEATURES.joinedSubqueryAlias.since),
    intersectExcept: atLeast(v, FEATURES.intersectExcept.since),
    limitWithTies: atLeast(v, FEATURES.limitWithTies.since),
    joinConditions: atLeast(v, FEATURES.joinConditions.since),
    limitExpressions: atLeast(v, FEATURES.limitExpressions.since),
    guardBarrier: v[0] === 18 && v[1] === 16 ? 'with' : 'limit',
  }
}

/**
 * What every supported server runs (the 18.16 baseline): the compiler's default when no server is
 * named, and what insights print with (their SQL needs nothing the baseline lacks), each with its
 * server's guard barrier (src/queries/insights/common/hogql.ts compileInner).
 */
export const PORTABLE: Capabilities = {
  version: 'portable',
  windowFunctions: false,
  accurateCastOrNull: false,
  joinedSubqueryNeedsAlias: true,
  intersectExcept: false,
  limitWithTies: false,
  joinConditions: false,
  limitExpressions: false,
  // the LIMIT holds on every server; 18.16 is sent the cheaper barrier when Burrow knows it runs there
  guardBarrier: 'limit',
}

/**
 * Settings that keep a server from moving a user's predicate into, or ahead of, the guarded read of
 * a table (see docs/hogql.md, "The team guard"), with the value Burrow sends. The structural guard
 * (PREWHERE team_id inside a subquery the server cannot push filters into) holds without them; they
 * make sure no server-side profile default reopens a path the tests closed. Only the ones the
 * server knows are sent: an unknown setting fails the query.
 */
export const GUARD_SETTINGS: Readonly<Record<string, string>> = {
  // 18.16 onwards: no pushing outer WHERE conditions into subqueries (AST-level push-down).
  enable_optimize_predicate_expression: '0',
  // Current releases: a condition pushed down the query plan may join an explicit PREWHERE, where
  // it could run before (or without) the team filter; proven to leak with the profile defaults
  // changed, so it is pinned off.
  optimize_prewhere_after_pushdown: '0',
}

/** Names of GUARD_SETTINGS, for the start-up probe of system.settings. */
export const GUARD_SETTING_NAMES = Object.keys(GUARD_SETTINGS)

/** The guard settings `server` knows, to send with every query Burrow runs on it. */
export function guardSettings(server: ServerInfo | undefined): Record<string, string> {
  const known = new Set(server?.settings ?? ['enable_optimize_predicate_expression'])
  return Object.fromEntries(Object.entries(GUARD_SETTINGS).filter(([name]) => known.has(name)))
}

/** The 400 message for a construct `feature` the server `caps` cannot run. */
export function needsRelease(feature: Feature, caps: Capabilities): string {
  const on = caps.version === 'portable' ? 'every supported server' : `ClickHouse ${caps.version}`
  return `${feature.name} need ClickHouse ${feature.since} or later; this query is compiled for ${on}`
}

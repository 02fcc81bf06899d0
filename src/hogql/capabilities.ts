// The server Burrow talks to: a current ClickHouse (26.x), the one dialect the printer prints. The
// version read at start (`SELECT version()`) is kept for messages and the compile cache's key; the
// settings that keep the printer's team guard first are sent where the server knows them.

/** What Burrow learns about its ClickHouse server at start. */
export interface ServerInfo {
  /** `SELECT version()`, e.g. '26.7.2.1' */
  version: string
  /** The guard-hardening settings (GUARD_SETTING_NAMES) this server knows, from system.settings. */
  settings: string[]
}

/** The server a query is compiled for. */
export interface Capabilities {
  /** The server release, e.g. '26.7.2.1'; 'current' when no server is named. */
  version: string
}

/** The capabilities of the server that answered `version()` with `version`. */
export function capabilitiesOf(version: string): Capabilities {
  return { version }
}

/** A query compiled without naming a server (what insights print with). */
export const PORTABLE: Capabilities = { version: 'current' }

/**
 * Settings that keep a server from moving a user's predicate into, or ahead of, the guarded read of
 * a table (see docs/hogql.md, "The team guard"), with the value Burrow sends. The structural guard
 * (PREWHERE team_id inside a subquery the server cannot push filters into) holds without them; they
 * make sure no server-side profile default reopens a path the tests closed. Only the ones the
 * server knows are sent: an unknown setting fails the query.
 */
export const GUARD_SETTINGS: Readonly<Record<string, string>> = {
  // No pushing outer WHERE conditions into subqueries (AST-level push-down).
  enable_optimize_predicate_expression: '0',
  // A condition pushed down the query plan may join an explicit PREWHERE, where
  // it could run before (or without) the team filter; proven to leak with the profile defaults
  // changed, so it is pinned off.
  optimize_prewhere_after_pushdown: '0',
}

/** Names of GUARD_SETTINGS, for the start-up probe of system.settings. */
export const GUARD_SETTING_NAMES = Object.keys(GUARD_SETTINGS)

/** The guard settings `server` knows, to send with every query Burrow runs on it. */
export function guardSettings(server: ServerInfo | undefined): Record<string, string> {
  const known = new Set(server?.settings ?? GUARD_SETTING_NAMES)
  return Object.fromEntries(Object.entries(GUARD_SETTINGS).filter(([name]) => known.has(name)))
}

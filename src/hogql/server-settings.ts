// The server Burrow talks to: a current ClickHouse (26.x), the one dialect the printer prints, so
// nothing is compiled per server. What Burrow reads of it at start: its version (for messages and
// the day-bucket cache's key) and which of the settings that keep the printer's team guard first it
// knows, which are then sent with every query.

/** What Burrow learns about its ClickHouse server at start. */
export interface ServerInfo {
  /** `SELECT version()`, e.g. '26.7.2.1' */
  version: string
  /** The guard-hardening settings (GUARD_SETTING_NAMES) this server knows, from system.settings. */
  settings: string[]
}

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

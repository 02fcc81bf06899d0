import { materializeProperty, loadMaterialized } from '../clickhouse/materialize.ts'
import { materializedProperties, setMaterializedProperties } from '../hogql/materialized.ts'
import type { Runtime } from '../runtime/types.ts'

// Auto-materialization, as PostHog does it for its own deployments (its materialized-columns task
// analyses the query log for the properties slow queries read and gives the top ones a column):
// every query's ClickHouse time is counted against the top-level event properties it read from the
// properties' JSON; every `intervalMs`, the properties whose queries took at least `minSeconds`
// in that period get a column of their own, most time first, while fewer than `maxColumns`
// properties have one. Queries then read the column (src/hogql/resolve-fields.ts), which shows in
// the response's `clickhouse` SQL. A column is on `events` for every project: the cap bounds what
// any project's queries can add.

/** ClickHouse seconds spent by the queries that read each property from the JSON. */
export class HotProperties {
  private readonly spent = new Map<string, number>()

  /** Counts `seconds` of a query against each property it read (nothing when it read none). */
  record(properties: readonly string[] | undefined, seconds: number): void {
    if (!properties || !(seconds > 0)) return
    for (const p of properties) this.spent.set(p, (this.spent.get(p) ?? 0) + seconds)
  }

  /** The properties with at least `minSeconds` since the last call, most first; starts a new period. */
  take(minSeconds: number): string[] {
    const hot = [...this.spent].filter(([, s]) => s >= minSeconds).sort((a, b) => b[1] - a[1])
    this.spent.clear()
    return hot.map(([p]) => p)
  }
}

/** The api process's tally (the query runner records into it). */
export const hotProperties = new HotProperties()

export interface AutoMaterializeOptions {
  intervalMs: number
  minSeconds: number
  maxColumns: number
}

/**
 * Materializes the hot properties of each period (see above) until stopped; a failure is logged
 * and the next period tries again. Returns the stop function.
 */
export function startAutoMaterialize(rt: Runtime, opts: AutoMaterializeOptions): () => void {
  const sweep = async () => {
    const have = materializedProperties()
    const room = opts.maxColumns - have.size
    const next = hotProperties.take(opts.minSeconds).filter((p) => !have.has(p))
    if (room <= 0 || !next.length) return
    for (const property of next.slice(0, room)) {
      const column = await materializeProperty(rt.ch, rt.tables, property)
      rt.log.info({ property, column }, 'materialized a hot event property')
    }
    setMaterializedProperties(await loadMaterialized(rt.ch))
  }
  const timer = setInterval(
    () => void sweep().catch((err) => rt.log.warn({ err }, 'auto-materialization failed')),
    opts.intervalMs,
  )
  timer.unref()
  return () => clearInterval(timer)
}

import type { ClickHouseClient } from '../clickhouse/client.ts'
import { compileHogQL } from '../hogql/index.ts'

// `volume_30_day` of the event definitions: how many events of each name the project had in the
// last 30 days, one HogQL query over `events` (team-guarded like every query), kept for a few
// minutes per project so that typing in a picker does not count the project's events per keystroke.
// PostHog fills the same field from a periodic job; it is as fresh as that job here too.

const TTL_MS = 5 * 60_000
/** A count this old that lacks a listed name is made again (the name's first events came after it). */
const MISSING_MS = 2_000
const MAX_NAMES = 50_000

interface Entry {
  at: number
  counts: Promise<Map<string, number>>
}

export class EventVolumes {
  private readonly byTeam = new Map<number, Entry>()

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly ttlMs = TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Events per name in the last 30 days; `names`: the ones about to be shown (a count that lacks one
   * is renewed once it is a couple of seconds old). A failed count is not kept.
   */
  async of(team: number, names: string[] = []): Promise<Map<string, number>> {
    const hit = this.byTeam.get(team)
    const age = hit ? this.now() - hit.at : Number.POSITIVE_INFINITY
    if (hit && age < this.ttlMs) {
      const counts = await hit.counts
      if (age < MISSING_MS || names.every((n) => counts.has(n))) return counts
    }
    return this.renew(team)
  }

  private renew(team: number): Promise<Map<string, number>> {
    const entry: Entry = { at: this.now(), counts: this.count(team) }
    this.byTeam.set(team, entry)
    entry.counts.catch(() => {
      if (this.byTeam.get(team) === entry) this.byTeam.delete(team)
    })
    return entry.counts
  }

  private async count(team: number): Promise<Map<string, number>> {
    const compiled = await compileHogQL(
      `SELECT event, count() FROM events WHERE timestamp >= now() - INTERVAL 30 DAY GROUP BY event
       LIMIT ${MAX_NAMES}`,
      { teamId: team, maxLimit: MAX_NAMES },
    )
    const rs = await this.ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
    const rows = ((await rs.json()) as { data: [string, string | number][] }).data
    return new Map(rows.map(([event, n]) => [event, Number(n)]))
  }
}

// People and events written straight into ClickHouse for the cohort and action tests, with times
// relative to now as PostHog's test cases write them (`datetime.now() - timedelta(days=2)`).
import { randomUUID } from 'node:crypto'
import type { ClickHouseClient } from '@clickhouse/client'
import { insertDistinctIds, insertEvents, insertPersons } from '../hogql/fixtures.ts'

const DAY = 86_400_000
const HOUR = 3_600_000
const MINUTE = 60_000

/** UTC 'YYYY-MM-DD HH:MM:SS' of now minus the given span. */
export function ago(span: { days?: number; hours?: number; minutes?: number; weeks?: number }): string {
  const ms =
    Date.now() -
    (span.weeks ?? 0) * 7 * DAY -
    (span.days ?? 0) * DAY -
    (span.hours ?? 0) * HOUR -
    (span.minutes ?? 0) * MINUTE
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ')
}

/** A test project's people: each a person with one distinct id and properties. */
export class People {
  readonly ids = new Map<string, string>()
  private events: Parameters<typeof insertEvents>[1] = []

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly team: number,
  ) {}

  async person(distinctId: string, properties: Record<string, unknown> = {}): Promise<string> {
    const id = randomUUID()
    this.ids.set(distinctId, id)
    await insertPersons(this.ch, [
      { team: this.team, id, createdAt: ago({ days: 60 }), properties, version: 1 },
    ])
    await insertDistinctIds(this.ch, [{ team: this.team, distinctId, personId: id, version: 1 }])
    return id
  }

  event(
    distinctId: string,
    event: string,
    timestamp: string,
    properties: Record<string, unknown> = {},
    elementsChain = '',
  ): void {
    const personId = this.ids.get(distinctId)
    if (!personId) throw new Error(`no person ${distinctId}`)
    this.events.push({
      team: this.team,
      uuid: randomUUID(),
      event,
      distinctId,
      personId,
      timestamp,
      properties,
      elementsChain,
    })
  }

  /** PostHog's _make_event_sequence: event_count events per period, periods interval_days apart. */
  sequence(distinctId: string, intervalDays: number, counts: number[], event = '$pageview'): void {
    counts.forEach((n, period) => {
      for (let i = 0; i < n; i++)
        this.event(distinctId, event, ago({ days: intervalDays * period, hours: 1, minutes: i }))
    })
  }

  async flush(): Promise<void> {
    if (this.events.length) await insertEvents(this.ch, this.events.splice(0))
  }

  /** Distinct ids of the given person ids, sorted. */
  names(personIds: string[]): string[] {
    const byId = new Map([...this.ids].map(([d, p]) => [p, d]))
    return personIds.map((p) => byId.get(p) ?? p).sort()
  }
}

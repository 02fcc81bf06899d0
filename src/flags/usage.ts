import type { ClickHouseClient } from '@clickhouse/client'
import { sqlString } from '../clickhouse/sql.ts'

// Usage of one flag from the feature_flag_usage view (schema/clickhouse/0005): how often it was
// checked ($feature_flag_called, source 'called') and how many events carried `$feature/<key>`
// (source 'property'), per day and variant. Variants are stored as text ('true', 'false', or the
// variant key).

export interface UsageRow {
  day: string
  source: 'called' | 'property'
  variant: string
  calls: number
  unique_persons: number
}

export interface SourceUsage {
  calls: number
  by_variant: Record<string, number>
}

export interface FlagUsage {
  key: string
  date_from: string
  date_to: string
  called: SourceUsage
  property: SourceUsage
  daily: UsageRow[]
}

const DAY_MS = 86_400_000

function summarize(rows: UsageRow[], source: UsageRow['source']): SourceUsage {
  const out: SourceUsage = { calls: 0, by_variant: {} }
  for (const r of rows) {
    if (r.source !== source) continue
    out.calls += r.calls
    out.by_variant[r.variant] = (out.by_variant[r.variant] ?? 0) + r.calls
  }
  return out
}

/** The last `days` days (UTC, today included) of usage of flag `key`. */
export async function flagUsage(
  ch: ClickHouseClient,
  teamId: number,
  key: string,
  days: number,
  now = new Date(),
): Promise<FlagUsage> {
  const dateTo = now.toISOString().slice(0, 10)
  const dateFrom = new Date(now.getTime() - (days - 1) * DAY_MS).toISOString().slice(0, 10)
  // ClickHouse aliases reach into WHERE, so the printed day must not be called `day`.
  const rs = await ch.query({
    query: `SELECT toString(day) AS day_text, source, variant, sum(calls) AS calls, sum(unique_persons) AS unique_persons
      FROM feature_flag_usage
      WHERE team_id = ${String(Math.trunc(teamId))} AND flag = ${sqlString(key)}
        AND day >= toDate(${sqlString(dateFrom)}) AND day <= toDate(${sqlString(dateTo)})
      GROUP BY day, source, variant
      ORDER BY day_text, source, variant`,
    format: 'JSONEachRow',
  })
  const raw = await rs.json<Record<string, string | number>>()
  const daily: UsageRow[] = raw.map((r) => ({
    day: String(r.day_text),
    source: r.source === 'property' ? 'property' : 'called',
    variant: String(r.variant),
    calls: Number(r.calls),
    unique_persons: Number(r.unique_persons),
  }))
  return {
    key,
    date_from: dateFrom,
    date_to: dateTo,
    called: summarize(daily, 'called'),
    property: summarize(daily, 'property'),
    daily,
  }
}

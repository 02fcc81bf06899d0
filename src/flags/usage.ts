import type { ClickHouseClient } from '@clickhouse/client'
import { compileHogQL } from '../hogql/index.ts'

// Usage of one flag from HogQL's feature_flag_usage table (src/hogql/flag-usage.ts: the rows of the
// schema/clickhouse/0005 view, computed from this project's events only): how often it was checked
// ($feature_flag_called, source 'called') and how many events carried `$feature/<key>` (source
// 'property'), per day and variant. Variants are stored as text ('true', 'false', or the variant key).

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
  const compiled = await compileHogQL(
    `SELECT toString(day), source, variant, sum(calls), sum(unique_persons) FROM feature_flag_usage
      WHERE flag = {key} AND day >= toDate({from}) AND day <= toDate({to})
      GROUP BY day, source, variant
      ORDER BY day, source, variant`,
    { teamId, values: { key, from: dateFrom, to: dateTo }, defaultLimit: 10_000, maxLimit: 10_000 },
  )
  const rs = await ch.query({ query: compiled.clickhouse, format: 'JSONCompact' })
  const raw = ((await rs.json()) as { data: unknown[][] }).data
  const daily: UsageRow[] = raw.map(([day, source, variant, calls, persons]) => ({
    day: String(day),
    source: source === 'property' ? 'property' : 'called',
    variant: String(variant),
    calls: Number(calls),
    unique_persons: Number(persons),
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

import type { ClickHouseClient } from '../clickhouse/client.ts'
import { timeInsert } from '../observability/metrics.ts'
import type { TaxonomyRows } from './collect.ts'

// The taxonomy's rows into ClickHouse (schema/clickhouse/0110_taxonomy.sql): at most one INSERT per
// table, only for the tables that have rows. Rows are upserts by their key (folded by min / max), so
// writing one twice (a retried batch, a second process) changes nothing.

export const TAXONOMY_TABLES = {
  events: 'event_definitions',
  properties: 'property_definitions',
  eventProperties: 'event_properties',
} as const

/** One JSONEachRow INSERT, counted in the projectors' insert metrics as the event rows' are. */
async function insert(ch: ClickHouseClient, table: string, values: unknown[]): Promise<void> {
  const done = timeInsert(table, values.length)
  try {
    await ch.insert({ table, values, format: 'JSONEachRow' })
  } catch (err) {
    done(false)
    throw err
  }
  done(true)
}

/** Writes `rows`; resolves once ClickHouse holds them all, rejects on any failure. */
export async function writeTaxonomy(ch: ClickHouseClient, rows: TaxonomyRows): Promise<void> {
  const inserts: Promise<unknown>[] = []
  if (rows.events.length) inserts.push(insert(ch, TAXONOMY_TABLES.events, rows.events))
  if (rows.properties.length) inserts.push(insert(ch, TAXONOMY_TABLES.properties, rows.properties))
  if (rows.eventProperties.length) {
    inserts.push(insert(ch, TAXONOMY_TABLES.eventProperties, rows.eventProperties))
  }
  // every insert settles before the answer: none is left running behind a failure
  const settled = await Promise.allSettled(inserts)
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected')
  if (failed) throw failed.reason
}

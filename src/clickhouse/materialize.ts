import { createHash } from 'node:crypto'
import { ValidationError } from '../http/errors.ts'
import { type ClickHouseClient, selectRows } from './client.ts'
import { sqlString } from './sql.ts'
import type { TableAdmin } from './table-admin.ts'

// Materialized property columns: a hot event property gets a column of its own, computed by
// ClickHouse from the key/value arrays on insert (and on read for parts written before), so
// queries on it read one narrow column instead of two arrays.

/** A readable, collision-free column name: the property's safe characters plus a hash of it. */
export function columnFor(property: string): string {
  const safe = property.replace(/[^A-Za-z0-9_]/g, '_').slice(0, 40)
  return `mat_${safe}_${createHash('sha1').update(property).digest('hex').slice(0, 8)}`
}

/**
 * Gives `property` a column of its own (idempotent) and records it; returns the column's name. The
 * column is added where the rows are and, in cluster mode, to the Distributed tables over them.
 */
export async function materializeProperty(
  ch: ClickHouseClient,
  tables: TableAdmin,
  property: string,
): Promise<string> {
  if (property.length === 0 || property.length > 200 || property.includes('\x1F')) {
    throw new ValidationError(
      'property must be a top-level event property name of 1 to 200 characters',
      'property',
    )
  }
  const column = columnFor(property)
  const existing = await selectRows<{ name: string }>(
    ch,
    `SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events' AND name = ${sqlString(column)}`,
  )
  if (existing.length === 0) {
    // a concurrent add of the same column fails harmlessly; the expression is HogQL's property read
    await tables.addColumn(
      'events',
      `\`${column}\` Nullable(String) MATERIALIZED JSONExtract(properties, ${sqlString(property)}, 'Nullable(String)')`,
    )
  }
  await ch.command({
    query: `INSERT INTO materialized_columns (property, column_name, created_at) SELECT ${sqlString(property)}, ${sqlString(column)}, now()`,
  })
  return column
}

/** Property → column, for the columns that exist on `events` now (a replayed table may lack some). */
export async function loadMaterialized(ch: ClickHouseClient): Promise<Map<string, string>> {
  const rows = await selectRows<{ property: string; column_name: string }>(
    ch,
    `SELECT property, column_name FROM materialized_columns
     WHERE column_name IN (SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'events')
     GROUP BY property, column_name`,
  )
  return new Map(rows.map((r) => [r.property, r.column_name]))
}

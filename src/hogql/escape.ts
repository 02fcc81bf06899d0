import { sqlIdentifier, sqlNumber, sqlQuotedIdentifier, sqlString } from '../clickhouse/sql.ts'
import { HogQLError } from './errors.ts'

// The printer's names for the SQL literal helpers of src/clickhouse/sql.ts, with the HogQL error a
// user sees for a number ClickHouse cannot read.

/** An identifier, bare when plain, else backticked. */
export const escapeIdentifier = sqlIdentifier
/** An identifier, always backticked. */
export const quoteIdentifier = sqlQuotedIdentifier
/** A string literal that reads back exactly. */
export const escapeString = sqlString

/** A numeric literal; finite numbers only (a HogQLError otherwise). */
export function escapeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new HogQLError('bad_argument', 'Only finite numbers are supported')
  return sqlNumber(value)
}

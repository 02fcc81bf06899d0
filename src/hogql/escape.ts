import { sqlIdentifier, sqlNumber, sqlQuotedIdentifier, sqlString } from '../clickhouse/sql.ts'
import { HogQLError } from './errors.ts'

// The printer's names for the SQL literal helpers of src/clickhouse/sql.ts, with the HogQL error a
// user sees for a number ClickHouse cannot read.

export const escapeIdentifier = sqlIdentifier
export const quoteIdentifier = sqlQuotedIdentifier
export const escapeString = sqlString

export function escapeNumber(value: number): string {
  if (!Number.isFinite(value)) throw new HogQLError('bad_argument', 'Only finite numbers are supported')
  return sqlNumber(value)
}

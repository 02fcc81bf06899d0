// HogQL → ClickHouse SQL, kept as one reviewed file of pairs. The same file's statements run against
// the real server in test/integration/hogql/snapshots.test.ts, so every snapshot is known to run.
import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { PRINTER_CASES, type PrinterCase, SNAPSHOT_TEAM } from './printer-cases.ts'

/** The snapshot entry of one case: a header naming the HogQL (and options), then the SQL. */
export async function snapshotEntry(c: PrinterCase, n: number): Promise<string> {
  const { clickhouse } = await compileHogQL(c.hogql, {
    teamId: SNAPSHOT_TEAM,
    timezone: c.timezone,
    values: c.values,
    filters: c.filters,
  })
  const head = [`-- [${n}] ${c.hogql.replace(/\s+/g, ' ')}`]
  if (c.timezone) head.push(`-- timezone: ${c.timezone}`)
  if (c.values) head.push(`-- values: ${JSON.stringify(c.values)}`)
  if (c.filters) head.push(`-- filters: ${c.filters}`)
  return `${head.join('\n')}\n${clickhouse};\n`
}

describe('printed SQL', () => {
  it('matches __snapshots__/printer.sql.txt', async () => {
    const entries = await Promise.all(PRINTER_CASES.map((c, i) => snapshotEntry(c, i + 1)))
    await expect(entries.join('\n')).toMatchFileSnapshot('./__snapshots__/printer.sql.txt')
  })
})

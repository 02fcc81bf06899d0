import { describe, expect, it } from 'vitest'
import type { TableAdmin } from '../../../src/clickhouse/table-admin.ts'
import {
  EVENT_DELETES_PENDING_PER_PROJECT,
  EVENT_DELETES_PER_PROJECT,
  EventDeletes,
} from '../../../src/persons/delete.ts'

function recorder() {
  const statements: string[] = []
  const tables = { alter: async (table: string, what: string) => void statements.push(`${table}: ${what}`) }
  return { statements, tables: tables as unknown as TableAdmin }
}

// Person deletes with their events: one mutation per interval for every project (issue 40).
describe('EventDeletes', () => {
  it('issues one mutation for every project pending, nothing when nothing is', async () => {
    const { statements, tables } = recorder()
    const d = new EventDeletes(
      tables,
      (err) => {
        throw err
      },
      60_000,
    )
    d.add(1, ['00000000-0000-0000-0000-00000000000a', '00000000-0000-0000-0000-00000000000b'])
    d.add(2, ['00000000-0000-0000-0000-00000000000c'])
    await d.flush()
    await d.flush()
    expect(statements).toEqual([
      "events: DELETE WHERE (team_id = 1 AND person_id IN (toUUID('00000000-0000-0000-0000-00000000000a'), toUUID('00000000-0000-0000-0000-00000000000b'))) OR (team_id = 2 AND person_id IN (toUUID('00000000-0000-0000-0000-00000000000c')))",
    ])
    await d.stop()
  })

  it('takes at most its share of one project per mutation, the rest in the next ones', async () => {
    const { statements, tables } = recorder()
    const d = new EventDeletes(tables, () => undefined, 60_000)
    const ids = Array.from({ length: EVENT_DELETES_PER_PROJECT + 5 }, (_, i) => `id-${i}`)
    d.add(7, ids)
    await d.flush()
    expect(statements[0]!.match(/toUUID/g)).toHaveLength(EVENT_DELETES_PER_PROJECT)
    await d.stop() // a graceful stop issues what is left
    expect(statements).toHaveLength(2)
    expect(statements[1]!.match(/toUUID/g)).toHaveLength(5)
  })

  it('refuses a project whose queue is full with a 429, others go on', () => {
    const { tables } = recorder()
    const d = new EventDeletes(tables, () => undefined, 60_000)
    d.add(
      3,
      Array.from({ length: EVENT_DELETES_PENDING_PER_PROJECT }, (_, i) => `id-${i}`),
    )
    expect(() => d.check(3, 1)).toThrow(expect.objectContaining({ status: 429 }))
    expect(() => d.check(4, 1)).not.toThrow()
    void d.stop()
  })
})

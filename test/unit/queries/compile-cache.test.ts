import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'
import { materializedProperties, setMaterializedProperties } from '../../../src/hogql/materialized.ts'
import { clearCompileCache, compileHogQLCached } from '../../../src/queries/compile-cache.ts'

const Q = "SELECT event, count() FROM events WHERE properties.$browser = 'Chrome' GROUP BY event"

describe('compileHogQLCached', () => {
  it('answers as compileHogQL does, for every option that changes the SQL', async () => {
    clearCompileCache()
    const variants = [
      { teamId: 7 },
      { teamId: 8 },
      { teamId: 7, timezone: 'Europe/Berlin' },
      { teamId: 7, defaultLimit: 5 },
    ]
    // twice round: the second answers come from the cache and must still differ per option
    for (let round = 0; round < 2; round++) {
      for (const opts of variants) {
        expect(await compileHogQLCached(Q, opts)).toEqual(await compileHogQL(Q, opts))
      }
    }
    const a = await compileHogQLCached('SELECT {x}', { teamId: 7, values: { x: 1 } })
    const b = await compileHogQLCached('SELECT {x}', { teamId: 7, values: { x: 2 } })
    expect(a.clickhouse).not.toBe(b.clickhouse)
  })

  it('a caller changing its answer does not change the next one', async () => {
    clearCompileCache()
    const first = await compileHogQLCached(Q, { teamId: 7 })
    first.columns.push('extra')
    first.clickhouse = 'changed'
    const second = await compileHogQLCached(Q, { teamId: 7 })
    expect(second).toEqual(await compileHogQL(Q, { teamId: 7 }))
  })

  it('a new materialized column compiles the text again', async () => {
    clearCompileCache()
    const before = materializedProperties()
    try {
      const plain = await compileHogQLCached(Q, { teamId: 7 })
      setMaterializedProperties(new Map([['$browser', 'mat_browser']]))
      const mat = await compileHogQLCached(Q, { teamId: 7 })
      expect(plain.clickhouse).not.toContain('mat_browser')
      expect(mat.clickhouse).toContain('mat_browser')
    } finally {
      setMaterializedProperties(before)
    }
  })
})

import { describe, expect, it } from 'vitest'
import { compileHogQL } from '../../../src/hogql/index.ts'

// numbers(offset, n): system.numbers reads and skips `offset` rows before the first one it returns,
// so the offset is bounded like the count (issue 40: numbers(9007199254740000, 10) scanned until the
// time limit).
describe('numbers() arguments', () => {
  it('refuses a literal offset or count over 10,000,000', async () => {
    await expect(
      compileHogQL('SELECT number FROM numbers(9007199254740000, 10)', { teamId: 1 }),
    ).rejects.toThrow('numbers() takes an offset of at most 10000000')
    await expect(compileHogQL('SELECT number FROM numbers(10000001)', { teamId: 1 })).rejects.toThrow(
      'numbers() returns at most 10000000 rows',
    )
  })

  it('takes bounded ones, and a computed offset is added to each number instead of skipped', async () => {
    expect(
      (await compileHogQL('SELECT number FROM numbers(10000000, 10)', { teamId: 1 })).clickhouse,
    ).toContain('LIMIT 10 OFFSET 10000000')
    const computed = (
      await compileHogQL('SELECT number FROM numbers(9007199254740000 + 1, 10)', { teamId: 1 })
    ).clickhouse
    expect(computed).toContain('plus(number, toUInt64(')
    expect(computed).not.toContain('OFFSET 9007199254740001')
  })
})

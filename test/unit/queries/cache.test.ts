import { describe, expect, it } from 'vitest'
import { revalidatable } from '../../../src/queries/cache.ts'

describe('revalidatable', () => {
  it('refuses SQL whose answer depends on when or by chance it runs', () => {
    for (const sql of [
      'SELECT count() FROM events WHERE timestamp > now() - INTERVAL 1 DAY',
      'SELECT now64(3)',
      'SELECT today()',
      'SELECT yesterday ()',
      'SELECT rand()',
      'SELECT randCanonical()',
      'SELECT generateUUIDv4()',
      // conservative: the text is not parsed, so a string that reads like a call counts too
      "SELECT 'now()' AS label",
    ]) {
      expect(revalidatable(sql), sql).toBe(false)
    }
  })

  it('accepts SQL over literal dates, and names that only contain those words', () => {
    for (const sql of [
      "SELECT count() FROM events WHERE timestamp >= toDateTime('2024-03-01 00:00:00', 'UTC')",
      "SELECT known_now, `today_count` FROM t WHERE brand('x') = 1",
    ]) {
      expect(revalidatable(sql), sql).toBe(true)
    }
  })
})

import { describe, expect, it } from 'vitest'
import { Fingerprints, revalidatable } from '../../../src/queries/cache.ts'

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

describe('Fingerprints', () => {
  /** A reader that answers the n-th read with `v<n>`, settled by hand; and a clock set by hand. */
  function setup(reuseMs = 1000) {
    let clock = 0
    const pending: ((v: string | undefined) => void)[] = []
    let reads = 0
    const f = new Fingerprints(
      () => {
        reads++
        return new Promise((resolve) => pending.push(resolve))
      },
      reuseMs,
      () => clock,
    )
    return {
      f,
      reads: () => reads,
      settle: (v: string | undefined) => pending.shift()!(v),
      tick: (ms: number) => (clock += ms),
    }
  }

  it('reads afresh for every check, even with a read in flight', async () => {
    const s = setup()
    const a = s.f.forCheck()
    const b = s.f.forCheck()
    expect(s.reads()).toBe(2)
    s.settle('v1')
    s.settle('v2')
    expect([await a, await b]).toEqual(['v1', 'v2'])
  })

  it('reuses the last read (or the one in flight) to store, within the window', async () => {
    const s = setup(1000)
    const a = s.f.forStore()
    s.tick(10)
    const b = s.f.forStore()
    expect(s.reads()).toBe(1)
    s.settle('v1')
    expect([await a, await b]).toEqual(['v1', 'v1'])
    s.tick(990)
    expect(await s.f.forStore()).toBe('v1')
    expect(s.reads()).toBe(1)
    s.tick(1)
    const c = s.f.forStore()
    expect(s.reads()).toBe(2)
    s.settle('v2')
    expect(await c).toBe('v2')
  })

  it('stores with the newest check', async () => {
    const s = setup()
    const a = s.f.forStore()
    s.settle('v1')
    await a
    const check = s.f.forCheck()
    s.settle('v2')
    await check
    expect(await s.f.forStore()).toBe('v2')
    expect(s.reads()).toBe(2)
  })

  it('does not reuse a failed read', async () => {
    const s = setup()
    const f = new Fingerprints(
      () => Promise.reject(new Error('down')),
      1000,
      () => 0,
    )
    expect(await f.forStore()).toBeUndefined()
    const a = s.f.forStore()
    s.settle(undefined)
    expect(await a).toBeUndefined()
    const b = s.f.forStore()
    expect(s.reads()).toBe(2)
    s.settle('v2')
    expect(await b).toBe('v2')
  })
})

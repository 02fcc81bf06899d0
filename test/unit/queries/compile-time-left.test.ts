import { describe, expect, it } from 'vitest'
import { compileTimeLeft, WALL_BUDGETS } from '../../../src/queries/compile-pool.ts'

describe('compileTimeLeft (budget 1,000 ms)', () => {
  it('without the CPU time, the wall clock is the budget', () => {
    expect(compileTimeLeft(1000, 999, undefined)).toBe(1)
    expect(compileTimeLeft(1000, 1000, undefined)).toBe(0)
  })

  it('a compile that used its budget in CPU time is refused', () => {
    expect(compileTimeLeft(1000, 1000, 1000)).toBe(0)
    expect(compileTimeLeft(1000, 1500, 1010)).toBe(0)
  })

  it('a compile waiting for a core gets the CPU time it has not used, looked at again then', () => {
    expect(compileTimeLeft(1000, 1000, 300)).toBe(700)
    expect(compileTimeLeft(1000, 3000, 990)).toBe(10)
  })

  it(`holds a worker at most ${WALL_BUDGETS} budgets on the wall clock`, () => {
    expect(WALL_BUDGETS).toBe(4)
    expect(compileTimeLeft(1000, 3900, 100)).toBe(100)
    expect(compileTimeLeft(1000, 4000, 100)).toBe(0)
  })
})

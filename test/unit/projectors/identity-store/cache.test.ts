import { describe, expect, it } from 'vitest'
import { StateCache, teamOfKey } from '../../../../src/projectors/identity-store/cache.ts'

describe('StateCache', () => {
  it('evicts the oldest value and then no longer answers for its team as complete', () => {
    const c = new StateCache(2)
    c.markComplete('live.t.1')
    c.remember('live.t.1.d.a', { personId: 'p' })
    c.remember('live.t.2.d.b', null)
    expect(c.isComplete('live.t.1')).toBe(true)
    c.remember('live.t.2.d.c', 1)
    expect(c.has('live.t.1.d.a')).toBe(false)
    expect(c.isComplete('live.t.1')).toBe(false)
    expect(c.get('live.t.2.d.b')).toBeNull()
    expect(c.get('live.t.9.d.x')).toBeUndefined()
  })

  it('names the team of a key, and nothing for other keys', () => {
    expect(teamOfKey('live.t.12.d.babc')).toBe('live.t.12')
    expect(teamOfKey('r1.t.3.gt')).toBe('r1.t.3')
    expect(teamOfKey('live.w.source')).toBeUndefined()
  })
})

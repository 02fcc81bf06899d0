import { describe, expect, it } from 'vitest'
import { FairQueue } from '../../../src/runtime/fair-queue.ts'

describe('FairQueue', () => {
  it('lets projects take turns, so a burst queues behind itself', () => {
    const q = new FairQueue<string, string>({ perKeyRunning: 10, perKeyQueued: 100 })
    for (let i = 0; i < 5; i++) q.push('b', `b${i}`)
    q.push('a', 'a0')
    const order = Array.from({ length: 6 }, () => q.take()!.item)
    expect(order).toEqual(['b0', 'a0', 'b1', 'b2', 'b3', 'b4'])
    expect(q.take()).toBeUndefined()
  })

  it('runs at most perKeyRunning jobs of a key at once', () => {
    const q = new FairQueue<string, string>({ perKeyRunning: 1, perKeyQueued: 100 })
    q.push('b', 'b0')
    q.push('b', 'b1')
    expect(q.take()).toEqual({ key: 'b', item: 'b0' })
    expect(q.take()).toBeUndefined()
    q.push('a', 'a0')
    expect(q.take()).toEqual({ key: 'a', item: 'a0' })
    q.done('b')
    expect(q.take()).toEqual({ key: 'b', item: 'b1' })
  })

  it('refuses past perKeyQueued waiting jobs of a key, others still queue', () => {
    const q = new FairQueue<string, number>({ perKeyRunning: 1, perKeyQueued: 2 })
    expect([q.push('b', 1), q.push('b', 2), q.push('b', 3)]).toEqual([true, true, false])
    expect(q.push('a', 1)).toBe(true)
    expect(q.size).toBe(3)
    expect(q.drain()).toHaveLength(3)
    expect(q.size).toBe(0)
  })
})

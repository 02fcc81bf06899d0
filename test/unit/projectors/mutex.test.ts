import { describe, expect, it } from 'vitest'
import { Mutex } from '../../../src/projectors/mutex.ts'

describe('Mutex', () => {
  it('runs sections one at a time, in order, and tells a running section that another waits', async () => {
    const m = new Mutex()
    const order: string[] = []
    let release!: () => void
    const first = m.run(async () => {
      order.push('a start')
      await new Promise<void>((r) => {
        release = r
      })
      order.push('a end')
    })
    await Promise.resolve()
    expect(m.contended).toBe(false)
    const second = m.run(async () => {
      order.push('b')
    })
    await Promise.resolve()
    expect(m.contended).toBe(true)
    release()
    await Promise.all([first, second])
    expect(order).toEqual(['a start', 'a end', 'b'])
    expect(m.contended).toBe(false)
  })
})

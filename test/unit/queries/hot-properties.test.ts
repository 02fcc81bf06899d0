import { describe, expect, it } from 'vitest'
import { HotProperties } from '../../../src/queries/hot-properties.ts'

describe('HotProperties', () => {
  it('names the properties whose queries reached the threshold, most time first, then starts over', () => {
    const h = new HotProperties()
    h.record(['$browser', '$os'], 30)
    h.record(['$browser'], 40)
    h.record(['$os'], 20)
    h.record(['plan'], 59.9)
    h.record(undefined, 100)
    h.record(['ignored'], 0)
    // $browser 70 s, $os 50 s, plan 59.9 s
    expect(h.take(50)).toEqual(['$browser', 'plan', '$os'])
    expect(h.take(0)).toEqual([])
    h.record(['$os'], 10)
    expect(h.take(60)).toEqual([])
    expect(h.take(0)).toEqual([])
  })
})

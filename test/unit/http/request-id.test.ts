import { describe, expect, it } from 'vitest'
import { requestId } from '../../../src/http/server.ts'

describe('requestId', () => {
  it('gives distinct version-7 uuids across refills of its random pool', () => {
    const ids = Array.from({ length: 1000 }, () => requestId())
    expect(new Set(ids).size).toBe(1000)
    for (const id of ids)
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    // the first 48 bits are the millisecond clock
    const ms = parseInt(ids[0]!.replace(/-/g, '').slice(0, 12), 16)
    expect(Math.abs(ms - Date.now())).toBeLessThan(60_000)
  })
})

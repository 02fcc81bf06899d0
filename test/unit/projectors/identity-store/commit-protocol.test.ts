import { describe, expect, it } from 'vitest'
import { CommitLog, visibleValue } from '../../../../src/projectors/identity-store/commit-protocol.ts'

describe('visibleValue', () => {
  const stored = { v: 'new', at: ['lane', 10] as [string, number], p: 'old' }
  it('shows the value once its batch is committed (watermark reached) and the previous one before', () => {
    expect(visibleValue(stored, 10)).toBe('new')
    expect(visibleValue(stored, 11)).toBe('new')
    expect(visibleValue(stored, 9)).toBe('old')
    expect(visibleValue(undefined, 9)).toBeNull()
  })
})

describe('CommitLog', () => {
  it('tells a read that overlapped a commit of its key that it went stale, and others not', () => {
    const log = new CommitLog()
    const gen = log.generation
    expect(log.wentStale(gen, 'k1')).toBe(false)
    log.record(['k1'])
    expect(log.wentStale(gen, 'k1')).toBe(true)
    expect(log.wentStale(gen, 'k2')).toBe(false)
    expect(log.wentStale(gen, undefined)).toBe(true)
  })

  it('counts every read in flight as stale after a reset or after more commits than it remembers', () => {
    const log = new CommitLog()
    const gen = log.generation
    log.reset()
    expect(log.wentStale(gen, 'k')).toBe(true)
    const later = log.generation
    for (let i = 0; i < 20; i++) log.record([`k${i}`])
    expect(log.wentStale(later, 'zzz')).toBe(true)
  })
})

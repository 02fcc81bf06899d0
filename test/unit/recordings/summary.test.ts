// Expected values are PostHog's (plugin-server tests of the session replay summary,
// process-event.test.ts "session recording process event"), applied to the same rrweb events.
import { describe, expect, it } from 'vitest'
import { activeMilliseconds, summarizeChunk } from '../../../src/recordings/summary.ts'

const T = 1682449093469 // 2023-04-25 18:58:13.469

describe('summarizeChunk (PostHog rules)', () => {
  it('counts clicks (click, dbl click, touch end, right click) and mouse activity', () => {
    const events = [
      { timestamp: T, type: 3, data: { source: 2, type: 2 }, windowId: '1' },
      { timestamp: T, type: 3, data: { source: 2, type: 4 }, windowId: '1' },
      { timestamp: T, type: 3, data: { source: 2, type: 9 }, windowId: '1' },
      { timestamp: T, type: 3, data: { source: 2, type: 3 }, windowId: '1' },
      { timestamp: T, type: 3, data: { source: 6 }, windowId: '1' },
      { timestamp: T, type: 3, data: { source: 1 }, windowId: '1' },
    ]
    expect(summarizeChunk(events)).toEqual({
      first_ms: T,
      last_ms: T,
      click_count: 4,
      keypress_count: 0,
      mouse_activity_count: 6,
      active_ms: 1,
      console_log_count: 0,
      console_warn_count: 0,
      console_error_count: 0,
      first_url: null,
      size: 469,
      event_count: 6,
    })
  })

  it('counts a keypress', () => {
    const s = summarizeChunk([{ timestamp: T, type: 3, data: { source: 5 }, windowId: '1' }])!
    expect([s.keypress_count, s.click_count, s.mouse_activity_count, s.active_ms, s.size]).toEqual([
      1, 0, 0, 1, 73,
    ])
  })

  it('folds console levels into info, warn and error', () => {
    const log = (level: string) => ({
      type: 6,
      data: { plugin: 'rrweb/console@1', payload: { level } },
      timestamp: T,
      windowId: '1',
    })
    const events = [
      { timestamp: T, type: 3, data: { source: 5 }, windowId: '1' },
      ...['log', 'log', 'warn', 'warn', 'warn', 'error', 'group', 'trace', 'assert', 'countReset'].map(log),
    ]
    const s = summarizeChunk(events)!
    expect([s.console_log_count, s.console_warn_count, s.console_error_count]).toEqual([4, 4, 2])
    expect([s.keypress_count, s.size, s.event_count]).toEqual([1, 1232, 11])
  })

  it('takes the first URL from a meta event or a custom event payload, in event order', () => {
    const meta = summarizeChunk([
      { timestamp: 1682449093693, type: 3, data: {}, windowId: '1' },
      { timestamp: 1682449093469, type: 4, data: { href: 'http://127.0.0.1:8000/the/url' }, windowId: '1' },
    ])!
    expect(meta).toMatchObject({
      first_url: 'http://127.0.0.1:8000/the/url',
      first_ms: 1682449093469,
      last_ms: 1682449093693,
      active_ms: 0,
      size: 163,
    })
    const custom = summarizeChunk([
      {
        timestamp: 1682449093693,
        type: 5,
        data: { payload: { href: 'http://127.0.0.1:8000/home' } },
        windowId: '1',
      },
      {
        timestamp: 1682449093469,
        type: 4,
        data: { href: 'http://127.0.0.1:8000/second/url' },
        windowId: '1',
      },
    ])!
    expect(custom.first_url).toBe('http://127.0.0.1:8000/home')
    const anyKey = summarizeChunk([
      {
        timestamp: 1682449093469,
        type: 5,
        data: { payload: { 'the-page-url': 'http://127.0.0.1:8000/second/url' } },
        windowId: '1',
      },
      {
        timestamp: 1682449093693,
        type: 5,
        data: { payload: { href: 'http://127.0.0.1:8000/my-spa' } },
        windowId: '1',
      },
    ])!
    expect(anyKey.first_url).toBe('http://127.0.0.1:8000/my-spa')
  })

  it('leaves negative timestamps out of the time span', () => {
    const s = summarizeChunk([
      { timestamp: 1682449093000, type: 3, data: { source: 2, type: 2 }, windowId: '1' },
      { timestamp: 1682449095000, type: 3, data: { source: 2, type: 2 }, windowId: '1' },
      { timestamp: -922167545571, type: 3, data: { source: 2, type: 2 }, windowId: '1' },
    ])!
    expect([s.first_ms, s.last_ms, s.click_count, s.active_ms]).toEqual([1682449093000, 1682449095000, 3, 1])
  })

  it('sums the activity of overlapping windows separately', () => {
    const events = [
      { timestamp: 1682449093000, type: 3, data: { source: 2, type: 2 }, windowId: '1' },
      { timestamp: 1682449094000, type: 3, data: { source: 2, type: 2 }, windowId: '1' },
      { timestamp: 1682449095000, type: 3, data: { source: 2, type: 2 }, windowId: '2' },
      { timestamp: 1682449097000, type: 3, data: { source: 2, type: 2 }, windowId: '2' },
      { timestamp: 1682449096000, type: 3, data: { source: 2, type: 2 }, windowId: '3' },
      { timestamp: 1682449099000, type: 3, data: { source: 2, type: 2 }, windowId: '3' },
    ]
    expect(summarizeChunk(events)).toMatchObject({ active_ms: 6000, click_count: 6, size: 487 })
  })

  it('is null when no event has a usable timestamp', () => {
    expect(summarizeChunk([{ type: 3, data: { source: 1 } }])).toBeNull()
  })
})

describe('activeMilliseconds (worked by hand)', () => {
  const move = (t: number) => ({ timestamp: t, type: 3, data: { source: 1 } })
  const mutation = (t: number) => ({ timestamp: t, type: 3, data: { source: 0 } })

  it('ends an active segment after 5 s without activity', () => {
    // active 0..3000 (3 s); the mutation at 9000 is more than 5 s after the last activity, so it opens
    // an inactive segment; activity again at 13000..14000 (1 s)
    expect(activeMilliseconds([move(0), move(3000), mutation(9000), move(13000), move(14000)])).toBe(4000)
  })

  it('lets an event within 5 s of the last activity extend the active segment', () => {
    // 0..8000 is one active segment (the mutation at 8000 is exactly 5 s after the move at 3000),
    // then 13000..14000: 8 s + 1 s
    expect(activeMilliseconds([move(0), move(3000), mutation(8000), move(13000), move(14000)])).toBe(9000)
  })

  it('does not count inactive stretches', () => {
    expect(activeMilliseconds([mutation(0), mutation(60_000)])).toBe(0)
  })
})

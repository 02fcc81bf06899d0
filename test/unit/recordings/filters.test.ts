import { describe, expect, it } from 'vitest'
import { decodeParams, parseRecordingsFilter } from '../../../src/recordings/filters.ts'
import { retentionCutoff } from '../../../src/recordings/retention.ts'
import { expiryOf } from '../../../src/recordings/serialize.ts'

const now = Date.parse('2024-05-10T15:30:00Z')
const parse = (q: Record<string, string>, timezone = 'UTC') =>
  parseRecordingsFilter(decodeParams(q), { timezone, nowMs: now })

describe('the recordings list parameters', () => {
  it('defaults to the last three days from the start of that day, newest first, 50 per page', () => {
    expect(parse({})).toMatchObject({
      fromMs: Date.parse('2024-05-07T00:00:00Z'),
      toMs: now,
      order: 'start_time',
      direction: 'DESC',
      limit: 50,
      offset: 0,
      operand: 'AND',
    })
  })

  it('reads dates in the project zone; a date-only date_to is the end of that day', () => {
    const f = parse({ date_from: '2024-05-01', date_to: '2024-05-02' }, 'Europe/Berlin')
    expect(f.fromMs).toBe(Date.parse('2024-04-30T22:00:00Z'))
    expect(f.toMs).toBe(Date.parse('2024-05-02T21:59:59.999Z'))
    expect(parse({ date_from: 'all' }).fromMs).toBeNull()
  })

  it('JSON-decodes parameters as PostHog does', () => {
    const f = parse({
      distinct_ids: '["a","b"]',
      having_predicates: '[{"type":"recording","key":"duration","value":"60","operator":"gt"}]',
      console_log_filters: '[{"key":"level","value":["log","error"],"operator":"exact","type":"log_entry"}]',
      events: '[{"id":"$pageview","type":"events"},{"id":null,"type":"events"}]',
      session_ids: '["123"]',
    })
    expect(f.distinctIds).toEqual(['a', 'b'])
    expect(f.predicates).toEqual([{ key: 'duration', operator: 'gt', values: [60] }])
    expect(f.consoleLevels).toEqual([['info', 'error']])
    expect(f.events).toEqual(['$pageview', null])
    expect(f.sessionIds).toEqual(['123'])
  })

  it('refuses what it does not support', () => {
    expect(() => parse({ order: 'nope' })).toThrow()
    expect(() => parse({ having_predicates: '[{"key":"duration","operator":"gt","value":"x"}]' })).toThrow()
    expect(() =>
      parse({ having_predicates: '[{"key":"snapshot_source","operator":"gt","value":"web"}]' }),
    ).toThrow()
    expect(() => parse({ console_log_filters: '[{"key":"level","value":["fatal"]}]' })).toThrow()
    expect(() => parse({ limit: '1001' })).toThrow()
    expect(() => parse({ person_uuid: 'not-a-uuid' })).toThrow()
  })
})

describe('retention dates', () => {
  it('expires a recording at the first day boundary after its last event plus the retention days', () => {
    expect(retentionCutoff(30, now)).toBe(Date.parse('2024-04-10T00:00:00Z'))
    // last event on 2024-04-09 23:00 is before the cutoff of 2024-05-10: expired that day
    expect(expiryOf(Date.parse('2024-04-09T23:00:00Z'), 30)).toBe(Date.parse('2024-05-10T00:00:00Z'))
    expect(Date.parse('2024-04-09T23:00:00Z') < retentionCutoff(30, now)).toBe(true)
    expect(Date.parse('2024-04-10T00:00:00Z') < retentionCutoff(30, now)).toBe(false)
  })
})

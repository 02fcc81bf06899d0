import { describe, expect, it } from 'vitest'
import { eventTimeMs, normalizeEvent, parseEnvelope } from '../../../src/capture/normalize.ts'
import { OverflowDetector } from '../../../src/capture/overflow.ts'

const NOW = Date.parse('2026-06-01T12:00:00.000Z')

describe('eventTimeMs (PostHog timestamp rules)', () => {
  it('removes client clock skew when timestamp and sent_at are both given', () => {
    // client clock 5 minutes fast; event 2 s before sending → 2 s before server receive time
    const t = eventTimeMs({ timestamp: '2026-06-01T12:04:58.000Z' }, '2026-06-01T12:05:00.000Z', NOW)
    expect(new Date(t).toISOString()).toBe('2026-06-01T11:59:58.000Z')
  })
  it('prefers the event’s own sent_at over the request’s', () => {
    const t = eventTimeMs(
      { timestamp: '2026-06-01T10:00:00.500Z', sent_at: '2026-06-01T10:00:01.000Z' },
      '2000-01-01T00:00:00Z',
      NOW,
    )
    expect(new Date(t).toISOString()).toBe('2026-06-01T11:59:59.500Z')
  })
  it('uses offset (ms before receipt) when there is no timestamp', () => {
    expect(eventTimeMs({ offset: 1500 }, undefined, NOW)).toBe(NOW - 1500)
  })
  it('keeps a timestamp without sent_at, and falls back to now when there is none or it is invalid', () => {
    expect(eventTimeMs({ timestamp: '2020-01-01T00:00:00.123Z' }, undefined, NOW)).toBe(
      Date.parse('2020-01-01T00:00:00.123Z'),
    )
    expect(eventTimeMs({}, undefined, NOW)).toBe(NOW)
    expect(eventTimeMs({ timestamp: 'yesterday-ish' }, undefined, NOW)).toBe(NOW)
  })
  it('replaces a timestamp more than 23 hours in the future with now', () => {
    expect(eventTimeMs({ timestamp: '2026-06-02T12:00:00Z' }, undefined, NOW)).toBe(NOW)
    expect(eventTimeMs({ timestamp: '2026-06-02T10:00:00Z' }, undefined, NOW)).toBe(
      Date.parse('2026-06-02T10:00:00Z'),
    )
  })
})

describe('normalizeEvent', () => {
  const ctx = { teamId: 7, nowMs: NOW, ip: '10.0.0.1', sentAt: undefined }
  it('keeps a valid client uuid (lower-cased) and mints a UUIDv7 otherwise', () => {
    const kept = normalizeEvent(
      { event: 'e', distinct_id: 'd', uuid: 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' },
      ctx,
    )
    expect('ok' in kept && kept.ok.uuid).toBe('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11')
    const minted = normalizeEvent({ event: 'e', distinct_id: 'd', uuid: 'not-a-uuid' }, ctx)
    expect('ok' in minted && minted.ok.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/)
  })
  it('drops by PostHog’s rules', () => {
    expect(normalizeEvent({ distinct_id: 'd' }, ctx)).toEqual({ drop: 'no_event_name' })
    expect(normalizeEvent({ event: '  ', distinct_id: 'd' }, ctx)).toEqual({ drop: 'no_event_name' })
    expect(normalizeEvent({ event: 'e' }, ctx)).toEqual({ drop: 'no_distinct_id' })
    expect(normalizeEvent({ event: 'e', distinct_id: '   ' }, ctx)).toEqual({ drop: 'no_distinct_id' })
    expect(normalizeEvent({ event: 'e', distinct_id: ['a'] }, ctx)).toEqual({ drop: 'invalid_distinct_id' })
    expect(normalizeEvent('text', ctx)).toEqual({ drop: 'invalid_event' })
    expect(normalizeEvent({ event: 'e', distinct_id: 'd', properties: [1] }, ctx)).toEqual({
      drop: 'invalid_event',
    })
  })
  it('does not drop a user whose id looks like a drop reason', () => {
    const n = normalizeEvent({ event: 'e', distinct_id: 'no_distinct_id' }, ctx)
    expect('ok' in n && n.ok.distinct_id).toBe('no_distinct_id')
  })
  it('writes each event time as ISO 8601 with milliseconds, minute after minute', () => {
    const at = (timestamp: unknown) => {
      const n = normalizeEvent({ event: 'e', distinct_id: 'd', timestamp }, ctx)
      return 'ok' in n ? n.ok.timestamp : n.drop
    }
    const cases: [unknown, string][] = [
      ['2026-06-01T11:59:59.999Z', '2026-06-01T11:59:59.999Z'],
      ['2026-06-01T12:00:00.000Z', '2026-06-01T12:00:00.000Z'],
      ['2026-06-01T12:00:07.5Z', '2026-06-01T12:00:07.500Z'],
      ['2026-06-01T12:00:59.04Z', '2026-06-01T12:00:59.040Z'],
      ['2026-06-01T13:00:00+01:00', '2026-06-01T12:00:00.000Z'],
      ['2024-02-29T23:59:59.999Z', '2024-02-29T23:59:59.999Z'],
      ['2024-03-01T00:00:00.001Z', '2024-03-01T00:00:00.001Z'],
      ['1970-01-01T00:00:00.000Z', '1970-01-01T00:00:00.000Z'],
      [1, '1970-01-01T00:00:00.001Z'],
      [61_234.5, '1970-01-01T00:01:01.235Z'],
      [0, '1970-01-01T00:00:00.000Z'],
      [-0, '1970-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.000Z', '2026-06-01T12:00:00.000Z'],
      ['2000-12-31T23:59:09.009Z', '2000-12-31T23:59:09.009Z'],
    ]
    for (const [timestamp, iso] of cases) expect(at(timestamp)).toBe(iso)
  })
  it('takes distinct_id from properties and caps its length at 200', () => {
    const n = normalizeEvent({ event: 'e', properties: { distinct_id: 'x'.repeat(300) } }, ctx)
    expect('ok' in n && n.ok.distinct_id.length).toBe(200)
  })
})

describe('parseEnvelope', () => {
  it('finds the token in the body, the first event, or its properties', () => {
    expect(parseEnvelope({ api_key: 'a', batch: [] }, {}).token).toBe('a')
    expect(parseEnvelope([{ event: 'e', properties: { token: 'b' } }], {}).token).toBe('b')
    expect(parseEnvelope({ event: 'e', $token: 'c' }, {}).token).toBe('c')
    expect(parseEnvelope({ event: 'e' }, { token: 'q' }).token).toBe('q')
  })
  it('takes a body without batch as one event, and refuses a batch that is not an array', () => {
    const one = parseEnvelope({ event: 'e', api_key: 'a', historical_migration: true }, {})
    expect(one.items).toEqual([{ event: 'e', api_key: 'a', historical_migration: true }])
    expect(one.historical).toBe(true)
    for (const batch of ['x', {}, null, 5])
      expect(() => parseEnvelope({ api_key: 'a', batch }, {}), String(batch)).toThrow(
        'batch must be an array of events.',
      )
  })
  it('reads a token in properties without other properties being objects of any kind', () => {
    expect(parseEnvelope([{ event: 'e', properties: { token: 'b', nested: { a: [1] } } }], {}).token).toBe(
      'b',
    )
    expect(() => parseEnvelope([{ event: 'e', properties: ['token'] }], {})).toThrow('API key not found')
  })
  it('reads historical_migration only when it is true', () => {
    expect(parseEnvelope({ api_key: 'a', batch: [], historical_migration: true }, {}).historical).toBe(true)
    expect(parseEnvelope({ api_key: 'a', batch: [], historical_migration: 'yes' }, {}).historical).toBe(false)
  })
})

describe('OverflowDetector', () => {
  it('lets a distinct_id burst up to the rate, then refills at the rate', () => {
    const d = new OverflowDetector(3)
    const t = 1_000_000
    expect([1, 2, 3, 4].map(() => d.allow(1, 'hot', t))).toEqual([true, true, true, false])
    expect(d.allow(1, 'other', t)).toBe(true)
    expect(d.allow(2, 'hot', t)).toBe(true)
    // one token back after a third of a second
    expect(d.allow(1, 'hot', t + 334)).toBe(true)
    expect(d.allow(1, 'hot', t + 334)).toBe(false)
  })
})

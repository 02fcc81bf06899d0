// The live figures' pure parts: per-second windows, subject matching, projection tracking, the tail.
import { describe, expect, it } from 'vitest'
import { ProjectionTracker } from '../../../src/console/live/projection-tracker.ts'
import { SecondCounts } from '../../../src/console/live/second-counts.ts'
import { consumerCovers, parseEventsSubject, subjectMatches } from '../../../src/console/live/subjects.ts'
import { matchesTail, summarize, TailQueue } from '../../../src/console/live/tail.ts'
import { readChunk } from '../../../src/console/live/log-watch.ts'

const T0 = 1_700_000_000_000 // a whole second

describe('SecondCounts', () => {
  it('counts per second over the window, oldest first, zero where nothing happened', () => {
    const c = new SecondCounts(5)
    c.add(T0, 2)
    c.add(T0 + 999, 1)
    c.add(T0 + 2000, 4)
    expect(c.series(T0 + 2500)).toEqual({ start: T0 / 1000 - 2, counts: [0, 0, 3, 0, 4] })
    expect(c.total).toBe(7)
  })

  it('drops seconds that left the window and ignores a late second older than its slot', () => {
    const c = new SecondCounts(3)
    c.add(T0, 1)
    c.add(T0 + 3000, 5) // same slot, newer second: replaces
    c.add(T0, 9) // older than the slot's second now: ignored
    expect(c.series(T0 + 3000).counts).toEqual([0, 0, 5])
    expect(c.activeAt(T0 + 5000)).toBe(true)
    expect(c.activeAt(T0 + 6000)).toBe(false)
  })
})

describe('subjects', () => {
  it('matches NATS wildcards', () => {
    expect(subjectMatches('events.live.>', 'events.live.3')).toBe(true)
    expect(subjectMatches('events.live.>', 'events.live')).toBe(false)
    expect(subjectMatches('events.*.3', 'events.overflow.3')).toBe(true)
    expect(subjectMatches('events.*.3', 'events.overflow.30')).toBe(false)
    expect(subjectMatches('events.live.3', 'events.live.3.x')).toBe(false)
    expect(consumerCovers([], 'events.live.0')).toBe(true)
    expect(consumerCovers(['events.historical.>'], 'events.live.0')).toBe(false)
  })

  it('reads lane and partition of an event subject', () => {
    expect(parseEventsSubject('events.historical.12')).toEqual({ lane: 'historical', partition: 12 })
    expect(parseEventsSubject('events.nope.1')).toBeUndefined()
    expect(parseEventsSubject('dlq.events')).toBeUndefined()
  })
})

describe('ProjectionTracker', () => {
  it('releases messages at or below the ack floor, per subject and team', () => {
    const started = T0
    const t = new ProjectionTracker(started)
    t.see('events.live.0', { seq: 10, team: 1, events: 3, storedMs: T0 - 5000 }) // caught up on
    t.see('events.live.0', { seq: 11, team: 2, events: 4, storedMs: T0 + 100 })
    t.see('events.live.0', { seq: 13, team: 1, events: 5, storedMs: T0 + 200 })
    t.see('events.live.1', { seq: 12, team: 1, events: 7, storedMs: T0 + 150 })
    expect(t.unprojected('events.live.0', 1)).toBe(8)
    expect(t.teamPending(1)).toBe(15)
    // The floor passes 10 and 11 but not 13; seq 10 predates the watch: its own time is used.
    expect(t.advance('events.live.0', 12, T0 + 1000)).toEqual([
      { team: 1, events: 3, atMs: T0 - 5000 },
      { team: 2, events: 4, atMs: T0 + 1000 },
    ])
    expect(t.unprojected('events.live.0', 1)).toBe(5)
    expect(t.unprojected('events.live.0', 2)).toBe(0)
    expect(t.advance('events.live.0', 12, T0 + 2000)).toEqual([])
    expect(t.teamPending(1)).toBe(12)
  })

  it('forgets the oldest messages past its bound and says how many', () => {
    const t = new ProjectionTracker(T0, 2)
    for (let seq = 1; seq <= 5; seq++) t.see('s', { seq, team: 1, events: 1, storedMs: T0 + seq })
    expect(t.forgotten).toBe(3)
    expect(t.unprojected('s', 1)).toBe(2)
    expect(t.advance('s', 5, T0 + 10).map((p) => p.events)).toEqual([1, 1])
  })
})

describe('the tail', () => {
  const e = { uuid: 'u', event: 'Signed Up', distinct_id: 'Alice-1', timestamp: 't', properties: {} }

  it('filters by case-insensitive substrings of event and distinct id', () => {
    expect(matchesTail({}, e)).toBe(true)
    expect(matchesTail({ event: 'signed' }, e)).toBe(true)
    expect(matchesTail({ event: 'login' }, e)).toBe(false)
    expect(matchesTail({ event: 'up', distinctId: 'alice' }, e)).toBe(true)
    expect(matchesTail({ distinctId: 'bob' }, e)).toBe(false)
  })

  it('cuts long values and many properties, and says so', () => {
    const props: Record<string, unknown> = { obj: { a: 1 }, long: 'x'.repeat(300) }
    for (let i = 0; i < 40; i++) props[`k${i}`] = i
    const s = summarize({ ...e, properties: props }, 'live')
    expect(s.truncated).toBe(true)
    expect(Object.keys(s.properties)).toHaveLength(30)
    expect(s.properties.obj).toBe('{"a":1}')
    expect(s.properties.long).toBe(`${'x'.repeat(200)}…`)
    expect(summarize({ ...e, properties: { a: 1 } }, 'live').truncated).toBe(false)
  })

  it('keeps the newest events of a burst and counts the rest', () => {
    const q = new TailQueue(3)
    for (let i = 0; i < 10; i++) q.push({ ...e, uuid: String(i) }, 'live')
    const out = q.take()
    expect(out.events.map((x) => x.uuid)).toEqual(['7', '8', '9'])
    expect(out.skipped).toBe(7)
    expect(q.take()).toEqual({ events: [], skipped: 0 })
  })
})

describe('readChunk', () => {
  const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v))

  it('reads a message as capture writes it now: one event per line, a bad line skipped', () => {
    const text =
      '{"v":3,"team_id":9,"lane":"live"}\n' +
      '{"uuid":"a","event":"x","distinct_id":"d","timestamp":"t","properties":{"p":1}}\n' +
      '{"uuid": nope\n' +
      '{"uuid":"c","event":"z","distinct_id":"e"}'
    expect(readChunk(new TextEncoder().encode(text))).toEqual({
      team: 9,
      count: 3,
      events: [
        { uuid: 'a', event: 'x', distinct_id: 'd', timestamp: 't', properties: { p: 1 } },
        { uuid: 'c', event: 'z', distinct_id: 'e', timestamp: '', properties: {} },
      ],
    })
  })

  it('reads the team and the well-formed events of a log message', () => {
    const c = readChunk(
      enc({
        v: 1,
        team_id: 7,
        lane: 'live',
        events: [
          { uuid: 'a', event: 'x', distinct_id: 'd', timestamp: 't', properties: { p: 1 } },
          { uuid: 'b', event: 'y' },
        ],
      }),
    )
    expect(c).toEqual({
      team: 7,
      count: 2,
      events: [{ uuid: 'a', event: 'x', distinct_id: 'd', timestamp: 't', properties: { p: 1 } }],
    })
  })

  it('gives nothing for what is not an event chunk', () => {
    expect(readChunk(new TextEncoder().encode('not json'))).toBeUndefined()
    expect(readChunk(new TextEncoder().encode('{"v":3,"team_id":"7"}\n{}'))).toBeUndefined()
    expect(readChunk(enc({ events: [] }))).toBeUndefined()
    expect(readChunk(enc(null))).toBeUndefined()
  })
})

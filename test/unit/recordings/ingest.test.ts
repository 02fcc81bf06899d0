import { randomBytes } from 'node:crypto'
import { gunzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { chunkLines, groupSnapshots, snapshotMessages } from '../../../src/recordings/ingest.ts'
import { decodeMessage, encodeMessage } from '../../../src/recordings/message.ts'

const ctx = { teamId: 7, nowMs: Date.parse('2024-05-01T10:00:00Z'), ip: null, sentAt: undefined }
const snap = (session: string, window: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  event: '$snapshot',
  distinct_id: 'd1',
  properties: { $session_id: session, $window_id: window, $snapshot_data: data, ...extra },
})
const ev = (t: number, extra: object = {}) => ({ type: 3, timestamp: t, data: { source: 1 }, ...extra })

describe('groupSnapshots', () => {
  it('groups by session and window in arrival order and counts what it drops', () => {
    const { groups, drops } = groupSnapshots(
      [
        snap('s1', 'w1', [ev(1), ev(2)]),
        snap('s1', 'w2', ev(3)),
        snap('s1', 'w1', [ev(4)]),
        { event: '$pageview', distinct_id: 'd1', properties: {} },
        snap('', 'w1', [ev(5)]),
        snap('s2', 'w1', []),
        snap('s2', 'w1', [null, 5, 'x']),
        { event: '$snapshot', properties: { $session_id: 's3', $snapshot_data: [ev(6)] } },
      ],
      ctx,
    )
    expect(groups.map((g) => [g.sessionId, g.windowId, g.events.length])).toEqual([
      ['s1', 'w1', 3],
      ['s1', 'w2', 1],
    ])
    expect(Object.fromEntries(drops)).toEqual({
      not_a_snapshot: 1,
      no_session_id: 1,
      no_snapshot_data: 2,
      no_distinct_id: 1,
    })
  })

  it('keeps the snapshot source and library', () => {
    const { groups } = groupSnapshots(
      [snap('s', 'w', [ev(1)], { $snapshot_source: 'mobile', $lib: 'web' })],
      ctx,
    )
    expect(groups[0]).toMatchObject({ source: 'mobile', library: 'web', distinctId: 'd1' })
  })
})

describe('chunkLines', () => {
  it('writes [window_id, event] lines and cuts chunks at the byte limit', () => {
    const g = {
      sessionId: 's',
      windowId: 'w',
      distinctId: 'd',
      source: 'web',
      library: '',
      events: [ev(1), ev(2), ev(3)],
    }
    const line = `["w",${JSON.stringify(ev(1))}]\n`
    const chunks = chunkLines(g, line.length * 2)
    expect(chunks.map((c) => c.lines.length)).toEqual([2, 1])
    expect(chunks[0]!.lines[0]).toBe(line)
    // PostHog's size: the events as one JSON array
    expect(chunks[0]!.jsonBytes).toBe(JSON.stringify([ev(1), ev(2)]).length)
  })
})

describe('snapshotMessages', () => {
  it('gzips each chunk into one message with its summary, ids derived from the content', async () => {
    const items = [snap('s1', 'w1', [ev(1000), ev(2000, { data: { source: 2, type: 2 } })])]
    const opts = { ...ctx, partitions: 4, maxMessageBytes: 1024 * 1024 }
    const a = await snapshotMessages(items, opts)
    const b = await snapshotMessages(items, { ...opts, nowMs: opts.nowMs + 5000 })
    expect(a.messages).toHaveLength(1)
    expect(a.messages[0]!.msgId).toBe(b.messages[0]!.msgId)
    const m = decodeMessage(a.messages[0]!.payload)
    if (!('data' in m)) throw new Error('expected a chunk')
    expect(m.header).toMatchObject({ team_id: 7, session_id: 's1', window_id: 'w1', part: 0, parts: 1 })
    expect(m.header.stats).toMatchObject({
      first_ms: 1000,
      last_ms: 2000,
      click_count: 1,
      mouse_activity_count: 2,
    })
    expect(gunzipSync(m.data).toString()).toBe(
      `["w1",${JSON.stringify(ev(1000))}]\n["w1",${JSON.stringify(ev(2000, { data: { source: 2, type: 2 } }))}]\n`,
    )
  })

  it('splits a gzip member larger than a message into fragments that reassemble', async () => {
    // incompressible data: the member is about as large as the event
    const big = { type: 2, timestamp: 5, data: { blob: randomBytes(300_000).toString('base64') } }
    const { messages } = await snapshotMessages([snap('s', 'w', [big])], {
      ...ctx,
      partitions: 1,
      maxMessageBytes: 128 * 1024,
    })
    expect(messages.length).toBeGreaterThanOrEqual(2)
    const parts = messages.map((x) => decodeMessage(x.payload))
    const ids = new Set(parts.map((p) => ('data' in p ? p.header.chunk_id : '')))
    expect(ids.size).toBe(1)
    expect(messages.every((x) => x.payload.length <= 128 * 1024)).toBe(true)
    const whole = Buffer.concat(parts.map((p) => ('data' in p ? p.data : Buffer.alloc(0))))
    expect(JSON.parse(gunzipSync(whole).toString())).toEqual(['w', big])
    expect(new Set(messages.map((x) => x.msgId)).size).toBe(messages.length)
  })

  it('drops a chunk whose events have no timestamp', async () => {
    const { messages, drops } = await snapshotMessages([snap('s', 'w', [{ type: 3, data: {} }])], {
      ...ctx,
      partitions: 1,
      maxMessageBytes: 1024 * 1024,
    })
    expect(messages).toEqual([])
    expect(drops.get('no_timestamps')).toBe(1)
  })
})

describe('message codec', () => {
  it('refuses what Burrow did not write', () => {
    expect(() => decodeMessage(Buffer.from('garbage'))).toThrow()
    expect(() => decodeMessage(Buffer.from('{"v":1,"kind":"chunk"}\nxx'))).toThrow()
    const del = {
      v: 1 as const,
      kind: 'delete' as const,
      team_id: 1,
      session_id: 's',
      deleted_at: 'x',
      deleted_by: 2,
    }
    expect(decodeMessage(encodeMessage(del))).toEqual({ header: del })
  })
})

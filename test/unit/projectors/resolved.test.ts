import { describe, expect, it } from 'vitest'
import type { BatchRows, EventRow } from '../../../src/projectors/batch.ts'
import { parseResolved, resolvedPieces } from '../../../src/projectors/resolved.ts'
import { eventLine, type EventRow as EventFields } from '../../../src/projectors/rows.ts'

const person = { email: 'a@b.c', plan: { tier: 'pro', seats: 3 } }

function fields(seq: number, offset: number): EventFields {
  return {
    teamId: 2,
    uuid: `0190a4f0-0000-7000-8000-${String(seq * 1000 + offset).padStart(12, '0')}`,
    event: '$pageview',
    distinctId: `user\t${offset}`,
    personId: '5f0c4bb2-8a4e-5c57-9c2e-3d0e1f6a7b8c',
    timestampMs: Date.UTC(2024, 4, 1, 12, 0, offset % 60),
    properties: {
      $current_url: 'https://x.y/?q=1',
      nested: { a: [1, 'two'], b: null },
      text: 'line\nbreak é',
    },
    personProperties: person,
    personPropertiesShared: true,
    elementsChain: 'a:href="/x"',
    sessionId: 'sess-1',
    groups: ['org-1', '', '', '', ''],
    createdAtMs: Date.UTC(2024, 4, 1, 12, 1),
    seq,
    offset,
  }
}

const row = (seq: number, offset: number): EventRow => {
  const f = fields(seq, offset)
  return {
    line: '',
    fields: f,
    timestampMs: f.timestampMs,
    subject: 'events.live.1',
    seq,
    offset,
    event: {} as never,
  }
}

/** The whole rows of a resolved message (version 1). */
function rowsOf(data: string) {
  const m = parseResolved(Buffer.from(data))
  if (m?.kind !== 'rows') throw new Error('not a message of whole rows')
  return m.events
}

const rows = (events: EventRow[], mayRepeat: number[] = []): BatchRows => ({
  batch: 1,
  identity: [],
  events,
  mayRepeat: new Set(mayRepeat),
})

describe('resolved events', () => {
  it('go out per source message and piece of 200 offsets, on the partition of their sequence', () => {
    const pieces = resolvedPieces(
      rows([row(10, 0), row(10, 1), row(10, 250), row(11, 0)], [11]),
      { prefix: 'resolved', partitions: 4 },
      'EVENTS',
    )
    expect(pieces.map(({ subject, msgID, reconcile }) => ({ subject, msgID, reconcile }))).toEqual([
      { subject: 'resolved.2', msgID: 'EVENTS:10:0-199', reconcile: false },
      { subject: 'resolved.2', msgID: 'EVENTS:10:200-399', reconcile: false },
      { subject: 'resolved.3', msgID: 'EVENTS:11:0-199', reconcile: true },
    ])
    expect(pieces.map((p) => rowsOf(p.data).map((e) => `${e.seq}:${e.offset}`))).toEqual([
      ['10:0', '10:1'],
      ['10:250'],
      ['11:0'],
    ])
  })

  it('too large for one message are halved by offset range, each half named by its range', () => {
    const events = [row(10, 0), row(10, 1), row(10, 120), row(10, 199)]
    const one = resolvedPieces(rows(events.slice(0, 1)), { prefix: 'r', partitions: 1 }, 'EVENTS')[0]!
    // room for two events per message, not three
    const pieces = resolvedPieces(rows(events), { prefix: 'r', partitions: 1 }, 'EVENTS', one.data.length * 2)
    expect(pieces.map((p) => [p.msgID, rowsOf(p.data).map((e) => e.offset)])).toEqual([
      ['EVENTS:10:0-99', [0, 1]],
      ['EVENTS:10:100-199', [120, 199]],
    ])
  })

  it('read back, make the same events rows as the identity stage would have, and keep their subject', () => {
    const [piece] = resolvedPieces(rows([row(10, 0), row(10, 7)]), { prefix: 'r', partitions: 1 }, 'EVENTS')
    // the person's properties are in the message once
    expect((JSON.parse(piece!.data) as { pp: unknown[] }).pp).toEqual([person])
    const back = rowsOf(piece!.data)
    expect(back.map((e) => eventLine(e))).toEqual([eventLine(fields(10, 0)), eventLine(fields(10, 7))])
    expect(back.map((e) => e.subject)).toEqual(['events.live.1', 'events.live.1'])
  })

  it('of another version, or not JSON, are not read', () => {
    expect(parseResolved(Buffer.from('{"v":2,"events":[{}]}'))).toBeUndefined()
    expect(parseResolved(Buffer.from('{"v":1,"events":[]}'))).toBeUndefined()
    expect(parseResolved(Buffer.from('not json'))).toBeUndefined()
  })
})

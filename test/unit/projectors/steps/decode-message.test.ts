import { describe, expect, it } from 'vitest'
import { encodeChunk } from '../../../../src/jetstream/messages.ts'
import { decodeMessage } from '../../../../src/projectors/steps/decode-message.ts'
import { captured, message, TEAM } from './helpers.ts'

describe('decodeMessage', () => {
  it('decodes a chunk of the current version with its top-level person updates', () => {
    const e = captured({ $set: { email: 'a@x.io' }, $set_once: { first: 1 } })
    const r = decodeMessage(message(encodeChunk({ v: 3, team_id: TEAM, lane: 'live', events: [e] })))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.teamId).toBe(TEAM)
    expect(r.value.events[0]!.event.$set).toEqual({ email: 'a@x.io' })
    expect(r.value.events[0]!.event.$set_once).toEqual({ first: 1 })
    expect(r.value.events[0]!.timestampMs).toBe(Date.UTC(2024, 4, 1, 12))
  })

  it('reads version 3 line by line: the envelope, then one event per line', () => {
    const a = captured({ uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51', distinct_id: 'line\nbreak' })
    const b = captured({ uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a52', properties: { ü: 'ß €' } })
    const text = `{"v":3,"team_id":${TEAM},"lane":"live"}\n${JSON.stringify(a)}\n${JSON.stringify(b)}`
    const r = decodeMessage(message(text))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.teamId).toBe(TEAM)
    expect(r.value.events.map((e) => [e.offset, e.event.uuid])).toEqual([
      [0, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51'],
      [1, '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a52'],
    ])
    expect(r.value.events[0]!.event.distinct_id).toBe('line\nbreak')
    expect(r.value.events[1]!.event.properties).toEqual({ ü: 'ß €' })
  })

  it('refuses a version 3 line that is not JSON alone, with its text, and keeps its neighbours', () => {
    const a = captured({ uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a51' })
    const c = captured({ uuid: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a53' })
    const text = `{"v":3,"team_id":${TEAM},"lane":"live"}\n${JSON.stringify(a)}\n{"uuid": oops\n${JSON.stringify(c)}\n`
    const r = decodeMessage(message(text))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.events.map((e) => e.offset)).toEqual([0, 2])
    expect(r.value.rejected).toHaveLength(1)
    expect(r.value.rejected[0]!.offset).toBe(1)
    expect(r.value.rejected[0]!.raw).toBe('{"uuid": oops')
    expect(r.value.rejected[0]!.reason).toMatch(/^undecodable event: /)
  })

  it('sends a version 3 message without events to the dead letters whole', () => {
    for (const text of [
      `{"v":3,"team_id":${TEAM},"lane":"live"}`,
      `{"v":3,"team_id":${TEAM},"lane":"live"}\n`,
    ]) {
      const r = decodeMessage(message(text))
      expect(r.type).toBe('dlq')
      if (r.type === 'dlq') expect(r.reason).toMatch(/^invalid chunk: events/)
    }
  })

  it('reads a version 2 chunk written across several lines as one document', () => {
    const e = captured({ $set: { email: 'a@x.io' } })
    const r = decodeMessage(
      message(JSON.stringify({ v: 2, team_id: TEAM, lane: 'live', events: [e, e] }, null, 2)),
    )
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.events).toHaveLength(2)
    expect(r.value.events[1]!.event.$set).toEqual({ email: 'a@x.io' })
  })

  it('reads a version 1 chunk (an old log), which never had top-level person updates', () => {
    const e = { ...captured(), $set: { email: 'ignored' } }
    const r = decodeMessage(message({ v: 1, team_id: TEAM, lane: 'live', events: [e] }))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.events).toHaveLength(1)
    expect(r.value.events[0]!.event.$set).toBeUndefined()
    expect(r.value.events[0]!.event.uuid).toBe(e.uuid)
  })

  it('sends a message that is not JSON to the dead letters whole', () => {
    const r = decodeMessage(message('not json {'))
    expect(r).toMatchObject({ type: 'dlq' })
    if (r.type === 'dlq') expect(r.reason).toMatch(/^undecodable: /)
  })

  it('sends a chunk of an unknown version to the dead letters whole', () => {
    const r = decodeMessage(message({ v: 4, team_id: TEAM, lane: 'live', events: [captured()] }))
    expect(r.type).toBe('dlq')
    if (r.type === 'dlq') expect(r.reason).toMatch(/^invalid chunk: v/)
  })

  it('keeps the valid events of a chunk and sets the invalid ones apart with their reason', () => {
    const events = [
      captured(),
      { ...captured(), uuid: 'nope' },
      captured({ $set: 'not an object' as never }),
      { ...captured(), team_id: TEAM + 1 },
      captured({ timestamp: '1969-12-31T23:59:59.000Z' }),
    ]
    const r = decodeMessage(message({ v: 2, team_id: TEAM, lane: 'live', events }))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.events.map((e) => e.offset)).toEqual([0])
    expect(r.value.rejected.map((x) => [x.offset, x.reason.split(':')[0]])).toEqual([
      [1, 'invalid event'],
      [2, 'invalid event'],
      [3, 'invalid event'],
      [4, 'invalid event'],
    ])
    expect(r.value.rejected[0]!.reason).toMatch(/uuid/)
    expect(r.value.rejected[1]!.reason).toMatch(/\$set/)
    expect(r.value.rejected[2]!.reason).toBe('invalid event: team_id differs from chunk')
    expect(r.value.rejected[3]!.reason).toMatch(/timestamp out of range/)
  })
})

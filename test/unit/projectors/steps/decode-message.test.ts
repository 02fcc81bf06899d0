import { describe, expect, it } from 'vitest'
import { decodeMessage } from '../../../../src/projectors/steps/decode-message.ts'
import { captured, message, TEAM } from './helpers.ts'

describe('decodeMessage', () => {
  it('decodes a chunk of the current version with its top-level person updates', () => {
    const e = captured({ $set: { email: 'a@x.io' }, $set_once: { first: 1 } })
    const r = decodeMessage(message({ v: 2, team_id: TEAM, lane: 'live', events: [e] }))
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value.teamId).toBe(TEAM)
    expect(r.value.events[0]!.event.$set).toEqual({ email: 'a@x.io' })
    expect(r.value.events[0]!.event.$set_once).toEqual({ first: 1 })
    expect(r.value.events[0]!.timestampMs).toBe(Date.UTC(2024, 4, 1, 12))
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
    const r = decodeMessage(message({ v: 3, team_id: TEAM, lane: 'live', events: [captured()] }))
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

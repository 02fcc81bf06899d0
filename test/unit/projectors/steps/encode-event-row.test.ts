import { describe, expect, it } from 'vitest'
import { encodeEventRow } from '../../../../src/projectors/steps/encode-event-row.ts'
import { EVENT_COLUMNS } from '../../../../src/projectors/tables.ts'
import { captured, decoded, message, TEAM } from './helpers.ts'

describe('encodeEventRow', () => {
  it('writes one TabSeparated line in column order and keeps where the event came from', () => {
    const d = decoded(captured({ properties: { $session_id: 's1', a: 'x' } }), 3)
    const msg = message('', 42)
    const person = {
      dropped: false as const,
      personId: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c',
      personProperties: { email: 'a@x.io' },
      personCreatedAtMs: 0,
      personMode: 'full' as const,
      groupColumns: ['g0', '', '', '', ''] as [string, string, string, string, string],
      eventProperties: { $session_id: 's1', a: 'x' },
      warnings: [],
      changes: {} as never,
    }
    const r = encodeEventRow(msg, TEAM, d, person)
    expect(r.type).toBe('ok')
    if (r.type !== 'ok') return
    expect(r.value).toMatchObject({
      seq: 42,
      offset: 3,
      subject: 'events.live.0',
      timestampMs: d.timestampMs,
    })
    const fields = r.value.line.replace(/\n$/, '').split('\t')
    expect(fields).toHaveLength(EVENT_COLUMNS.length)
    const col = (name: string) => fields[EVENT_COLUMNS.indexOf(name)]
    expect(col('team_id')).toBe(String(TEAM))
    expect(col('person_id')).toBe(person.personId)
    expect(col('timestamp')).toBe('2024-05-01 12:00:00.000')
    expect(col('session_id')).toBe('s1')
    expect(col('$group_0')).toBe('g0')
    expect(col('person_properties')).toBe('{"email":"a@x.io"}')
    expect(col('_seq')).toBe('42')
    expect(col('_offset')).toBe('3')
  })
})

import { describe, expect, it } from 'vitest'
import { DeadLetterList } from '../../../src/projectors/dead-letters.ts'

const msg = { subject: 'events.live.3', seq: 42, data: new TextEncoder().encode('not json') }

describe('DeadLetterList', () => {
  it('makes one dead letter per message, event or refused row, each with an id of its own', () => {
    const list = new DeadLetterList()
    list.message(msg, 'undecodable: x')
    list.event(msg, 2, 'invalid event: uuid', { uuid: 'nope' })
    list.event(msg, 3, 'ClickHouse refused the row: Code 131: x', { uuid: 'u' }, 'refused')
    list.identityRow(msg, 'person', '1\tp\n', 'ClickHouse refused the row: Code 27: y')
    list.identityRow(msg, 'person', '1\tq\n', 'ClickHouse refused the row: Code 27: y')
    const ids = list.items.map((d) => d.id)
    expect(new Set(ids).size).toBe(5)
    expect(ids.slice(0, 3)).toEqual([
      'dlq-events.live.3-42',
      'dlq-events.live.3-42-2',
      'dlq-events.live.3-42-3',
    ])
    expect(list.items.map((d) => d.kind)).toEqual(['message', 'event', 'refused', 'refused', 'refused'])
    expect(list.items[0]!.data).toBe(msg.data)
    expect(JSON.parse(Buffer.from(list.items[1]!.data).toString())).toEqual({ uuid: 'nope' })
    expect(list.items[3]!.offset).toBeUndefined()
    expect(list.length).toBe(5)
  })
})

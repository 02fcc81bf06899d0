import { describe, expect, it } from 'vitest'
import { positionKey, skipWritten } from '../../../../src/projectors/steps/skip-written.ts'

describe('skipWritten', () => {
  const written = new Set([positionKey(12, 0), positionKey(12, 2)])
  it('drops the events whose row is already there, by stream sequence and offset', () => {
    expect(skipWritten('a', written, 12, 0)).toEqual({ type: 'drop', reason: 'already_written' })
    expect(skipWritten('b', written, 12, 1)).toEqual({ type: 'ok', value: 'b' })
    expect(skipWritten('c', written, 13, 0)).toEqual({ type: 'ok', value: 'c' })
  })
})

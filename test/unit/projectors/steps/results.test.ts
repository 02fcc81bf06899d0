import { describe, expect, it } from 'vitest'
import { dlq, drop, ok } from '../../../../src/projectors/steps/results.ts'

describe('step results', () => {
  it('are plain values tagged ok, drop or dlq', () => {
    expect(ok(1)).toEqual({ type: 'ok', value: 1 })
    expect(drop('already_written')).toEqual({ type: 'drop', reason: 'already_written' })
    expect(dlq('invalid event: uuid')).toEqual({ type: 'dlq', reason: 'invalid event: uuid' })
  })
})

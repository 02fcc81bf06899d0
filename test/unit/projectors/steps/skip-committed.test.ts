import { describe, expect, it } from 'vitest'
import { skipCommitted } from '../../../../src/projectors/steps/skip-committed.ts'

describe('skipCommitted', () => {
  it('drops a message at or below the watermark and passes the next one', () => {
    expect(skipCommitted({ seq: 9 }, 10)).toEqual({ type: 'drop', reason: 'already_committed' })
    expect(skipCommitted({ seq: 10 }, 10)).toEqual({ type: 'drop', reason: 'already_committed' })
    expect(skipCommitted({ seq: 11 }, 10)).toEqual({ type: 'ok', value: { seq: 11 } })
  })
  it('passes everything when nothing was committed yet', () => {
    expect(skipCommitted({ seq: 1 }, 0).type).toBe('ok')
  })
})

import { describe, expect, it } from 'vitest'
import { backoffDelay, retry } from '../../../src/retry/backoff.ts'

describe('backoff', () => {
  it('doubles from the initial wait and stops at the cap', () => {
    const p = { initialMs: 100, maxMs: 1000 }
    expect([1, 2, 3, 4, 5, 6].map((a) => backoffDelay(p, a))).toEqual([100, 200, 400, 800, 1000, 1000])
  })

  it('keeps jittered waits within [0, wait]', () => {
    for (let i = 0; i < 200; i++) {
      const w = backoffDelay({ initialMs: 100, maxMs: 1000, jitter: true }, 3)
      expect(w).toBeGreaterThanOrEqual(0)
      expect(w).toBeLessThanOrEqual(400)
    }
  })

  it('retries until success, and reports each wait', async () => {
    const waits: number[] = []
    let calls = 0
    const out = await retry(
      async () => {
        if (++calls < 3) throw new Error('not yet')
        return 'done'
      },
      { initialMs: 1, maxMs: 2, maxAttempts: 5, onRetry: ({ waitMs }) => waits.push(waitMs) },
    )
    expect(out).toBe('done')
    expect(calls).toBe(3)
    expect(waits).toEqual([1, 2])
  })

  it('rethrows at once what is not retryable, and the last error when attempts run out', async () => {
    let calls = 0
    await expect(
      retry(
        async () => {
          calls++
          throw new Error('permanent')
        },
        { initialMs: 1, maxMs: 1, maxAttempts: 5, retryable: () => false },
      ),
    ).rejects.toThrow('permanent')
    expect(calls).toBe(1)
    await expect(
      retry(
        async (a) => {
          throw new Error(`attempt ${a}`)
        },
        { initialMs: 1, maxMs: 1, maxAttempts: 3 },
      ),
    ).rejects.toThrow('attempt 3')
  })

  it('waits what the failure asks for when it asks (waitFor), else by the policy', async () => {
    const waits: number[] = []
    await retry(
      async (a) => {
        if (a < 3) throw Object.assign(new Error('busy'), { retryAfterMs: a === 1 ? 5 : undefined })
      },
      {
        initialMs: 1,
        maxMs: 100,
        maxAttempts: 5,
        waitFor: (err) => (err as { retryAfterMs?: number }).retryAfterMs,
        onRetry: ({ waitMs }) => waits.push(waitMs),
      },
    )
    expect(waits).toEqual([5, 2])
  })
})

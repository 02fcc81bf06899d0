import { describe, expect, it } from 'vitest'
import { batchCut, holdBytes, maxAckPending, pullBytes } from '../../../src/projectors/batch-cut.ts'

const msgs = (...sizes: number[]) => sizes.map((n) => ({ data: new Uint8Array(n) }))

describe('batchCut', () => {
  it('takes up to batchSize messages when they are small', () => {
    expect(batchCut(msgs(10, 10, 10, 10), 3, 1000)).toEqual({ n: 3, full: true })
    expect(batchCut(msgs(10, 10), 3, 1000)).toEqual({ n: 2, full: false })
    expect(batchCut([], 3, 1000)).toEqual({ n: 0, full: false })
  })

  it('stops at the message that reaches batchBytes', () => {
    expect(batchCut(msgs(400, 400, 400, 400), 100, 1000)).toEqual({ n: 3, full: true })
    expect(batchCut(msgs(500, 500), 100, 1000)).toEqual({ n: 2, full: true })
    expect(batchCut(msgs(400, 400), 100, 1000)).toEqual({ n: 2, full: false })
  })

  it('takes a message larger than batchBytes alone', () => {
    expect(batchCut(msgs(5000, 10), 100, 1000)).toEqual({ n: 1, full: true })
  })
})

describe('maxAckPending', () => {
  it('is four batches, at least 16', () => {
    expect(maxAckPending(100)).toBe(400)
    expect(maxAckPending(2)).toBe(16)
  })
})

describe('the byte bounds of a lane consumer', () => {
  it('holds four batches of bytes', () => {
    expect(holdBytes(1_000_000)).toBe(4_000_000)
  })

  it('pulls eight of the largest messages a server takes, with room for subject, reply and headers', () => {
    // nats-server's default max_payload, 1 MiB: 8 × (1,048,576 + 4,096)
    expect(pullBytes(1_048_576)).toBe(8_421_376)
  })
})

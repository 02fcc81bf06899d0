import { describe, expect, it } from 'vitest'
import { SharedReads } from '../../../src/queries/shared-reads.ts'

/** A read whose end the test decides; records when each started and over what. */
function controlledReads() {
  const started: { key: string; scope: number[]; end: (v: string) => void; fail: () => void }[] = []
  const reads = new SharedReads<string, number[], string>(
    (key, scope) =>
      new Promise<string>((resolve, reject) => {
        started.push({ key, scope: [...scope], end: resolve, fail: () => reject(new Error('read failed')) })
      }),
    { merge: (a, b) => [...a, ...b].sort((x, y) => x - y) },
  )
  return { reads, started }
}

const tick = () => new Promise((r) => setImmediate(r))

describe('SharedReads', () => {
  it('starts a lone read at once', async () => {
    const { reads, started } = controlledReads()
    const r = reads.get('t1', [1])
    expect(started).toHaveLength(1)
    started[0]!.end('a')
    expect(await r).toBe('a')
    await tick()
    // nothing under way any more: the next caller starts its own read at once
    const again = reads.get('t1', [2])
    expect(started).toHaveLength(2)
    expect(started[1]!.scope).toEqual([2])
    started[1]!.end('b')
    expect(await again).toBe('b')
  })

  it('callers arriving during a read share the next one, started when it ends, over all they asked', async () => {
    const { reads, started } = controlledReads()
    const first = reads.get('t1', [5])
    const second = reads.get('t1', [3])
    const third = reads.get('t1', [9])
    // the second and third arrived after the first read started: they may not take its result
    expect(started).toHaveLength(1)
    started[0]!.end('first')
    expect(await first).toBe('first')
    await tick()
    expect(started).toHaveLength(2)
    expect(started[1]!.scope).toEqual([3, 9])
    // a caller arriving while the shared read runs waits for a third read
    const fourth = reads.get('t1', [1])
    started[1]!.end('shared')
    expect(await second).toBe('shared')
    expect(await third).toBe('shared')
    await tick()
    expect(started).toHaveLength(3)
    expect(started[2]!.scope).toEqual([1])
    started[2]!.end('last')
    expect(await fourth).toBe('last')
  })

  it('keeps keys apart, and a failed read does not hold back the next', async () => {
    const { reads, started } = controlledReads()
    const a = reads.get('t1', [1])
    const b = reads.get('t2', [1])
    expect(started.map((s) => s.key)).toEqual(['t1', 't2'])
    const waiting = reads.get('t1', [2])
    started[0]!.fail()
    await expect(a).rejects.toThrow('read failed')
    await tick()
    expect(started).toHaveLength(3)
    started[2]!.end('after failure')
    expect(await waiting).toBe('after failure')
    started[1]!.end('t2')
    expect(await b).toBe('t2')
  })
})

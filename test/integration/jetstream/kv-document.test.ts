import { Kvm } from '@nats-io/kv'
import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import { createDoc, nextSequence, readDoc, updateDoc } from '../../../src/jetstream/kv-document.ts'
import { nats } from '../../harness/index.ts'

const Doc = z.object({ items: z.array(z.number()) })

describe('revision-checked KV documents', () => {
  it('keeps every one of 40 concurrent read-modify-writes of one key', async () => {
    const kv = await new Kvm(await nats()).create(`test_kvdoc_${Date.now()}`, { history: 1 })
    expect(await createDoc(kv, 'doc', { items: [] })).toBe(true)
    expect(await createDoc(kv, 'doc', { items: [99] })).toBe(false)
    let attempts = 0
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        updateDoc(kv, 'doc', Doc, (d) => {
          attempts++
          return { items: [...d.items, i] }
        }),
      ),
    )
    const final = await readDoc(kv, 'doc', Doc)
    expect(final?.doc.items.slice().sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i))
    // More attempts than writers: conflicts happened and were retried, not overwritten.
    expect(attempts).toBeGreaterThan(40)
    expect(await updateDoc(kv, 'missing', Doc, (d) => d)).toBeUndefined()

    const ids = await Promise.all(Array.from({ length: 20 }, () => nextSequence(kv, 'seq')))
    expect(ids.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
  })
})

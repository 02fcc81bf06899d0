import { Kvm } from '@nats-io/kv'
import { z } from 'zod'
import { describe, expect, it } from 'vitest'
import {
  createDoc,
  deleteDoc,
  isLive,
  listDocs,
  nextSequence,
  putDoc,
  readDoc,
  replaceDoc,
  updateDoc,
} from '../../../src/jetstream/kv-document.ts'
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

  it('writes against a revision, and says false only when someone wrote first', async () => {
    const kv = await new Kvm(await nats()).create(`test_kvdoc_rev_${Date.now()}`, { history: 5 })
    await putDoc(kv, 'a', { items: [1] })
    const first = await readDoc(kv, 'a', Doc)
    expect(first?.doc).toEqual({ items: [1] })
    expect(await replaceDoc(kv, 'a', { items: [2] }, first!.revision)).toBe(true)
    // the revision read before that write is stale now
    expect(await replaceDoc(kv, 'a', { items: [3] }, first!.revision)).toBe(false)
    expect(await deleteDoc(kv, 'a', first!.revision)).toBe(false)
    const second = await readDoc(kv, 'a', Doc)
    expect(second?.doc).toEqual({ items: [2] })
    expect(await deleteDoc(kv, 'a', second!.revision)).toBe(true)
    // a deleted key reads as absent, is skipped by listings, and can be created again
    expect(isLive(await kv.get('a'))).toBe(false)
    expect(await readDoc(kv, 'a', Doc)).toBeUndefined()
    await putDoc(kv, 'b', { items: [] })
    expect(await listDocs(kv, '*', Doc)).toEqual([{ items: [] }])
    expect(await createDoc(kv, 'a', { items: [4] })).toBe(true)
  })

  it('retries only revision conflicts: any other failure reaches the caller at once', async () => {
    const kv = await new Kvm(await nats()).create(`test_kvdoc_err_${Date.now()}`, { history: 1 })
    await putDoc(kv, 'bad', { items: 'not a list' })
    let calls = 0
    await expect(
      updateDoc(kv, 'bad', Doc, (d) => {
        calls++
        return d
      }),
    ).rejects.toThrow()
    // the document does not fit its schema: no attempt to change it was made, none repeated
    expect(calls).toBe(0)
    // an invalid key is the server's refusal, not a conflict
    await expect(createDoc(kv, 'has space', { items: [] })).rejects.toThrow()
    await expect(replaceDoc(kv, 'has space', { items: [] }, 1)).rejects.toThrow()
  })
})

import { Kvm } from '@nats-io/kv'
import { jetstreamManager } from '@nats-io/jetstream'
import { describe, expect, it } from 'vitest'
import { publishStored } from '../../../src/jetstream/publish-stored.ts'
import { nats } from '../../harness/index.ts'

// publishStored against a real nats-server: every message stored and readable as kv.put would have
// written it, and each way a publish can fail comes back as a rejection.

const enc = new TextEncoder()
const dec = new TextDecoder()
const unique = () => `${Date.now()}_${Math.floor(Math.random() * 1e6)}`

describe('publishStored', () => {
  it('stores every message of a pipeline; the KV reads them as puts', async () => {
    const nc = await nats()
    const name = `test_pubstored_${unique()}`
    const kv = await new Kvm(nc).create(name, { history: 1 })
    const n = 3000
    await publishStored(
      nc,
      Array.from({ length: n }, (_, i) => ({
        subject: `$KV.${name}.k${i % 1000}`,
        data: enc.encode(`v${i}`),
      })),
      5000,
    )
    // 3,000 puts over 1,000 keys: each key holds its last value
    expect(dec.decode((await kv.get('k0'))!.value)).toBe('v2000')
    expect(dec.decode((await kv.get('k999'))!.value)).toBe('v2999')
    expect((await kv.status()).values).toBe(1000)
    await publishStored(nc, [], 10)
  })

  it('rejects what JetStream refuses, what no stream captures, and acknowledgements that never come', async () => {
    const nc = await nats()
    const jsm = await jetstreamManager(nc)
    const stream = `PUBSTORED_${unique()}`
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], max_msg_size: 16 })
    await expect(
      publishStored(
        nc,
        [
          { subject: `${stream}.a`, data: enc.encode('small') },
          { subject: `${stream}.b`, data: enc.encode('x'.repeat(64)) },
        ],
        5000,
      ),
    ).rejects.toThrow(`JetStream refused ${stream}.b: message size exceeds maximum allowed`)
    await expect(
      publishStored(nc, [{ subject: `nostream_${unique()}`, data: enc.encode('x') }], 5000),
    ).rejects.toThrow('no JetStream stream for nostream_')
    // a core subscriber that never answers: no 503, no acknowledgement
    const silent = `silent_${unique()}`
    const sub = nc.subscribe(silent)
    await expect(publishStored(nc, [{ subject: silent, data: enc.encode('x') }], 300)).rejects.toThrow(
      'JetStream acknowledged 0 of 1 publishes in 300 ms',
    )
    sub.unsubscribe()
    await jsm.streams.delete(stream)
  })
})

import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream'
import type { Bucket, KV } from '@nats-io/kv'

// Reads every live key below a prefix of a KV bucket in one pass over its stream (last message per
// subject), instead of one request per key: loading a team's identity state costs one consumer and
// a few fetches however many distinct ids it has.

const FETCH = 10_000

/**
 * Key (without the bucket prefix) -> value, null for deleted keys; undefined when there are more
 * than `max` keys. Throws when the stream stops delivering before the end.
 */
export async function scanPrefix(
  kv: KV,
  prefix: string,
  max: number,
): Promise<Map<string, Uint8Array | null> | undefined> {
  const b = kv as Bucket
  const info = await b.jsm.consumers.add(b.stream, {
    filter_subject: b.fullKeyName(`${prefix}.>`),
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.None,
    inactive_threshold: 30e9,
  })
  try {
    const out = new Map<string, Uint8Array | null>()
    let pending = info.num_pending
    if (pending > max) return undefined
    if (pending === 0) return out
    const consumer = await b.js.consumers.get(b.stream, info.name)
    while (pending > 0) {
      const batch = await consumer.fetch({ max_messages: Math.min(pending, FETCH), expires: 2000 })
      let got = 0
      for await (const m of batch) {
        got++
        const op = m.headers?.get('KV-Operation')
        const deleted = op === 'DEL' || op === 'PURGE' || m.data.length === 0
        out.set(m.subject.slice(b.prefixLen), deleted ? null : m.data)
        pending = m.info.pending
      }
      // Nothing within the wait although messages were pending: an I/O problem, not an answer.
      if (got === 0) throw new Error(`scan of ${prefix}: no messages within 2 s, ${pending} pending`)
      if (out.size > max) return undefined
    }
    return out
  } finally {
    await b.jsm.consumers.delete(b.stream, info.name).catch(() => undefined)
  }
}

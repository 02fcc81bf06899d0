import { createInbox, type Msg, type NatsConnection } from '@nats-io/nats-core'

// Many JetStream publishes awaited together, each acknowledged on one shared reply subscription.
// nats.js's `js.publish` (and so `kv.put`) makes a request per message: a reply mux entry, a timer,
// a promise chain and, after every successful request, an Error with its stack trace (its `cancel`
// builds a RequestError whether or not anything is waiting). For the identity store's commit, a put
// per changed key, that was ~7% of the projector's CPU (docs/performance.md).

/** One message for a subject a JetStream stream captures. */
export interface StoredMessage {
  subject: string
  data: Uint8Array
}

/** JetStream's answer to a publish: where it stored it, or why it did not. */
interface PubAck {
  stream?: string
  seq?: number
  error?: { code?: number; err_code?: number; description?: string }
}

const decoder = new TextDecoder()

/**
 * Publishes every message and resolves once JetStream acknowledged each as stored; rejects with
 * the first refusal (`JetStream refused <subject>: <description>`), with "no JetStream stream for
 * <subject>" when nothing answers a publish, or when `timeoutMs` passes first. Acknowledgements
 * are read on one subscription of a fresh inbox, which is removed when this settles; what arrives
 * later is dropped. Like separate `js.publish` calls, a rejection says nothing of the other
 * messages: some may be stored.
 */
export function publishStored(
  nc: NatsConnection,
  messages: readonly StoredMessage[],
  timeoutMs: number,
): Promise<void> {
  if (messages.length === 0) return Promise.resolve()
  const inbox = createInbox()
  const acked = new Uint8Array(messages.length)
  let left = messages.length
  return new Promise<void>((resolve, reject) => {
    let settled = false
    const finish = (err?: Error) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      sub.unsubscribe()
      if (err) reject(err)
      else resolve()
    }
    const onAck = (err: Error | null, m: Msg) => {
      if (err) return finish(err)
      const i = Number(m.subject.slice(inbox.length + 1))
      if (!(i >= 0 && i < messages.length) || acked[i]) return
      const subject = messages[i]!.subject
      // the server answers a publish no stream captures with a 503 status and no body
      if (m.headers?.code === 503) return finish(new Error(`no JetStream stream for ${subject}`))
      let ack: PubAck
      try {
        ack = JSON.parse(decoder.decode(m.data)) as PubAck
      } catch {
        return finish(new Error(`unreadable JetStream acknowledgement for ${subject}`))
      }
      if (ack.error || typeof ack.seq !== 'number') {
        return finish(new Error(`JetStream refused ${subject}: ${ack.error?.description ?? 'no sequence'}`))
      }
      acked[i] = 1
      if (--left === 0) finish()
    }
    const sub = nc.subscribe(`${inbox}.*`, { callback: onAck })
    const timer = setTimeout(
      () =>
        finish(
          new Error(
            `JetStream acknowledged ${messages.length - left} of ${messages.length} publishes in ${timeoutMs} ms`,
          ),
        ),
      timeoutMs,
    )
    try {
      for (let i = 0; i < messages.length; i++) {
        nc.publish(messages[i]!.subject, messages[i]!.data, { reply: `${inbox}.${i}` })
      }
    } catch (err) {
      finish(err as Error)
    }
  })
}

import { AckPolicy, DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream'
import { nanos } from '@nats-io/transport-node'
import type { Logger } from '../observability/logger.ts'
import { maxAckPending } from './batch-cut.ts'

/** The durable pull consumer a projector stage (lane consumer, row writer) owns. */
export interface DurableOptions {
  jsm: JetStreamManager
  stream: string
  durable: string
  filterSubject: string
  ackWaitMs: number
  batchSize: number
  /** the consumer's previous owner is known to be gone (its lease expired) */
  takeOver?: boolean
  log: Logger
}

/**
 * Creates the durable consumer, or recovers it. A consumer whose previous owner died holds
 * delivered-but-unacked messages that JetStream would only redeliver after ack_wait, behind newer
 * ones: order would break. Recreating it at the ack floor delivers them again first. A consumer has
 * one owner process at a time (docs/projectors.md); a live owner is left alone. Returns the stream
 * sequence up to which messages may already have been processed (0: none), which the caller
 * reconciles.
 */
export async function ensureDurable(o: DurableOptions): Promise<number> {
  const { jsm, stream, durable, filterSubject, ackWaitMs, batchSize } = o
  const config = {
    durable_name: durable,
    ack_policy: AckPolicy.Explicit,
    filter_subject: filterSubject,
    ack_wait: nanos(ackWaitMs),
    // bounds what the process holds (batch-cut.ts)
    max_ack_pending: maxAckPending(batchSize),
  }
  const info = await jsm.consumers.info(stream, durable).catch(() => undefined)
  if (!info) {
    await jsm.consumers.add(stream, { ...config, deliver_policy: DeliverPolicy.All })
    return 0
  }
  // No waiting pull request means no live owner (the server drops those of closed connections).
  const orphaned = info.num_ack_pending > 0 && (info.num_waiting === 0 || o.takeOver === true)
  if (orphaned || info.config.filter_subject !== filterSubject) {
    await jsm.consumers.delete(stream, durable)
    await jsm.consumers.add(stream, {
      ...config,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: info.ack_floor.stream_seq + 1,
    })
    o.log.info(
      { durable, from: info.ack_floor.stream_seq + 1, recoverUpTo: info.delivered.stream_seq },
      'projector: resuming after unacknowledged messages',
    )
    return info.delivered.stream_seq
  }
  if (info.config.ack_wait !== config.ack_wait || info.config.max_ack_pending !== config.max_ack_pending) {
    await jsm.consumers.update(stream, durable, {
      ack_wait: config.ack_wait,
      max_ack_pending: config.max_ack_pending,
    })
  }
  return 0
}

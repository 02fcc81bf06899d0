import { jetstreamManager } from '@nats-io/jetstream'
import { EVENTS_STREAM } from '../../schema/jetstream.ts'
import type { ConsumerLag } from '../observability/metrics.ts'
import type { NatsConnection } from './connection.ts'

/**
 * How far each durable consumer of the event log is behind, from the server's consumer info.
 * Ephemeral consumers (a replay's reader) are left out: they come and go with random names.
 */
export async function projectorLag(nc: NatsConnection, stream = EVENTS_STREAM): Promise<ConsumerLag[]> {
  const jsm = await jetstreamManager(nc)
  const out: ConsumerLag[] = []
  for await (const c of jsm.consumers.list(stream)) {
    if (!c.config.durable_name) continue
    out.push({ consumer: c.name, pending: c.num_pending, ackPending: c.num_ack_pending })
  }
  return out
}

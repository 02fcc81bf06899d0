import { type JetStreamManager, jetstreamManager } from '@nats-io/jetstream'
import { type KV, Kvm } from '@nats-io/kv'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { BUCKETS, type BucketDef, streams } from '../../schema/jetstream.ts'

/** The NATS connection type every module uses. */
export type { NatsConnection }

/** Connects to NATS, reconnecting forever (every 0.5 s) after a loss. */
export async function connectNats(url: string, name = 'burrow'): Promise<NatsConnection> {
  return connect({
    servers: url,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: 5000,
  })
}

const SECOND_NS = 1_000_000_000

/** Creates the streams and KV buckets that are missing and updates limits that changed. */
export async function migrateJetStream(
  nc: NatsConnection,
  opts: { eventsMaxAgeSeconds: number; eventsMaxBytes?: number },
): Promise<{ created: string[] }> {
  const jsm = await jetstreamManager(nc)
  const created: string[] = []
  for (const def of streams(opts)) {
    const want = {
      subjects: def.subjects,
      max_age: def.maxAgeSeconds * SECOND_NS,
      // JetStream's "no limit" is -1
      max_bytes: def.maxBytes ? def.maxBytes : -1,
      duplicate_window: def.duplicateWindowSeconds * SECOND_NS,
    }
    const existing = await jsm.streams.info(def.name).catch(() => undefined)
    if (!existing) {
      await jsm.streams.add({ name: def.name, ...want })
      created.push(def.name)
    } else if (
      existing.config.max_age !== want.max_age ||
      existing.config.max_bytes !== want.max_bytes ||
      existing.config.subjects.join() !== want.subjects.join()
    ) {
      await jsm.streams.update(def.name, { ...existing.config, ...want })
    }
  }
  const kvm = new Kvm(nc)
  for (const def of Object.values(BUCKETS)) {
    const exists = await jsm.streams.info(`KV_${def.name}`).catch(() => undefined)
    if (!exists) {
      await openBucket(kvm, def)
      created.push(def.name)
    }
  }
  return { created }
}

function openBucket(kvm: Kvm, def: BucketDef): Promise<KV> {
  return kvm.create(def.name, { history: def.history, ttl: def.ttlSeconds * 1000 })
}

/** Opens an existing KV bucket (created by migrateJetStream). */
export async function bucket(nc: NatsConnection, def: BucketDef): Promise<KV> {
  return new Kvm(nc).open(def.name)
}

/** The JetStream manager of a connection. */
export async function manager(nc: NatsConnection): Promise<JetStreamManager> {
  return jetstreamManager(nc)
}

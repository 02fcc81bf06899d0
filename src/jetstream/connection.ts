import { JetStreamApiError, type JetStreamManager, jetstreamManager } from '@nats-io/jetstream'
import { type KV, Kvm } from '@nats-io/kv'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { retry } from '../retry/backoff.ts'
import { BUCKETS, type BucketDef, streams } from '../../schema/jetstream.ts'

/** The NATS connection type every module uses. */
export type { NatsConnection }

/** The servers of a `NATS_URL`: one URL, or several separated by commas (members of one cluster). */
export const natsServers = (url: string): string[] =>
  url
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)

/**
 * Connects to NATS, reconnecting forever (every 0.5 s) after a loss. `url` may list several servers
 * of a cluster (comma-separated); the client picks one and moves to another when it goes away.
 */
export async function connectNats(url: string, name = 'burrow'): Promise<NatsConnection> {
  const servers = natsServers(url)
  const nc = await connect({
    servers,
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: 5000,
    // The client otherwise makes an Error (a stack capture) per request and publish to add where a
    // timed-out operation started to its trace: CPU on every event for a rarely read line.
    noAsyncTraces: true,
  })
  givenServers.set(nc, servers.length)
  return nc
}

/** How many servers each connection was given (the cluster's size when the server has not told yet). */
const givenServers = new WeakMap<NatsConnection, number>()

const SECOND_NS = 1_000_000_000

/**
 * How many copies JetStream keeps of each stream and bucket: 3 on a cluster of 3 or more servers
 * (one may fail with no loss and no pause beyond a leader election), else 1. Two copies buy
 * nothing: a quorum of 2 is 2, so losing either stops writes. The cluster's size is what the
 * server tells clients (`connect_urls`, every member's client URL) or the URLs given, whichever
 * is larger.
 */
export function replicasFor(nc: NatsConnection): number {
  const known = new Set(nc.info?.connect_urls ?? [])
  const size = Math.max(known.size, givenServers.get(nc) ?? 1)
  return size >= 3 ? 3 : 1
}

// A cluster that has just formed has a meta leader before every peer is known to it: placing three
// copies then fails ("no suitable peers for placement", code 10005) or JetStream is briefly
// unavailable (10008); both clear within seconds.
const FORMING = new Set([10005, 10008])
const whileForming = <T>(fn: () => Promise<T>) =>
  retry(fn, {
    initialMs: 100,
    maxMs: 2000,
    maxAttempts: 20,
    retryable: (err) => err instanceof JetStreamApiError && FORMING.has(err.code),
  })

/** Creates the streams and KV buckets that are missing and updates limits that changed. */
export async function migrateJetStream(
  nc: NatsConnection,
  opts: { eventsMaxAgeSeconds: number; eventsMaxBytes?: number; replicas?: number },
): Promise<{ created: string[]; replicas: number }> {
  const jsm = await jetstreamManager(nc)
  const replicas = opts.replicas ?? replicasFor(nc)
  const created: string[] = []
  for (const def of streams(opts)) {
    const want = {
      subjects: def.subjects,
      max_age: def.maxAgeSeconds * SECOND_NS,
      // JetStream's "no limit" is -1
      max_bytes: def.maxBytes ? def.maxBytes : -1,
      duplicate_window: def.duplicateWindowSeconds * SECOND_NS,
      num_replicas: replicas,
    }
    const existing = await jsm.streams.info(def.name).catch(() => undefined)
    if (!existing) {
      await whileForming(() => jsm.streams.add({ name: def.name, ...want }))
      created.push(def.name)
    } else if (
      existing.config.max_age !== want.max_age ||
      existing.config.max_bytes !== want.max_bytes ||
      existing.config.subjects.join() !== want.subjects.join() ||
      existing.config.num_replicas !== want.num_replicas
    ) {
      await whileForming(() => jsm.streams.update(def.name, { ...existing.config, ...want }))
    }
  }
  const kvm = new Kvm(nc)
  for (const def of Object.values(BUCKETS)) {
    const exists = await jsm.streams.info(`KV_${def.name}`).catch(() => undefined)
    if (!exists) {
      await whileForming(() => openBucket(kvm, def, replicas))
      created.push(def.name)
    } else if (exists.config.num_replicas !== replicas) {
      // a single server grown into a cluster: the bucket's stream gets its copies in place
      await whileForming(() =>
        jsm.streams.update(`KV_${def.name}`, { ...exists.config, num_replicas: replicas }),
      )
    }
  }
  return { created, replicas }
}

function openBucket(kvm: Kvm, def: BucketDef, replicas: number): Promise<KV> {
  return kvm.create(def.name, { history: def.history, ttl: def.ttlSeconds * 1000, replicas })
}

/** Opens an existing KV bucket (created by migrateJetStream). */
export async function bucket(nc: NatsConnection, def: BucketDef): Promise<KV> {
  return new Kvm(nc).open(def.name)
}

/** The JetStream manager of a connection. */
export async function manager(nc: NatsConnection): Promise<JetStreamManager> {
  return jetstreamManager(nc)
}

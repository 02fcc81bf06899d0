import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import {
  BUCKETS,
  EVENTS_STREAM,
  LANES,
  type Lane,
  RESOLVED_PREFIX,
  RESOLVED_STREAM,
} from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import type { BackoffPolicy } from '../retry/backoff.ts'
import type { Component } from '../runtime/types.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import { ProjectorControl, resolvedReplayedUpTo } from './control.ts'
import { DLQ_EVENTS_SUBJECT } from './dead-letters.ts'
import type { Fence } from './errors.ts'
import { sourceName } from './identity-keys.ts'
import type { BatchWriter, ProjectionPlugins } from './batch.ts'
import { KvIdentityStore, type KvIdentityStoreOptions } from './identity-store/store.ts'
import { LaneConsumer } from './lane-consumer.ts'
import { Mutex } from './mutex.ts'
import { PartitionLeases, type PartitionWorker } from './partition-leases.ts'
import { ProjectorPlugins } from './plugins.ts'
import { LIVE_TABLES, type ProjectionTables } from './tables.ts'
import { ClickHouseWriter } from './writer.ts'
import { TaxonomyCollector } from '../taxonomy/collect.ts'
import { ResolvedPublisher, type ResolvedTarget } from './resolved.ts'
import { BATCH_RETRY } from './lane-consumer.ts'
import { RowWriter } from './row-writer.ts'
import { personChangesSubject, splitChanges } from '../persons/change-feed.ts'

/** How to run the projectors of a process. */
export interface ProjectorOptions {
  nc: NatsConnection
  ch: ClickHouseClient
  log: Logger
  batchSize: number
  /** a batch is also cut at this many bytes of message data (default BATCH_BYTES, batch-cut.ts) */
  batchBytes?: number
  /** bytes held delivered and unacknowledged per lane before it stops pulling (LaneConsumer) */
  holdBytes?: number
  maxWaitMs: number
  /** JetStream ack wait of the durable consumers; a batch must finish (or heartbeat) within it */
  ackWaitMs?: number
  stream?: string
  /** subjects are `<subjectPrefix>.<lane>.<partition>` */
  subjectPrefix?: string
  /** only this partition of each lane (its own durables); default all partitions */
  partition?: number
  /** the partition's lease was just taken: its consumers' previous owner is gone (LaneConsumer) */
  takeOver?: boolean
  durablePrefix?: string
  dlqSubject?: string
  lanes?: readonly Lane[]
  tables?: ProjectionTables
  teams?: ReadonlySet<number>
  /** where rows go; default ClickHouse (`ch`, `tables`); tests wrap it to inject faults */
  writer?: BatchWriter
  /**
   * wraps the writer a lane's batches go through (with `resolved`, after the resolved events are
   * published: a test crashes there to leave a batch published and not committed)
   */
  wrapWriter?: (w: BatchWriter) => BatchWriter
  /** the projects' plugin pipelines; default: the configs in KV (false: none) */
  plugins?: ProjectionPlugins | false
  /** batches decided ahead while the previous one is written (default 1; 0 = none) */
  pipelineDepth?: number
  /** waits between attempts at a failed batch (default BATCH_RETRY: 200 ms doubling to 10 s) */
  retry?: BackoffPolicy
  /** cache size and whole-team loading of the identity state */
  identity?: Omit<KvIdentityStoreOptions, 'nc'>
  /**
   * publish the person change feed after each write (src/persons/change-feed.ts); default: when
   * writing the live tables (a replay builds tables nobody reads until it swaps them in)
   */
  personFeed?: boolean
  /**
   * Team spread: this projector is an identity stage; its events go to these resolved subjects (in
   * the stream's own namespace of subjects) for the row writers instead of into ClickHouse
   */
  resolved?: ResolvedTarget
  /**
   * Leases: the unit's fence (PartitionLeases), called before each batch's rows, resolved events
   * and identity commit; a fenced-out unit stops without acknowledging (docs/scaling.md)
   */
  fence?: Fence
  /** the projects' taxonomy (docs/taxonomy.md): recorded by default; false: not recorded */
  taxonomy?: TaxonomyCollector | false
}

/** The projectors of a process, running. */
export interface RunningProjector {
  store: KvIdentityStore
  consumers: Map<Lane, LaneConsumer>
  stop(): Promise<void>
}

/** The durable consumer name of a lane. */
export const durableName = (prefix: string, lane: Lane) => `${prefix}-${lane}`

/** The identity watermark source of a lane's consumer. */
export const laneSource = (stream: string, durable: string) => sourceName(stream, durable)

/**
 * Starts one durable consumer per lane: live, historical and overflow each progress in their own log
 * order, so a backlog of imported history or a flood from one distinct id never delays live events.
 */
export async function startProjector(o: ProjectorOptions): Promise<RunningProjector> {
  const stream = o.stream ?? EVENTS_STREAM
  const tables = o.tables ?? LIVE_TABLES
  const js = jetstream(o.nc)
  const sink = o.writer ?? new ClickHouseWriter(o.ch, tables)
  const rows = o.fence ? fencedWriter(sink, o.fence) : sink
  const published = o.resolved ? new ResolvedPublisher(js, rows, o.resolved, stream, o.fence) : rows
  const inner = o.wrapWriter ? o.wrapWriter(published) : published
  const writer = (o.personFeed ?? tables === LIVE_TABLES) ? withPersonFeed(inner, o.nc, o.log) : inner
  const prefix = o.subjectPrefix ?? 'events'
  const durablePrefix = o.durablePrefix ?? 'projector'
  const jsm = await jetstreamManager(o.nc)
  const kv = await bucket(o.nc, BUCKETS.identity)
  const store = new KvIdentityStore(kv, { nc: o.nc, ...o.identity })
  const mutex = new Mutex()
  const control = await ProjectorControl.open(kv, () => store.reset())
  const consumers = new Map<Lane, LaneConsumer>()
  // one per process: its lanes share what it has written
  const taxonomy = o.taxonomy === false ? undefined : (o.taxonomy ?? new TaxonomyCollector())
  let owned: ProjectorPlugins | undefined
  const closeAll = async () => {
    await Promise.all([...consumers.values()].map((c) => c.stop()))
    control.close()
    await owned?.stop()
  }
  try {
    let plugins: ProjectionPlugins | undefined
    if (o.plugins === undefined) {
      owned = await ProjectorPlugins.open({ nc: o.nc, ch: o.ch, log: o.log })
      plugins = owned
    } else if (o.plugins !== false) {
      plugins = o.plugins
    }
    for (const lane of o.lanes ?? LANES) {
      const durable = durableName(durablePrefix, lane)
      const log = o.log.child({ component: 'projector', lane })
      const c = new LaneConsumer({
        nc: o.nc,
        js,
        jsm,
        stream,
        durable,
        filterSubject: `${prefix}.${lane}.${o.partition ?? '>'}`,
        batchSize: o.batchSize,
        batchBytes: o.batchBytes,
        holdBytes: o.holdBytes,
        maxWaitMs: o.maxWaitMs,
        ackWaitMs: o.ackWaitMs ?? 30_000,
        mutex,
        control,
        log,
        pipelineDepth: o.pipelineDepth,
        retry: o.retry,
        takeOver: o.takeOver,
        projection: {
          ch: o.ch,
          js,
          store,
          tables,
          writer,
          source: laneSource(stream, durable),
          dlqSubject: o.dlqSubject ?? DLQ_EVENTS_SUBJECT,
          teams: o.teams,
          log,
          plugins,
          resolveOnly: o.resolved !== undefined,
          fence: o.fence,
          taxonomy,
        },
      })
      await c.start()
      consumers.set(lane, c)
    }
  } catch (err) {
    await closeAll()
    throw err
  }
  return { store, consumers, stop: closeAll }
}

/** Team spread: where the identity stages publish and the row writers read (docs/scaling.md). */
export interface TeamSpreadOptions extends Omit<ProjectorOptions, 'partition' | 'resolved'> {
  /** partitions of the log (one identity stage each) and of the resolved subjects (one row writer each) */
  partitions: number
  /** the stream of the resolved subjects (default RESOLVED) */
  resolvedStream?: string
  /** resolved subjects are `<resolvedPrefix>.<partition>` (default `resolved`) */
  resolvedPrefix?: string
}

/** The lease units of team spread: one identity stage per log partition, one row writer per resolved partition. */
export const spreadUnits = (partitions: number) => 2 * partitions

/**
 * Starts lease unit `unit` of team spread: below `partitions`, the identity stage of log partition
 * `unit` (the lane consumers, deciding persons in log order and publishing resolved events); from
 * `partitions` on, the row writer of resolved partition `unit - partitions`.
 */
export async function startSpreadUnit(o: TeamSpreadOptions, unit: number): Promise<PartitionWorker> {
  const prefix = o.durablePrefix ?? 'spread'
  const resolved = { prefix: o.resolvedPrefix ?? RESOLVED_PREFIX, partitions: o.partitions }
  if (unit < o.partitions) {
    return startProjector({ ...o, partition: unit, durablePrefix: `${prefix}-identity-p${unit}`, resolved })
  }
  const q = unit - o.partitions
  const kv = await bucket(o.nc, BUCKETS.identity)
  const resolvedStream = o.resolvedStream ?? RESOLVED_STREAM
  // a resume may arrive before the writer exists (nothing to reconcile then)
  const resumes: { writer?: RowWriter } = {}
  const control = await ProjectorControl.open(kv, () => resumes.writer?.afterReplay())
  const w = new RowWriter({
    nc: o.nc,
    js: jetstream(o.nc),
    jsm: await jetstreamManager(o.nc),
    ch: o.ch,
    stream: resolvedStream,
    sourceStream: o.stream ?? EVENTS_STREAM,
    durable: `${prefix}-rows-p${q}`,
    filterSubject: `${resolved.prefix}.${q}`,
    table: (o.tables ?? LIVE_TABLES).events,
    writer: o.writer ?? new ClickHouseWriter(o.ch, o.tables ?? LIVE_TABLES),
    batchSize: o.batchSize,
    batchBytes: o.batchBytes,
    maxWaitMs: o.maxWaitMs,
    ackWaitMs: o.ackWaitMs ?? 30_000,
    dlqSubject: o.dlqSubject ?? DLQ_EVENTS_SUBJECT,
    control,
    retry: o.retry ?? BATCH_RETRY,
    takeOver: o.takeOver,
    fence: o.fence,
    replayedUpTo: () => resolvedReplayedUpTo(kv, resolvedStream),
    log: o.log.child({ component: 'row-writer', partition: q }),
  })
  resumes.writer = w
  try {
    await w.start()
  } catch (err) {
    control.close()
    throw err
  }
  return {
    async stop() {
      await w.stop()
      control.close()
    },
  }
}

/** Checks the lease right before the rows go out (the closest the fence can get to the insert). */
function fencedWriter(inner: BatchWriter, fence: Fence): BatchWriter {
  return {
    async write(rows) {
      await fence()
      return inner.write(rows)
    },
  }
}

/**
 * Publishes a batch's person changes once its rows are in ClickHouse: readers of the feed never see
 * a change before ClickHouse has it. Fire and forget on core NATS (a lost message is caught up by the
 * readers' periodic reload), so it adds no round trip to the batch.
 */
function withPersonFeed(inner: BatchWriter, nc: NatsConnection, log: Logger): BatchWriter {
  return {
    async write(rows) {
      const refused = await inner.write(rows)
      try {
        for (const team of rows.personChanges ?? []) {
          for (const msg of splitChanges(team))
            nc.publish(personChangesSubject(msg.team_id), JSON.stringify(msg))
        }
      } catch (err) {
        log.warn({ err }, 'person change feed not published')
      }
      return refused
    },
  }
}

/** The projector role of `burrow start`. */
export const projectorComponent: Component = {
  name: 'projector',
  roles: ['projector'],
  async start(rt) {
    const base = {
      nc: rt.nc,
      ch: rt.ch,
      log: rt.log,
      batchSize: rt.config.PROJECTOR_BATCH_SIZE,
      maxWaitMs: rt.config.PROJECTOR_MAX_WAIT_MS,
    }
    if (rt.config.PROJECTOR_TEAM_SPREAD) {
      // Identity stages and row writers are lease units: any process may hold any of them.
      const partitions = rt.config.LOG_PARTITIONS
      const leases = new PartitionLeases({
        kv: await bucket(rt.nc, BUCKETS.projectorLeases),
        partitions: spreadUnits(partitions),
        log: rt.log,
        start: (unit, fence) => startSpreadUnit({ ...base, partitions, takeOver: true, fence }, unit),
      })
      await leases.start()
      rt.log.info({ owner: leases.owner, units: leases.owned }, 'projector started (team spread)')
      return { stop: () => leases.stop() }
    }
    if (rt.config.PROJECTOR_PARTITION_LEASES) {
      // One projector (three lane consumers, one identity store) per partition this process
      // holds the lease of; a team's events are all in one partition, so its identity state is
      // written by one process at a time.
      const leases = new PartitionLeases({
        kv: await bucket(rt.nc, BUCKETS.projectorLeases),
        partitions: rt.config.LOG_PARTITIONS,
        log: rt.log,
        start: (partition, fence) =>
          startProjector({
            ...base,
            partition,
            durablePrefix: `projector-p${partition}`,
            takeOver: true,
            fence,
          }),
      })
      await leases.start()
      rt.log.info({ owner: leases.owner, partitions: leases.owned }, 'projector started (partition leases)')
      return { stop: () => leases.stop() }
    }
    const p = await startProjector(base)
    rt.log.info('projector started')
    return { stop: () => p.stop() }
  },
}

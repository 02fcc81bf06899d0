import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  type JetStreamClient,
  type JetStreamManager,
  jetstreamManager,
  type JsMsg,
} from '@nats-io/jetstream'
import type { KV } from '@nats-io/kv'
import { BUCKETS, EVENTS_STREAM, RESOLVED_STREAM } from '../../schema/jetstream.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import { selectRows } from '../clickhouse/client.ts'
import { TableAdmin } from '../clickhouse/table-admin.ts'
import { tableDdl } from '../clickhouse/migrate.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import type { BatchWriter, ProjectionContext, ProjectionPlugins } from './batch.ts'
import { namespacePointerKey } from './identity-keys.ts'
import { KvIdentityStore } from './identity-store/store.ts'
import { resolvedReplayedKey } from './control.ts'
import { laneSource } from './index.ts'
import { DEFAULT_MAX_PAYLOAD } from './lane-consumer.ts'
import { ProjectorPlugins } from './plugins.ts'
import { projectPass } from './replay-pass.ts'
import { TaxonomyCollector } from '../taxonomy/collect.ts'
import {
  loadReplayState,
  pauseProjectors,
  projectorDurables,
  putJson,
  REPLAY_STATE_KEY,
  type ReplayState,
  resumeProjectors,
} from './replay-state.ts'
import { LIVE_TABLES, type ProjectionTables, suffixedTables, TABLE_KINDS } from './tables.ts'
import { ClickHouseWriter } from './writer.ts'
import { afterEventsSwap } from '../queries/day-cache.ts'
import {
  afterSessionsSwap,
  beforeSessionsSwap,
  createReplaySessions,
  RAW_SESSIONS,
  replaySessionNames,
} from '../sessions/replay.ts'

// Rebuilds the projection from the log into fresh tables and a fresh identity namespace, then swaps
// both in. The build runs beside the live projectors; only the final catch-up and swap pause them.
// Progress is the replay's own watermark in its namespace, so a crashed replay resumes where it was.
// See docs/projectors.md ("Replay"); the command and its progress line: replay-command.ts.

/** What to replay, and where. */
export interface ReplayOptions {
  nc: NatsConnection
  ch: ClickHouseClient
  /**
   * where the tables' rows live, for creating, copying, swapping and dropping them (cluster mode:
   * every shard, docs/scaling.md); default: `ch`'s server
   */
  admin?: TableAdmin
  log: Logger
  /** rebuild one project only; the other projects' rows are carried over unchanged */
  project?: number
  from?: number | Date
  /** stop at this sequence / time and leave the tables unswapped, for inspection */
  to?: number | Date
  stream?: string
  subjectPrefix?: string
  /** durable prefix of the live projectors whose positions the swap hands over (default `projector`) */
  durablePrefix?: string
  /** team spread's durable prefix (default `spread`, index.ts startSpreadUnit) */
  spreadPrefix?: string
  /** the stream team spread's row writers read (default RESOLVED) */
  resolvedStream?: string
  /** LOG_PARTITIONS: the lease partitions' and identity stages' durables get positions even if not created yet */
  partitions?: number
  /** messages a batch holds at most (default REPLAY_BATCH_MESSAGES) */
  batchSize?: number
  /** bytes of message data a batch holds at most (default REPLAY_BATCH_BYTES) */
  batchBytes?: number
  /** where the batches' rows go (default ClickHouseWriter into the fresh tables; tests wrap it to inject faults) */
  writer?: (tables: ProjectionTables) => BatchWriter
  /** how long to wait for running projectors to acknowledge the pause */
  pauseTimeoutMs?: number
  progress?: (p: ReplayProgress) => void
  /**
   * the projects' plugin pipelines; default: the configs as they are now, without side effects
   * (no log lines, no webhooks); false: none
   */
  plugins?: ProjectionPlugins | false
}

/** Where a replay is, reported after every batch and at each phase. */
export interface ReplayProgress {
  phase: 'build' | 'catch-up' | 'swap' | 'done'
  position: number
  end: number
  events: number
  eventsPerSecond: number
  etaSeconds: number | null
}

/** How a replay ended. */
export interface ReplayResult {
  id: string
  resumed: boolean
  swapped: boolean
  tables: Record<string, string>
  lastSeq: number
  events: number
}

const REPLAY_SOURCE = 'replay'

/**
 * A replay's batches, cut by bytes: larger than a live lane's (BATCH_BYTES), because a batch's cost
 * falls with its size (one INSERT, whose sessions view works per session and INSERT, one person row
 * per person and batch, one KV value per key and batch) and nobody waits for its rows. 16 MiB is
 * ~50K events of /batch/ chunks (docs/performance.md, "Ingestion on ClickHouse 26.7").
 */
export const REPLAY_BATCH_BYTES = 16 * 2 ** 20
/** messages a replay's batch holds at most (single events: the bytes bound is ~30K of them) */
export const REPLAY_BATCH_MESSAGES = 50_000

/** Replays the log (resuming an unfinished replay of the same stream) and, unless `to` is given, swaps. */
export async function replay(o: ReplayOptions): Promise<ReplayResult> {
  const owned =
    o.plugins === undefined
      ? await ProjectorPlugins.open({ nc: o.nc, ch: o.ch, log: o.log }, { sideEffects: false })
      : undefined
  try {
    const run = await ReplayRun.open(o, owned ?? (o.plugins || undefined))
    return await run.execute()
  } finally {
    await owned?.stop()
  }
}

/** One replay: its state, its tables and namespace, and the passes over the log. */
class ReplayRun {
  private events = 0
  private readonly started = Date.now()

  private constructor(
    private readonly o: ReplayOptions,
    private readonly kv: KV,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly state: ReplayState,
    private readonly resumed: boolean,
    private readonly tables: ProjectionTables,
    private readonly ctx: ProjectionContext,
    private readonly admin: TableAdmin,
  ) {}

  static async open(o: ReplayOptions, plugins: ProjectionPlugins | undefined): Promise<ReplayRun> {
    const kv = await bucket(o.nc, BUCKETS.identity)
    const { state, resumed } = await loadReplayState(
      kv,
      o,
      o.stream ?? EVENTS_STREAM,
      o.subjectPrefix ?? 'events',
    )
    if (resumed) o.log.info({ id: state.id }, 'replay: resuming the unfinished replay')
    const tables = suffixedTables(`_replay_${state.id}`)
    const admin = o.admin ?? TableAdmin.single(o.ch)
    for (const k of TABLE_KINDS) await admin.createLike(tables[k], LIVE_TABLES[k], tableDdl(LIVE_TABLES[k]))
    // the sessions are fed by a view from the fresh events table, before any row reaches it
    await createReplaySessions(admin, `_replay_${state.id}`, tables.events)
    const js = jetstream(o.nc)
    const ctx: ProjectionContext = {
      ch: o.ch,
      js,
      store: new KvIdentityStore(kv, { nc: o.nc, namespace: `r${state.id}` }),
      tables,
      writer: o.writer?.(tables) ?? new ClickHouseWriter(o.ch, tables),
      source: REPLAY_SOURCE,
      teams: state.project === null ? undefined : new Set([state.project]),
      log: o.log,
      plugins,
      // the log is the truth for the taxonomy too: a replay writes every name again (upserts)
      taxonomy: new TaxonomyCollector(),
    }
    return new ReplayRun(o, kv, js, await jetstreamManager(o.nc), state, resumed, tables, ctx, admin)
  }

  private get ns(): string {
    return `r${this.state.id}`
  }

  private result(swapped: boolean, lastSeq: number): ReplayResult {
    const tables = { ...(swapped ? LIVE_TABLES : this.tables) }
    return { id: this.state.id, resumed: this.resumed, swapped, tables, lastSeq, events: this.events }
  }

  private lastSeq = async () => (await this.jsm.streams.info(this.state.stream)).state.last_seq

  async execute(): Promise<ReplayResult> {
    const { state } = this
    const toEnd = state.toSeq ?? (await this.lastSeq())
    let position = await this.pass('build', toEnd)
    if (state.toSeq !== null || state.toTime !== null) {
      this.report('done', position, toEnd)
      await this.kv.delete(REPLAY_STATE_KEY)
      return this.result(false, position)
    }
    // Catch up while live projection runs, then pause it for the last stretch and the swap.
    await this.pass('catch-up', await this.lastSeq())
    // every durable projecting into the live tables, whatever the mode (default, leases, team spread)
    const durables = await projectorDurables(this.jsm, {
      stream: state.stream,
      durablePrefix: this.o.durablePrefix ?? 'projector',
      spreadPrefix: this.o.spreadPrefix ?? 'spread',
      resolvedStream: this.o.resolvedStream ?? RESOLVED_STREAM,
      partitions: this.o.partitions,
    })
    const token = `replay-${state.id}-${Date.now()}`
    await pauseProjectors(
      this.kv,
      durables.active.map((a) => a.durable),
      token,
      this.o,
    )
    try {
      const end = await this.lastSeq()
      position = await this.pass('catch-up', end)
      this.report('swap', position, end)
      await this.swap(durables.lanes, end)
      this.report('done', position, end)
    } finally {
      await resumeProjectors(this.kv)
    }
    return this.result(true, position)
  }

  private report(phase: ReplayProgress['phase'], position: number, end: number): void {
    const secs = (Date.now() - this.started) / 1000
    const msgRate = secs > 0 ? position / secs : 0
    this.o.progress?.({
      phase,
      position,
      end,
      events: this.events,
      eventsPerSecond: Math.round(secs > 0 ? this.events / secs : 0),
      etaSeconds: msgRate > 0 ? Math.max(0, Math.round((end - position) / msgRate)) : null,
    })
  }

  /** Reads the log from the replay's watermark up to `end`, projecting into the fresh tables. */
  private async pass(phase: 'build' | 'catch-up', end: number): Promise<number> {
    const { state, ctx } = this
    const done = await ctx.store.watermark(this.ns, REPLAY_SOURCE)
    if (done >= end) return done
    // Rows up to here may have been written by a replay that crashed: they are reconciled.
    const [{ m } = { m: '0' }] = await selectRows<{ m: string }>(
      this.o.ch,
      `SELECT max(_seq) AS m FROM ${this.tables.events}`,
    )
    const mayBeWritten = Number(m)
    const startByTime = done === 0 && state.fromTime !== null
    const ci = await this.jsm.consumers.add(state.stream, {
      filter_subject: `${state.subjectPrefix}.>`,
      ack_policy: AckPolicy.None,
      inactive_threshold: 60e9,
      ...(startByTime
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: state.fromTime! }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: Math.max(done + 1, state.fromSeq) }),
    })
    try {
      if (ci.num_pending > 0) {
        await projectPass(ctx, {
          js: this.js,
          stream: state.stream,
          consumer: ci.name,
          end,
          pastTo: (msg) => this.pastTo(msg),
          batchSize: this.o.batchSize ?? REPLAY_BATCH_MESSAGES,
          batchBytes: this.o.batchBytes ?? REPLAY_BATCH_BYTES,
          maxPayload: this.o.nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
          mayBeWritten,
          log: this.o.log,
          committed: (out, lastSeq) => {
            this.events += out.events
            this.report(phase, lastSeq, end)
          },
          pending: async () => (await this.jsm.consumers.info(state.stream, ci.name)).num_pending,
        })
      }
    } finally {
      await this.jsm.consumers.delete(state.stream, ci.name).catch(() => undefined)
    }
    // Nothing more in range: the replay is complete up to `end` even where no message matched.
    if (end > (await ctx.store.watermark(this.ns, REPLAY_SOURCE))) {
      await ctx.store.setWatermark(this.ns, REPLAY_SOURCE, end)
    }
    return end
  }

  private pastTo(msg: JsMsg): boolean {
    return this.state.toTime !== null && msg.time.getTime() > Date.parse(this.state.toTime)
  }

  /**
   * With the projectors paused and everything up to `end` replayed: copies the other projects' rows
   * (with `project`), swaps the tables in one RENAME, hands the lanes (`lanes`: every consumer of
   * the log that projects, in any mode) their positions in the new namespace, switches the namespace
   * pointer and drops the old tables. Team spread's row writers reconcile what the resolved stream
   * still holds when they resume (RowWriter.afterReplay).
   */
  private async swap(lanes: string[], end: number): Promise<void> {
    const { admin, state, tables } = this
    if (state.project !== null) {
      for (const k of TABLE_KINDS)
        await admin.copyRows(tables[k], LIVE_TABLES[k], `team_id != ${state.project}`)
    }
    const old = suffixedTables(`_old_${state.id}`)
    // the sessions swap with the events they are made of (their other projects' rows came with
    // the copied events, through the view)
    const sessions = {
      live: RAW_SESSIONS,
      fresh: replaySessionNames(`_replay_${state.id}`).sessions,
      old: replaySessionNames(`_old_${state.id}`).sessions,
    }
    await admin.onEachHome((ch) => beforeSessionsSwap(ch, `_replay_${state.id}`))
    await admin.swap([
      ...TABLE_KINDS.map((k) => ({ live: LIVE_TABLES[k], fresh: tables[k], old: old[k] })),
      sessions,
    ])
    // the changed-days view must follow the new events table, and every stored bucket is stale
    await admin.onEachHome(afterEventsSwap)
    await admin.onEachHome(afterSessionsSwap)
    // The live lanes continue from their own positions: everything up to `end` is in the new state.
    for (const durable of lanes) {
      await this.ctx.store.setWatermark(this.ns, laneSource(state.stream, durable), end)
    }
    // Team spread: what the resolved stream holds now is of events up to `end` (the identity stages
    // are paused); the row writers reconcile it instead of inserting it (RowWriter.afterReplay).
    const resolvedStream = this.o.resolvedStream ?? RESOLVED_STREAM
    const resolved = await this.jsm.streams.info(resolvedStream).catch((err: Error) => {
      if (/stream not found/i.test(err.message)) return undefined
      throw err
    })
    if (resolved)
      await putJson(this.kv, resolvedReplayedKey(resolvedStream), { seq: resolved.state.last_seq })
    if (state.project !== null) {
      await putJson(this.kv, namespacePointerKey(state.project), { ns: this.ns })
    } else {
      for await (const k of await this.kv.keys('nsp.t.>')) await this.kv.delete(k)
      await putJson(this.kv, namespacePointerKey('default'), { ns: this.ns })
    }
    for (const k of TABLE_KINDS) await admin.drop(old[k])
    await admin.drop(sessions.old)
    await this.kv.delete(REPLAY_STATE_KEY)
  }
}

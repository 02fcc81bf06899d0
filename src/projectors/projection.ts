import type { JetStreamClient } from '@nats-io/jetstream'
import type { Logger } from '../observability/logger.ts'
import type { PluginEvent } from '../plugins/types.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import { selectRows } from '../clickhouse/client.ts'
import { insertTsv } from './clickhouse-io.ts'
import { type DeadLetter, publishDeadLetter } from './dead-letters.ts'
import { type DecodedEvent, decodeChunk } from './decode.ts'
import { extractElementsChain } from './elements.ts'
import { io, TransientError } from './errors.ts'
import { applyEvent, type IdentityChanges } from './identity/index.ts'
import { distinctIdKey, groupTypesKey, personKey, personlessKey } from './identity-keys.ts'
import { IdentityOverlay, type KvIdentityStore } from './identity-store-kv.ts'
import {
  DISTINCT_ID_COLUMNS,
  deletedPersonLine,
  distinctIdLine,
  eventLine,
  GROUP_COLUMNS,
  GROUP_TYPE_COLUMNS,
  groupLine,
  groupTypeLine,
  OVERRIDE_COLUMNS,
  overrideLine,
  PERSON_COLUMNS,
  personLine,
} from './rows.ts'
import { EVENT_COLUMNS, type ProjectionTables } from './tables.ts'

/** One message of the EVENTS stream as the projection sees it. */
export interface LogMessage {
  seq: number
  subject: string
  data: Uint8Array
  redelivered: boolean
}

export interface ProjectionContext {
  ch: ClickHouseClient
  js: JetStreamClient
  store: KvIdentityStore
  tables: ProjectionTables
  /** names the ordered feed (lane consumer or replay) whose watermark this batch advances */
  source: string
  /** where unusable messages and events go; undefined drops them (a replay: live already sent them) */
  dlqSubject?: string
  /** project only these teams; others are acknowledged untouched */
  teams?: ReadonlySet<number>
  log: Logger
  /** the projects' plugin pipelines; absent: events are written as captured */
  plugins?: ProjectionPlugins
  /** test hook: runs after the ClickHouse inserts, before anything is acknowledged */
  afterInsert?: (info: { batch: number; rows: number }) => Promise<void> | void
}

/**
 * Runs one event through its project's plugins. `quiet`: the event's row is already in ClickHouse
 * (a redelivered batch), so its plugins run again only for the identity state and write no log
 * lines and send no webhooks.
 */
export type TeamPipeline = (event: PluginEvent, opts: { quiet: boolean }) => Promise<PluginEvent | null>

export interface ProjectionPlugins {
  /** The team's pipeline with its configs as they are now (read once per batch); none: undefined. */
  forTeam(team: number): Promise<TeamPipeline | undefined>
}

/** Milliseconds spent per stage of a batch (in the debug log line of each batch). */
export interface BatchTimings {
  decode: number
  plugins: number
  prefetch: number
  rules: number
  insert: number
  commit: number
}

export interface BatchOutcome {
  events: number
  written: number
  alreadyWritten: number
  skipped: number
  deadLettered: number
  /** events a plugin dropped */
  pluginDropped: number
  /** sequences whose whole message was unusable: terminated instead of acked */
  poison: Set<number>
  lastSeq: number
  timings: BatchTimings
}

/** A batch decided but not yet written: see prepareBatch / finishBatch. */
export interface PreparedBatch {
  id: number
  out: BatchOutcome
  /** the event rows still missing from ClickHouse, serialized (while the previous batch is written) */
  lines: string[]
  identity: IdentityRows
  overlay: IdentityOverlay
  deadLetters: DeadLetter[]
  seqs: Map<string, number>
}

interface Work {
  msg: LogMessage
  teamId: number
  events: DecodedEvent[]
  ns: string
}

let batchCounter = 0

const now = () => performance.now()

/**
 * Projects a batch of log messages: prepareBatch, then finishBatch. The caller acknowledges the
 * messages after this returns; see docs/projectors.md for why this order is exactly-once.
 */
export async function projectBatch(
  ctx: ProjectionContext,
  msgs: LogMessage[],
  reconcile: (m: LogMessage) => boolean,
): Promise<BatchOutcome> {
  return finishBatch(ctx, await prepareBatch(ctx, msgs, reconcile))
}

/**
 * Decides a batch without writing anything: decode, the rows already in ClickHouse (for messages that
 * may have been written before), plugins, person/group rules per event into an overlay of the
 * identity state. `parent` is the previous batch's overlay while that batch is still being written,
 * so that this one can be decided meanwhile (the caller finishes batches in order).
 */
export async function prepareBatch(
  ctx: ProjectionContext,
  msgs: LogMessage[],
  reconcile: (m: LogMessage) => boolean,
  parent?: IdentityOverlay,
): Promise<PreparedBatch> {
  const id = ++batchCounter
  const timings: BatchTimings = { decode: 0, plugins: 0, prefetch: 0, rules: 0, insert: 0, commit: 0 }
  const out: BatchOutcome = {
    events: 0,
    written: 0,
    alreadyWritten: 0,
    skipped: 0,
    deadLettered: 0,
    pluginDropped: 0,
    poison: new Set(),
    lastSeq: msgs.at(-1)?.seq ?? 0,
    timings,
  }
  let t = now()
  const deadLetters: DeadLetter[] = []
  const work: Work[] = []
  const seqs = new Map<string, number>()
  for (const msg of msgs) {
    const d = decodeChunk(msg.data)
    if (!d.ok) {
      out.poison.add(msg.seq)
      deadLetters.push({ reason: d.reason, subject: msg.subject, seq: msg.seq, data: msg.data })
      continue
    }
    if (ctx.teams && !ctx.teams.has(d.teamId)) continue
    const ns = await io(() => ctx.store.namespaceOf(d.teamId))
    seqs.set(ns, Math.max(seqs.get(ns) ?? 0, msg.seq))
    if (msg.seq <= (await io(() => ctx.store.watermark(ns, ctx.source)))) {
      out.skipped++
      continue
    }
    for (const r of d.rejected) {
      deadLetters.push({
        reason: r.reason,
        subject: msg.subject,
        seq: msg.seq,
        offset: r.offset,
        data: Buffer.from(JSON.stringify(r.raw ?? null)),
      })
    }
    work.push({ msg, teamId: d.teamId, events: d.events, ns })
  }
  // Which rows exist is asked before the plugins run, so that events already written do not send
  // their webhooks again. It depends only on (stream sequence, offset), never on plugin output.
  const existing = await io(() =>
    existingRows(
      ctx,
      work.filter((w) => reconcile(w.msg)),
    ),
  )
  timings.decode = now() - t

  t = now()
  if (ctx.plugins) await runPipelines(ctx.plugins, work, existing, out)
  timings.plugins = now() - t

  t = now()
  await io(() => ctx.store.prefetch(firstWaveKeys(work)))
  await io(() => ctx.store.prefetch(personKeys(ctx.store, work)))
  timings.prefetch = now() - t

  t = now()
  const overlay = new IdentityOverlay(ctx.store, parent)
  const identity = new IdentityRows()
  const lines: string[] = []
  for (const w of work) {
    for (const { offset, event: e, timestampMs, nowMs } of w.events) {
      out.events++
      let result: Awaited<ReturnType<typeof applyEvent>>
      try {
        result = await applyEvent(overlay, w.teamId, {
          uuid: e.uuid,
          event: e.event,
          distinct_id: e.distinct_id,
          properties: e.properties,
          timestamp_ms: timestampMs,
        })
      } catch (err) {
        if (err instanceof TransientError) throw err
        deadLetters.push({
          reason: `projection failed: ${(err as Error).message}`,
          subject: w.msg.subject,
          seq: w.msg.seq,
          offset,
          data: Buffer.from(JSON.stringify(e)),
        })
        continue
      }
      await overlay.applyChanges(result.changes)
      identity.add(result.changes)
      if (result.dropped) {
        ctx.log.debug({ uuid: e.uuid, reason: result.reason }, 'event dropped by person rules')
        continue
      }
      if (existing.has(`${w.msg.seq}:${offset}`)) {
        out.alreadyWritten++
        continue
      }
      const { chain, properties } = extractElementsChain(result.eventProperties)
      const sessionId = properties.$session_id
      lines.push(
        eventLine({
          teamId: w.teamId,
          uuid: e.uuid,
          event: e.event,
          distinctId: e.distinct_id,
          personId: result.personId,
          timestampMs,
          properties,
          personProperties: result.personProperties,
          elementsChain: chain,
          sessionId: typeof sessionId === 'string' ? sessionId : '',
          groups: result.groupColumns,
          createdAtMs: nowMs,
          seq: w.msg.seq,
          offset,
        }),
      )
    }
  }
  timings.rules = now() - t
  return { id, out, lines, identity, overlay, deadLetters, seqs }
}

/** Writes a prepared batch: its rows, then its dead letters and identity state. */
export async function finishBatch(ctx: ProjectionContext, p: PreparedBatch): Promise<BatchOutcome> {
  await writeRows(ctx, p)
  return commitBatch(ctx, p)
}

/** Person/group rows, then event rows. */
export async function writeRows(ctx: ProjectionContext, p: PreparedBatch): Promise<void> {
  const t = now()
  // Persons before events: a reader never sees an event whose person row is missing.
  await io(() => p.identity.insert(ctx))
  await io(() => insertTsv(ctx.ch, ctx.tables.events, EVENT_COLUMNS, p.lines))
  p.out.written = p.lines.length
  p.out.timings.insert = now() - t
  await ctx.afterInsert?.({ batch: p.id, rows: p.lines.length })
}

/**
 * Dead letters, then the identity state and the watermark. Batches must be committed in log order;
 * the next batch's rows may be written meanwhile (a crash leaves both unacknowledged, and both are
 * reconciled when redelivered).
 */
export async function commitBatch(ctx: ProjectionContext, p: PreparedBatch): Promise<BatchOutcome> {
  const t = now()
  const dlq = ctx.dlqSubject
  if (dlq) for (const d of p.deadLetters) await io(() => publishDeadLetter(ctx.js, dlq, d))
  p.out.deadLettered = p.deadLetters.length
  await io(() => ctx.store.commit(p.overlay.values(), ctx.source, p.seqs))
  p.out.timings.commit = now() - t
  return p.out
}

// Events of one team, through the team's pipeline as configured when the batch is decided.
async function runPipelines(
  plugins: ProjectionPlugins,
  work: Work[],
  existing: Set<string>,
  out: BatchOutcome,
): Promise<void> {
  const pipelines = new Map<number, TeamPipeline | undefined>()
  for (const w of work) {
    if (!pipelines.has(w.teamId)) pipelines.set(w.teamId, await io(() => plugins.forTeam(w.teamId)))
    const run = pipelines.get(w.teamId)
    if (!run) continue
    const kept: DecodedEvent[] = []
    for (const d of w.events) {
      const result = await run(d.event, { quiet: existing.has(`${w.msg.seq}:${d.offset}`) })
      if (result === null) {
        out.pluginDropped++
        continue
      }
      kept.push({ ...d, event: pluginOutput(d.event, result) })
    }
    w.events = kept
  }
}

// A plugin may rename the event, change its distinct id and its properties; the uuid, timestamps and
// position stay those of the log, which reconciliation and ordering rely on.
function pluginOutput(e: DecodedEvent['event'], r: PluginEvent): DecodedEvent['event'] {
  const name = typeof r.event === 'string' && r.event.length > 0 ? r.event : e.event
  const id = typeof r.distinct_id === 'string' && r.distinct_id.length > 0 ? r.distinct_id : e.distinct_id
  const props = r.properties && typeof r.properties === 'object' ? r.properties : e.properties
  if (name === e.event && id === e.distinct_id && props === e.properties) return e
  return { ...e, event: name, distinct_id: id, properties: props }
}

function firstWaveKeys(work: Work[]): { team: number; rel: string }[] {
  const keys: { team: number; rel: string }[] = []
  const seen = new Set<number>()
  for (const w of work) {
    const team = w.teamId
    if (!seen.has(team)) {
      seen.add(team)
      keys.push({ team, rel: groupTypesKey(team) })
    }
    for (const { event: e } of w.events) {
      const ids = [e.distinct_id]
      const p = e.properties
      if (typeof p.$anon_distinct_id === 'string') ids.push(p.$anon_distinct_id)
      if (typeof p.alias === 'string') ids.push(p.alias)
      for (const id of ids) {
        keys.push({ team, rel: distinctIdKey(team, id) }, { team, rel: personlessKey(team, id) })
      }
    }
  }
  return keys
}

function personKeys(store: KvIdentityStore, work: Work[]): { team: number; rel: string }[] {
  // Only what the first wave found: read from the cache, no round trip.
  const keys: { team: number; rel: string }[] = []
  for (const w of work) {
    for (const { event: e } of w.events) {
      const d = store.cached(w.ns, distinctIdKey(w.teamId, e.distinct_id)) as { personId?: string } | null
      if (d?.personId) keys.push({ team: w.teamId, rel: personKey(w.teamId, d.personId) })
    }
  }
  return keys
}

async function existingRows(ctx: ProjectionContext, suspects: Work[]): Promise<Set<string>> {
  if (suspects.length === 0) return new Set()
  const teams = new Set<number>()
  const seqs = new Set<number>()
  let min = Number.POSITIVE_INFINITY
  let max = 0
  for (const w of suspects) {
    teams.add(w.teamId)
    seqs.add(w.msg.seq)
    for (const e of w.events) {
      min = Math.min(min, e.timestampMs)
      max = Math.max(max, e.timestampMs)
    }
  }
  if (max === 0) return new Set()
  const rows = await selectRows<{ _seq: string; _offset: number }>(
    ctx.ch,
    `SELECT _seq, _offset FROM ${ctx.tables.events}
     WHERE team_id IN (${[...teams].join(',')}) AND _seq IN (${[...seqs].join(',')})
       AND timestamp >= toDateTime(${Math.floor(min / 1000)})
       AND timestamp <= toDateTime(${Math.floor(max / 1000)})`,
  )
  return new Set(rows.map((r) => `${r._seq}:${r._offset}`))
}

/** The identity rows of a batch, one per key: the last state wins (tables are versioned). */
export class IdentityRows {
  private readonly persons = new Map<string, string>()
  private readonly distinctIds = new Map<string, string>()
  private readonly overrides = new Map<string, string>()
  private readonly groups = new Map<string, string>()
  private readonly groupTypes = new Map<string, string>()

  add(c: IdentityChanges): void {
    const t = c.teamId
    for (const p of c.persons) this.persons.set(`${t}|${p.id}`, personLine(t, p))
    for (const p of c.deletedPersons) this.persons.set(`${t}|${p.id}`, deletedPersonLine(t, p))
    for (const r of c.distinctIds) this.distinctIds.set(`${t}|${r.distinctId}`, distinctIdLine(t, r))
    for (const r of c.overrides) this.overrides.set(`${t}|${r.oldPersonId}`, overrideLine(t, r))
    for (const g of c.groups) this.groups.set(`${t}|${g.groupTypeIndex}|${g.groupKey}`, groupLine(t, g))
    for (const r of c.groupTypes) this.groupTypes.set(`${t}|${r.groupType}`, groupTypeLine(t, r))
  }

  async insert(ctx: ProjectionContext): Promise<void> {
    const { ch, tables } = ctx
    await insertTsv(ch, tables.person, PERSON_COLUMNS, [...this.persons.values()])
    await insertTsv(ch, tables.person_distinct_id, DISTINCT_ID_COLUMNS, [...this.distinctIds.values()])
    await insertTsv(ch, tables.person_overrides, OVERRIDE_COLUMNS, [...this.overrides.values()])
    await insertTsv(ch, tables.groups, GROUP_COLUMNS, [...this.groups.values()])
    await insertTsv(ch, tables.group_type_mapping, GROUP_TYPE_COLUMNS, [...this.groupTypes.values()])
  }
}

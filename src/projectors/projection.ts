import type { JetStreamClient } from '@nats-io/jetstream'
import type { Logger } from '../logger.ts'
import type { ClickHouseClient } from '../store/clickhouse.ts'
import { insertTsv, selectRows } from './clickhouse-io.ts'
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
  type EventRow,
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
  /** test hook: runs after the ClickHouse inserts, before anything is acknowledged */
  afterInsert?: (info: { batch: number; rows: number }) => Promise<void> | void
}

export interface BatchOutcome {
  events: number
  written: number
  alreadyWritten: number
  skipped: number
  deadLettered: number
  /** sequences whose whole message was unusable: terminated instead of acked */
  poison: Set<number>
  lastSeq: number
}

interface Work {
  msg: LogMessage
  teamId: number
  events: DecodedEvent[]
  ns: string
}

let batchCounter = 0

/**
 * Projects a batch of log messages, in order: decode, person/group rules per event, ClickHouse rows
 * (events only where missing when the batch may have been written before), identity commit. The caller
 * acknowledges the messages after this returns; see docs/projectors.md for why this order is exactly-once.
 */
export async function projectBatch(
  ctx: ProjectionContext,
  msgs: LogMessage[],
  reconcile: (m: LogMessage) => boolean,
): Promise<BatchOutcome> {
  const batch = ++batchCounter
  const out: BatchOutcome = {
    events: 0,
    written: 0,
    alreadyWritten: 0,
    skipped: 0,
    deadLettered: 0,
    poison: new Set(),
    lastSeq: msgs.at(-1)?.seq ?? 0,
  }
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

  await io(() => ctx.store.prefetch(firstWaveKeys(work)))
  await io(() => ctx.store.prefetch(personKeys(ctx.store, work)))

  const overlay = new IdentityOverlay(ctx.store)
  const identity = new IdentityRows()
  const rows: EventRow[] = []
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
      const { chain, properties } = extractElementsChain(result.eventProperties)
      const sessionId = properties.$session_id
      rows.push({
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
      })
    }
  }

  const suspect = new Set(work.filter((w) => reconcile(w.msg)).map((w) => w.msg.seq))
  let toWrite = rows
  if (suspect.size > 0) {
    const existing = await io(() =>
      existingRows(
        ctx,
        rows.filter((r) => suspect.has(r.seq)),
      ),
    )
    toWrite = rows.filter((r) => !existing.has(`${r.seq}:${r.offset}`))
    out.alreadyWritten = rows.length - toWrite.length
  }
  // Persons before events: a reader never sees an event whose person row is missing.
  await io(() => identity.insert(ctx))
  await io(() => insertTsv(ctx.ch, ctx.tables.events, EVENT_COLUMNS, toWrite.map(eventLine)))
  out.written = toWrite.length
  await ctx.afterInsert?.({ batch, rows: toWrite.length })

  const dlq = ctx.dlqSubject
  if (dlq) for (const d of deadLetters) await io(() => publishDeadLetter(ctx.js, dlq, d))
  out.deadLettered = deadLetters.length
  await io(() => ctx.store.commit(overlay.values(), ctx.source, seqs))
  return out
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

async function existingRows(ctx: ProjectionContext, candidates: EventRow[]): Promise<Set<string>> {
  if (candidates.length === 0) return new Set()
  const teams = [...new Set(candidates.map((r) => r.teamId))]
  const seqs = [...new Set(candidates.map((r) => r.seq))]
  let min = Number.POSITIVE_INFINITY
  let max = 0
  for (const r of candidates) {
    min = Math.min(min, r.timestampMs)
    max = Math.max(max, r.timestampMs)
  }
  const rows = await selectRows<{ _seq: string; _offset: number }>(
    ctx.ch,
    `SELECT _seq, _offset FROM ${ctx.tables.events}
     WHERE team_id IN (${teams.join(',')}) AND _seq IN (${seqs.join(',')})
       AND timestamp >= toDateTime(${Math.floor(min / 1000)})
       AND timestamp <= toDateTime(${Math.floor(max / 1000)})`,
  )
  return new Set(rows.map((r) => `${r._seq}:${r._offset}`))
}

/** The identity rows of a batch, one per key: the last state wins (tables are versioned). */
class IdentityRows {
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

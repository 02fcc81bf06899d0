import type { PersonChanges } from '../persons/change-feed.ts'
import type { JetStreamClient } from '@nats-io/jetstream'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { Logger } from '../observability/logger.ts'
import type { PluginEvent } from '../plugins/types.ts'
import type { CapturedEvent } from '../jetstream/messages.ts'
import type { DeadLetterList } from './dead-letters.ts'
import type { Fence } from './errors.ts'
import type { IdentityOverlay } from './identity-store/overlay.ts'
import type { KvIdentityStore } from './identity-store/store.ts'
import type { EventRow as EventFields } from './rows.ts'
import type { ProjectionTables } from './tables.ts'
import type { TaxonomyBatch, TaxonomyCollector } from '../taxonomy/collect.ts'

// The shapes one batch of log messages takes on its way to ClickHouse: prepared (prepare.ts), written
// (a BatchWriter, writer.ts), committed (projection.ts).

/** One message of the EVENTS stream as the projection sees it. */
export interface LogMessage {
  seq: number
  subject: string
  data: Uint8Array
  redelivered: boolean
}

/** Everything a batch is projected with; one per lane consumer (or replay). */
export interface ProjectionContext {
  ch: ClickHouseClient
  js: JetStreamClient
  store: KvIdentityStore
  tables: ProjectionTables
  /** where the batch's rows go (ClickHouse; tests wrap it to inject faults) */
  writer: BatchWriter
  /** names the ordered feed (lane consumer or replay) whose watermark this batch advances */
  source: string
  /** where unusable messages and events go; undefined drops them (a replay: live already sent them) */
  dlqSubject?: string
  /** project only these teams; others are acknowledged untouched */
  teams?: ReadonlySet<number>
  log: Logger
  /** the projects' plugin pipelines; absent: events are written as captured */
  plugins?: ProjectionPlugins
  /**
   * Team spread (docs/scaling.md): the event rows are left to the row writers, so each event keeps
   * its row's fields (EventRow.fields) instead of its TabSeparated line.
   */
  resolveOnly?: boolean
  /**
   * Leases (docs/scaling.md): called before the batch's identity state is committed (the writer
   * fences the rows itself, right before it sends them); throws FencedError once the lease is gone
   */
  fence?: Fence
  /**
   * the projects' taxonomy (event and property definitions) this process wrote; absent: none is
   * recorded (steps/record-taxonomy.ts)
   */
  taxonomy?: TaxonomyCollector
}

/**
 * Runs one event through its project's plugins. `quiet`: the event's row is already in ClickHouse
 * (a redelivered batch), so its plugins run again only for the identity state and write no log
 * lines and send no webhooks.
 */
export type TeamPipeline = (event: PluginEvent, opts: { quiet: boolean }) => Promise<PluginEvent | null>

/** The plugin pipelines of the projects, as the projection reads them. */
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

/** What became of a batch's messages and events; filled in as the batch goes. */
export interface BatchOutcome {
  events: number
  written: number
  alreadyWritten: number
  skipped: number
  deadLettered: number
  /** events a plugin dropped */
  pluginDropped: number
  /** event rows ClickHouse refused for their content (dead-lettered with the server's reason) */
  refused: number
  /** sequences whose whole message was unusable: terminated instead of acked */
  poison: Set<number>
  lastSeq: number
  timings: BatchTimings
}

/** One event row, serialized, with where it came from (for its dead letter should ClickHouse refuse it). */
export interface EventRow {
  /** the TabSeparated line, '\n' included; empty when `fields` is set (resolveOnly) */
  line: string
  /** the row's fields, for the row writers (resolveOnly) */
  fields?: EventFields
  /**
   * set when a row writer can rebuild the row from the logged event and the person decision (no
   * plugin ran on the event): the group type indexes its $groups got (resolved.ts)
   */
  recompute?: { groupIndexes?: Record<string, number | null> }
  timestampMs: number
  subject: string
  seq: number
  offset: number
  event: CapturedEvent
}

/** Serialized rows of one identity table. */
export interface TableLines {
  table: keyof ProjectionTables
  columns: string[]
  lines: string[]
}

/** The rows of a batch: identity tables first (a reader never sees an event whose person is missing). */
export interface BatchRows {
  /** the batch's number in this process */
  batch: number
  identity: TableLines[]
  events: EventRow[]
  /** what the person change feed announces once the rows are written (src/persons/change-feed.ts) */
  personChanges?: PersonChanges[]
  /** sequences of the messages that may have been projected before (reconciled; resolveOnly) */
  mayRepeat?: ReadonlySet<number>
}

/** A row ClickHouse refused for its content, with the server's reason. */
export interface RefusedRow {
  table: keyof ProjectionTables
  reason: string
  line: string
  /** set for event rows */
  event?: EventRow
}

/** Where a batch's rows go. */
export interface BatchWriter {
  /**
   * Writes the rows (identity tables, then events); resolves once ClickHouse holds every row it did
   * not refuse for its content, and returns those it refused. Rejects on anything worth retrying
   * (network, timeouts, overload); rows may then be partly written (the batch is reconciled).
   */
  write(rows: BatchRows): Promise<RefusedRow[]>
}

/** A batch decided but not yet written: see prepareBatch / finishBatch. */
export interface PreparedBatch {
  id: number
  out: BatchOutcome
  /** the rows still missing from ClickHouse, serialized (while the previous batch is written) */
  rows: BatchRows
  overlay: IdentityOverlay
  deadLetters: DeadLetterList
  /** per identity namespace, the last stream sequence of the batch */
  seqs: Map<string, number>
  /** the batch's last message (names the dead letters of refused person/group rows) */
  last: { subject: string; seq: number }
  /** the names new to the taxonomy (steps/record-taxonomy.ts), written with the rows */
  taxonomy?: TaxonomyBatch
}

/** A fresh outcome for a batch ending at `lastSeq`. */
export function newOutcome(lastSeq: number): BatchOutcome {
  return {
    events: 0,
    written: 0,
    alreadyWritten: 0,
    skipped: 0,
    deadLettered: 0,
    pluginDropped: 0,
    refused: 0,
    poison: new Set(),
    lastSeq,
    timings: { decode: 0, plugins: 0, prefetch: 0, rules: 0, insert: 0, commit: 0 },
  }
}

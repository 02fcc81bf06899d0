import { setImmediate as nextTurn } from 'node:timers/promises'
import type { BatchOutcome, EventRow, LogMessage, PreparedBatch, ProjectionContext } from './batch.ts'
import { newOutcome } from './batch.ts'
import { DeadLetterList } from './dead-letters.ts'
import type { DecodedEvent } from './decode.ts'
import { io } from './errors.ts'
import { IdentityOverlay } from './identity-store/overlay.ts'
import { IdentityRows } from './identity-rows.ts'
import { applyPersonRules } from './steps/apply-person-rules.ts'
import { decodeMessage } from './steps/decode-message.ts'
import { encodeEventRow } from './steps/encode-event-row.ts'
import { mergePersonUpdates } from './steps/merge-person-updates.ts'
import { distinctIdKeys, personKeys } from './steps/prefetch-keys.ts'
import { DROPS, dlq, type StepResult } from './steps/results.ts'
import { beginTaxonomy, seeEvent } from './steps/record-taxonomy.ts'
import { runPlugins } from './steps/run-plugins.ts'
import { selectTeam } from './steps/select-team.ts'
import { skipCommitted } from './steps/skip-committed.ts'
import { findWrittenRows, positionKey, skipWritten, type WrittenRows } from './steps/skip-written.ts'

// Deciding a batch: each message, then each of its events, goes through the steps in ./steps/, each
// returning ok, drop or dlq (./steps/results.ts). What the steps decide is counted and dead-lettered
// here, in settle(), and nowhere else. Nothing is written: see projection.ts for the rest.

/** The events of one message that go on, with the message's team and identity namespace. */
interface Work {
  msg: LogMessage
  teamId: number
  ns: string
  events: DecodedEvent[]
  /** a plugin pipeline ran on the events (their rows cannot be rebuilt from the log: resolved.ts) */
  plugged?: boolean
}

let batchCounter = 0

const now = () => performance.now()

/**
 * Events (and messages) decided between turns given to the event loop: a large batch is decided
 * for seconds, and the batches before it (a pipeline) are written and committed meanwhile.
 */
const EVENTS_A_TURN = 1000
const MESSAGES_A_TURN = 8

/** A batch being decided: its outcome, its dead letters, and the one place step results land. */
class Decision {
  readonly out: BatchOutcome
  readonly dead = new DeadLetterList()

  constructor(
    readonly ctx: ProjectionContext,
    msgs: LogMessage[],
  ) {
    this.out = newOutcome(msgs.at(-1)?.seq ?? 0)
  }

  /**
   * The value of an ok result. A drop is counted by its code; a dead letter is recorded (the whole
   * message when `offset` is undefined, else one event, `raw` being the event as it was).
   */
  settle<T>(r: StepResult<T>, msg: LogMessage, offset?: number, raw?: unknown): T | undefined {
    if (r.type === 'ok') return r.value
    if (r.type === 'dlq') {
      if (offset === undefined) {
        this.out.poison.add(msg.seq)
        this.dead.message(msg, r.reason)
      } else {
        this.dead.event(msg, offset, r.reason, raw)
      }
      return undefined
    }
    if (r.reason === DROPS.committed) this.out.skipped++
    else if (r.reason === DROPS.plugin) this.out.pluginDropped++
    else if (r.reason === DROPS.written) this.out.alreadyWritten++
    else if (r.reason !== DROPS.otherTeam)
      this.ctx.log.debug({ seq: msg.seq, offset, reason: r.reason }, 'event dropped')
    return undefined
  }
}

/**
 * Decides a batch without writing anything: decode, the rows already in ClickHouse (for messages that
 * may have been written before), plugins, person/group rules per event into an overlay of the
 * identity state, the rows to write. `parent` is the previous batch's overlay while that batch is
 * still being written, so that this one can be decided meanwhile (the caller finishes batches in order).
 */
export async function prepareBatch(
  ctx: ProjectionContext,
  msgs: LogMessage[],
  reconcile: (m: LogMessage) => boolean,
  parent?: IdentityOverlay,
): Promise<PreparedBatch> {
  const id = ++batchCounter
  const b = new Decision(ctx, msgs)
  const { timings } = b.out
  const seqs = new Map<string, number>()

  let t = now()
  const work = await admit(b, msgs, seqs)
  // Which rows exist is asked before the plugins run, so that events already written do not send
  // their webhooks again.
  const suspects = work.filter((w) => reconcile(w.msg))
  const written = await io(() => findWrittenRows(ctx.ch, ctx.tables.events, suspects))
  timings.decode = now() - t

  t = now()
  await beforeRules(b, work, written)
  timings.plugins = now() - t

  t = now()
  await io(() => ctx.store.prefetch(distinctIdKeys(ctx.store, work)))
  await io(() => ctx.store.prefetch(personKeys(ctx.store, work)))
  timings.prefetch = now() - t

  t = now()
  const overlay = new IdentityOverlay(ctx.store, parent)
  const identity = new IdentityRows()
  const events: EventRow[] = []
  const taxonomy = beginTaxonomy(ctx.taxonomy)
  for (const w of work) {
    const groupTypes = () => overlay.getGroupTypes(w.teamId)
    for (const d of w.events) {
      if (++b.out.events % EVENTS_A_TURN === 0) await nextTurn()
      // (awaited only when it is a promise: most events are decided from memory, see applyEvent)
      const decided = applyPersonRules(overlay, identity, w.teamId, d)
      const person = b.settle(decided instanceof Promise ? await decided : decided, w.msg, d.offset, d.event)
      if (!person) continue
      const seen = seeEvent(taxonomy, w.teamId, d, person, groupTypes)
      if (seen) await seen
      // Team spread: every event goes to the row writers, which reconcile (a resolved piece must hold
      // the same events each time it is published: resolved.ts).
      if (!ctx.resolveOnly && !b.settle(skipWritten(d, written, w.msg.seq, d.offset), w.msg, d.offset))
        continue
      const row = b.settle(
        encodeEventRow(w.msg, w.teamId, d, person, ctx.resolveOnly === true, w.plugged !== true),
        w.msg,
        d.offset,
        d.event,
      )
      if (row) events.push(row)
    }
  }
  timings.rules = now() - t
  const rows = {
    batch: id,
    identity: identity.tables(),
    events,
    personChanges: identity.personChanges(),
    mayRepeat: ctx.resolveOnly ? new Set(suspects.map((w) => w.msg.seq)) : undefined,
  }
  const lastMsg = msgs.at(-1)
  const last = { subject: lastMsg?.subject ?? '', seq: lastMsg?.seq ?? 0 }
  return { id, out: b.out, rows, overlay, deadLetters: b.dead, seqs, last, taxonomy }
}

// Message steps: decode, team, watermark; invalid events of a chunk go to the dead letters here.
async function admit(b: Decision, msgs: LogMessage[], seqs: Map<string, number>): Promise<Work[]> {
  const { store, source, teams } = b.ctx
  const work: Work[] = []
  for (const [i, msg] of msgs.entries()) {
    if (i % MESSAGES_A_TURN === MESSAGES_A_TURN - 1) await nextTurn()
    const chunk = b.settle(decodeMessage(msg), msg)
    if (!chunk || !b.settle(selectTeam(chunk, teams), msg)) continue
    const ns = await io(() => store.namespaceOf(chunk.teamId))
    seqs.set(ns, Math.max(seqs.get(ns) ?? 0, msg.seq))
    const watermark = await io(() => store.watermark(ns, source))
    if (!b.settle(skipCommitted(msg, watermark), msg)) continue
    for (const r of chunk.rejected) b.settle(dlq(r.reason), msg, r.offset, r.raw)
    work.push({ msg, teamId: chunk.teamId, ns, events: chunk.events })
  }
  return work
}

// Event steps before the person rules: top-level person updates, then the team's plugins (read once
// per batch and team, so every event of the batch goes through the same steps).
async function beforeRules(b: Decision, work: Work[], written: WrittenRows): Promise<void> {
  const plugins = b.ctx.plugins
  const pipelines = new Map<number, Awaited<ReturnType<NonNullable<typeof plugins>['forTeam']>>>()
  for (const w of work) {
    if (plugins && !pipelines.has(w.teamId))
      pipelines.set(w.teamId, await io(() => plugins.forTeam(w.teamId)))
    const pipeline = pipelines.get(w.teamId)
    const kept: DecodedEvent[] = []
    for (const d of w.events) {
      let event = b.settle(mergePersonUpdates(d.event), w.msg, d.offset, d.event)
      if (event && pipeline) {
        const quiet = written.has(positionKey(w.msg.seq, d.offset))
        event = b.settle(await runPlugins(pipeline, event, quiet), w.msg, d.offset, d.event)
      }
      if (event) kept.push(event === d.event ? d : { ...d, event })
    }
    w.events = kept
    w.plugged = pipeline !== undefined
  }
}

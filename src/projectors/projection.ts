import type { BatchOutcome, LogMessage, PreparedBatch, ProjectionContext } from './batch.ts'
import { publishDeadLetter } from './dead-letters.ts'
import { io } from './errors.ts'
import { prepareBatch } from './prepare.ts'
import { writeTaxonomyOf } from './steps/record-taxonomy.ts'

// A batch from decided to committed. See docs/projectors.md ("Exactly once") for why this order:
// rows, then dead letters, then identity state and watermark, then (by the caller) the ack.

const now = () => performance.now()

/**
 * Projects a batch of log messages: prepareBatch, then finishBatch. The caller acknowledges the
 * messages after this returns.
 */
export async function projectBatch(
  ctx: ProjectionContext,
  msgs: LogMessage[],
  reconcile: (m: LogMessage) => boolean,
): Promise<BatchOutcome> {
  return finishBatch(ctx, await prepareBatch(ctx, msgs, reconcile))
}

/** Writes a prepared batch: its rows, then its dead letters and identity state. */
export async function finishBatch(ctx: ProjectionContext, p: PreparedBatch): Promise<BatchOutcome> {
  await writeRows(ctx, p)
  return commitBatch(ctx, p)
}

/**
 * Person/group rows, then event rows, through the context's writer. Rows ClickHouse refuses for their
 * content join the batch's dead letters with the server's reason; any other failure is thrown as
 * transient (the batch is retried and reconciled).
 */
export async function writeRows(ctx: ProjectionContext, p: PreparedBatch): Promise<void> {
  const t = now()
  const refused = await io(() => ctx.writer.write(p.rows))
  for (const r of refused) {
    if (r.event) p.deadLetters.event(r.event, r.event.offset, r.reason, r.event.event, 'refused')
    else p.deadLetters.identityRow(p.last, r.table, r.line, r.reason)
  }
  p.out.refused = refused.filter((r) => r.event).length
  p.out.written = p.rows.events.length - p.out.refused
  await writeTaxonomyOf(p.taxonomy, ctx.ch, ctx.log)
  p.out.timings.insert = now() - t
}

/**
 * Dead letters, then the identity state and the watermark. Batches must be committed in log order;
 * the next batch's rows may be written meanwhile (a crash leaves both unacknowledged, and both are
 * reconciled when redelivered).
 */
export async function commitBatch(ctx: ProjectionContext, p: PreparedBatch): Promise<BatchOutcome> {
  const t = now()
  await ctx.fence?.()
  const dlq = ctx.dlqSubject
  if (dlq) for (const d of p.deadLetters.items) await io(() => publishDeadLetter(ctx.js, dlq, d))
  p.out.deadLettered = p.deadLetters.length
  await io(() => ctx.store.commit(p.overlay.values(), ctx.source, p.seqs, ctx.fence))
  p.out.timings.commit = now() - t
  return p.out
}

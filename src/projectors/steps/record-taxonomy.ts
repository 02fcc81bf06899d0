import type { TaxonomyBatch, TaxonomyCollector } from '../../taxonomy/collect.ts'
import { writeTaxonomy } from '../../taxonomy/write.ts'
import type { ClickHouseClient } from '../../clickhouse/client.ts'
import type { Logger } from '../../observability/logger.ts'
import type { DecodedEvent } from '../decode.ts'
import { contentRefusal, io } from '../errors.ts'
import type { Awaitable, GroupTypeMapping } from '../identity/types.ts'
import type { PersonOutcome } from './apply-person-rules.ts'

// The projects' taxonomy (event and property definitions, docs/taxonomy.md) as a side step of the
// projection, kept apart so it can be seated elsewhere: `seeEvent` after the person rules of each
// event they keep (also events whose rows were written before: a crash between their rows and these
// must not lose a name), `writeTaxonomyOf` after the batch's rows and before its commit and ack.
// Nothing is written for a batch of known names. A failed write is retried with the batch (the
// rows reconcile; these are upserts); one ClickHouse refuses for its content is logged and left
// out, so the taxonomy never stalls a lane.

/** A batch's taxonomy, begun when `collector` is set (ProjectionContext.taxonomy). */
export const beginTaxonomy = (collector: TaxonomyCollector | undefined) => collector?.begin()

/**
 * Notes the names of one kept event. `groupTypes`: the project's group types after the rules (read
 * only for a $groupidentify, whose group type index its properties do not carry: then a promise to
 * await, else nothing, so that the projection's loop awaits nothing per event).
 */
export function seeEvent(
  batch: TaxonomyBatch | undefined,
  teamId: number,
  d: DecodedEvent,
  person: PersonOutcome,
  groupTypes: () => Awaitable<GroupTypeMapping[]>,
): Promise<void> | undefined {
  if (!batch) return undefined
  const type = person.eventProperties.$group_type
  if (d.event.event !== '$groupidentify' || type === undefined || type === null) {
    batch.see(teamId, d.event.event, person.eventProperties, d.nowMs)
    return undefined
  }
  return (async () => {
    const mapping = (await groupTypes()).find((m) => m.groupType === String(type))
    batch.see(teamId, d.event.event, person.eventProperties, d.nowMs, mapping?.groupTypeIndex ?? null)
  })()
}

/** Writes the batch's taxonomy rows (none: no write); throws TransientError on a failure to retry. */
export async function writeTaxonomyOf(
  batch: TaxonomyBatch | undefined,
  ch: ClickHouseClient,
  log: Pick<Logger, 'warn'>,
): Promise<void> {
  if (!batch || batch.empty) return
  const rows = batch.rows()
  try {
    await io(() => writeTaxonomy(ch, rows))
  } catch (err) {
    const refused = contentRefusal((err as Error).cause ?? err)
    if (refused === undefined) throw err
    log.warn({ reason: refused }, 'taxonomy rows refused; left out')
    return
  }
  batch.written(rows)
}

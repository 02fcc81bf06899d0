import type { ApplyEventResult, WritableIdentityStore } from '../identity/index.ts'
import { applyEvent } from '../identity/index.ts'
import type { DecodedEvent } from '../decode.ts'
import { TransientError } from '../errors.ts'
import type { IdentityRows } from '../identity-rows.ts'
import { dlq, drop, ok, type StepResult } from './results.ts'

/** What the person rules decided for an event that is written. */
export type PersonOutcome = Extract<ApplyEventResult, { dropped: false }>

/**
 * Applies the person and group rules to one event, in log order: its identity changes go into the
 * batch's overlay (an IdentityOverlay) and rows whatever happens to the event itself. Ok with the person the event belongs
 * to; drop when the rules drop the event (e.g. an illegal distinct id); dead letter when they fail on
 * it. I/O failures are thrown (the batch is retried).
 */
export async function applyPersonRules(
  overlay: WritableIdentityStore,
  rows: IdentityRows,
  teamId: number,
  d: DecodedEvent,
): Promise<StepResult<PersonOutcome>> {
  const e = d.event
  let result: ApplyEventResult
  try {
    result = await applyEvent(overlay, teamId, {
      uuid: e.uuid,
      event: e.event,
      distinct_id: e.distinct_id,
      properties: e.properties,
      timestamp_ms: d.timestampMs,
    })
  } catch (err) {
    if (err instanceof TransientError) throw err
    return dlq(`projection failed: ${(err as Error).message}`)
  }
  await overlay.applyChanges(result.changes)
  rows.add(result.changes)
  return result.dropped ? drop(result.reason) : ok(result)
}

import type { ApplyEventResult, Awaitable, WritableIdentityStore } from '../identity/index.ts'
import { applyEvent, changesNothing } from '../identity/index.ts'
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
export function applyPersonRules(
  overlay: WritableIdentityStore,
  rows: IdentityRows,
  teamId: number,
  d: DecodedEvent,
): Awaitable<StepResult<PersonOutcome>> {
  const e = d.event
  // An event decided from memory goes through without a promise (applyEvent).
  let result: Awaitable<ApplyEventResult>
  try {
    result = applyEvent(overlay, teamId, {
      uuid: e.uuid,
      event: e.event,
      distinct_id: e.distinct_id,
      properties: e.properties,
      timestamp_ms: d.timestampMs,
    })
  } catch (err) {
    return failed(err)
  }
  if (result instanceof Promise) return result.then((r) => applied(overlay, rows, r), failed)
  return applied(overlay, rows, result)
}

function failed(err: unknown): StepResult<PersonOutcome> {
  if (err instanceof TransientError) throw err
  return dlq(`projection failed: ${(err as Error).message}`)
}

// (failures from here on are not the event's: they are thrown, as I/O failures are)
function applied(
  overlay: WritableIdentityStore,
  rows: IdentityRows,
  result: ApplyEventResult,
): Awaitable<StepResult<PersonOutcome>> {
  if (changesNothing(result.changes)) return decided(result)
  const changed = overlay.applyChanges(result.changes)
  if (changed instanceof Promise) return changed.then(() => outcome(rows, result))
  return outcome(rows, result)
}

function outcome(rows: IdentityRows, result: ApplyEventResult): StepResult<PersonOutcome> {
  rows.add(result.changes)
  return decided(result)
}

const decided = (result: ApplyEventResult): StepResult<PersonOutcome> =>
  result.dropped ? drop(result.reason) : ok(result)

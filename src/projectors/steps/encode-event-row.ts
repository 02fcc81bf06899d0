import type { EventRow, LogMessage } from '../batch.ts'
import type { DecodedEvent } from '../decode.ts'
import { extractElementsChain } from '../elements.ts'
import { eventLine, type EventRow as EventFields } from '../rows.ts'
import type { PersonOutcome } from './apply-person-rules.ts'
import { ok, type StepResult } from './results.ts'

/** What the person rules decided that an event's row holds. */
export type RowDecision = Pick<
  PersonOutcome,
  'personId' | 'personProperties' | 'personPropertiesShared' | 'groupColumns' | 'eventProperties'
>

/** The fields of an event's row: the event as decoded (after plugins) and the person rules' decision. */
export function eventFields(seq: number, teamId: number, d: DecodedEvent, person: RowDecision): EventFields {
  const e = d.event
  const { chain, properties } = extractElementsChain(person.eventProperties)
  const sessionId = properties.$session_id
  return {
    teamId,
    uuid: e.uuid,
    event: e.event,
    distinctId: e.distinct_id,
    personId: person.personId,
    timestampMs: d.timestampMs,
    properties,
    personProperties: person.personProperties,
    personPropertiesShared: person.personPropertiesShared,
    elementsChain: chain,
    sessionId: typeof sessionId === 'string' ? sessionId : '',
    groups: person.groupColumns,
    createdAtMs: d.nowMs,
    seq,
    offset: d.offset,
  }
}

/**
 * Serializes an event's row (TabSeparated) with the person rules' outcome; keeps where it came from.
 * `fieldsOnly`: the row's fields are kept unserialized, for the row writers (team spread);
 * `recomputable` (no plugin ran on it): a row writer can rebuild the row from the logged event and
 * the decision (resolved.ts).
 */
export function encodeEventRow(
  msg: LogMessage,
  teamId: number,
  d: DecodedEvent,
  person: PersonOutcome,
  fieldsOnly = false,
  recomputable = false,
): StepResult<EventRow> {
  const fields = eventFields(msg.seq, teamId, d, person)
  return ok({
    line: fieldsOnly ? '' : eventLine(fields),
    fields: fieldsOnly ? fields : undefined,
    recompute: fieldsOnly && recomputable ? { groupIndexes: person.groupIndexes } : undefined,
    timestampMs: d.timestampMs,
    subject: msg.subject,
    seq: msg.seq,
    offset: d.offset,
    event: d.event,
  })
}

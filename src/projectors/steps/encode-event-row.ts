import type { EventRow, LogMessage } from '../batch.ts'
import type { DecodedEvent } from '../decode.ts'
import { extractElementsChain } from '../elements.ts'
import { eventLine, type EventRow as EventFields } from '../rows.ts'
import type { PersonOutcome } from './apply-person-rules.ts'
import { ok, type StepResult } from './results.ts'

/**
 * Serializes an event's row (TabSeparated) with the person rules' outcome; keeps where it came from.
 * `fieldsOnly`: the row's fields are kept unserialized, for the row writers (team spread).
 */
export function encodeEventRow(
  msg: LogMessage,
  teamId: number,
  d: DecodedEvent,
  person: PersonOutcome,
  fieldsOnly = false,
): StepResult<EventRow> {
  const e = d.event
  const { chain, properties } = extractElementsChain(person.eventProperties)
  const sessionId = properties.$session_id
  const fields: EventFields = {
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
    seq: msg.seq,
    offset: d.offset,
  }
  return ok({
    line: fieldsOnly ? '' : eventLine(fields),
    fields: fieldsOnly ? fields : undefined,
    timestampMs: d.timestampMs,
    subject: msg.subject,
    seq: msg.seq,
    offset: d.offset,
    event: e,
  })
}

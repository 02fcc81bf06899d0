import { v5 as uuidv5 } from 'uuid'

// PostHog's namespace for person uuids; using the same one keeps person ids identical to PostHog's for the
// same (team, distinct_id), which matters for imports and for comparing results with a PostHog instance.
export const PERSON_UUIDV5_NAMESPACE = '932979b4-65c3-4424-8467-0b66ec27bc22'

/**
 * PostHog's deterministic person id of a distinct id: uuid v5 of `<team>:<id>` in UTF-8. Never
 * throws: a lone surrogate (JSON's `"\ud800"` escape, which capture accepts) is hashed as U+FFFD.
 */
export function uuidFromDistinctId(teamId: number, distinctId: string): string {
  // uuid's own text path (encodeURIComponent) threw URIError on a lone surrogate, and the event
  // went to the dead letters after capture had acknowledged it; Buffer.from encodes it as U+FFFD.
  return uuidv5(Buffer.from(`${teamId}:${distinctId}`, 'utf8'), PERSON_UUIDV5_NAMESPACE)
}

// PostHog stamps personless events with this created_at so they are told apart from real persons.
export const PERSONLESS_CREATED_AT_MS = 5000

import { z } from 'zod'

// The person change feed: after the projector has written a batch's person and person_distinct_id
// rows to ClickHouse, it publishes what changed on a core NATS subject (no stream: nothing is kept).
// Flag evaluation keeps projects' stored person properties in memory from it (src/flags/person-mirror.ts)
// instead of querying ClickHouse per request. It is a hint, not a log: a message is lost when a
// subscriber is disconnected or the projector dies between its INSERT and the publish, so readers
// also reload from ClickHouse periodically and after every reconnect. Every row carries the version
// ClickHouse replaces by, so a reader applies messages and loaded rows in any order and keeps the
// highest version, exactly as the ReplacingMergeTree does.

/** Core NATS subject of a project's person changes. */
export const personChangesSubject = (teamId: number) => `burrow.persons.changed.${teamId}`
/** The project of a person change subject; undefined for any other subject. */
export function teamOfSubject(subject: string): number | undefined {
  const prefix = personChangesSubject(0).slice(0, -1)
  if (!subject.startsWith(prefix)) return undefined
  const rest = subject.slice(prefix.length)
  return /^\d+$/.test(rest) ? Number(rest) : undefined
}

/** Every project's person changes. */
export const PERSON_CHANGES_ALL = 'burrow.persons.changed.>'

/** Persons per message, so a message stays well under NATS's max payload for ordinary properties. */
export const PERSONS_PER_MESSAGE = 500

export const PersonChangeSchema = z.object({
  id: z.string(),
  version: z.number(),
  deleted: z.boolean(),
  /** the properties as written (absent for a deleted person) */
  properties: z.record(z.string(), z.unknown()).optional(),
})
export type PersonChange = z.infer<typeof PersonChangeSchema>

export const DistinctIdChangeSchema = z.object({
  distinct_id: z.string(),
  person_id: z.string(),
  version: z.number(),
  deleted: z.boolean(),
})
export type DistinctIdChange = z.infer<typeof DistinctIdChangeSchema>

export const PersonChangesSchema = z.object({
  team_id: z.number().int(),
  persons: z.array(PersonChangeSchema),
  distinct_ids: z.array(DistinctIdChangeSchema),
})
export type PersonChanges = z.infer<typeof PersonChangesSchema>

/** One team's changes split into messages of at most PERSONS_PER_MESSAGE persons and distinct ids. */
export function splitChanges(c: PersonChanges, per = PERSONS_PER_MESSAGE): PersonChanges[] {
  const out: PersonChanges[] = []
  const n = Math.max(c.persons.length, c.distinct_ids.length)
  for (let at = 0; at < n; at += per) {
    out.push({
      team_id: c.team_id,
      persons: c.persons.slice(at, at + per),
      distinct_ids: c.distinct_ids.slice(at, at + per),
    })
  }
  return out
}

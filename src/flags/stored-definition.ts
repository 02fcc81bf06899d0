import { z } from 'zod'
import { flagDefinitionSchema } from './definition.ts'

// The document kept per flag in the flags bucket: the definition plus bookkeeping. Parsed on
// every read, since the bucket is an edge like any other input.
export const storedFlagSchema = flagDefinitionSchema.extend({
  team_id: z.number().int().positive(),
  version: z.number().int().min(1),
  created_at: z.string(),
  updated_at: z.string(),
  created_by: z.number().int().nullable(),
})

export type StoredFlag = z.output<typeof storedFlagSchema>

// Bucket layout. Flag keys match [a-zA-Z0-9_-]+, which is valid in KV keys as it is.
export const flagEntryKey = (teamId: number, id: number) => `flag.${teamId}.${id}`
export const keyIndexKey = (teamId: number, key: string) => `key.${teamId}.${key}`
export const idSequenceKey = (teamId: number) => `seq.${teamId}`

/** `flag.<team>.<id>` → team and id, or null for other keys. */
export function parseFlagEntryKey(key: string): { teamId: number; id: number } | null {
  const m = /^flag\.(\d+)\.(\d+)$/.exec(key)
  return m ? { teamId: Number(m[1]), id: Number(m[2]) } : null
}

import { z } from 'zod'
import type { User } from './documents.ts'
import type { AccountStore } from './store.ts'

/** PostHog's basic user object; `hedgehog_config` is the spec's `<mascot>_config`. */
export const UserBasic = z.object({
  id: z.number().int(),
  uuid: z.string(),
  distinct_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  is_email_verified: z.boolean().nullable(),
  hedgehog_config: z.record(z.string(), z.unknown()).nullable(),
  role_at_organization: z.string().nullable(),
})
export type UserBasic = z.infer<typeof UserBasic>

// Burrow does not verify e-mails, keep hedgehog settings or ask for a role: the values PostHog
// sends for a user who never set them.
export const userBasic = (u: User): UserBasic => ({
  id: u.id,
  uuid: u.uuid,
  distinct_id: u.distinct_id,
  first_name: u.first_name,
  last_name: u.last_name,
  email: u.email,
  is_email_verified: false,
  hedgehog_config: null,
  role_at_organization: null,
})

/** Resolves user ids once per request. */
export function userResolver(store: AccountStore): (id: number | null) => Promise<UserBasic | null> {
  const cache = new Map<number, Promise<UserBasic | null>>()
  return (id) => {
    if (id === null) return Promise.resolve(null)
    let p = cache.get(id)
    if (!p) {
      p = store.getUser(id).then((u) => (u ? userBasic(u) : null))
      cache.set(id, p)
    }
    return p
  }
}

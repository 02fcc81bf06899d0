import { z } from 'zod'

// Stored documents of the config bucket. Parsed on every read: the bucket is an edge too.

export const OrganizationDoc = z.object({
  id: z.string().uuid(),
  name: z.string(),
  created_at: z.string(),
})

export const ProjectDoc = z.object({
  id: z.number().int().positive(),
  uuid: z.string().uuid(),
  organization_id: z.string().uuid(),
  name: z.string(),
  api_token: z.string(),
  timezone: z.string().default('UTC'),
  created_at: z.string(),
})
export type Project = z.infer<typeof ProjectDoc>

export const UserDoc = z.object({
  id: z.number().int().positive(),
  uuid: z.string().uuid(),
  distinct_id: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  organization_id: z.string().uuid(),
  created_at: z.string(),
})
export type User = z.infer<typeof UserDoc>

export const PersonalKeyDoc = z.object({
  id: z.string(),
  label: z.string(),
  user_id: z.number().int(),
  /** `*` or `<resource>:read|write` */
  scopes: z.array(z.string()).min(1),
  /** Projects the key may reach; null means every project of the user's organization. */
  projects: z.array(z.number().int()).nullable(),
  mask: z.string(),
  created_at: z.string(),
})
export type PersonalKey = z.infer<typeof PersonalKeyDoc>

export const SCOPE_PATTERN = /^(\*|[a-z_]+:(read|write))$/

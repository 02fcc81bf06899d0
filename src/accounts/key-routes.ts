import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { PersonalKey } from './documents.ts'
import type { Principal } from '../http/auth.ts'
import { NotFound } from '../http/errors.ts'
import { type ApiContext, organizationRoute } from '../http/routes.ts'

// Personal API keys of the calling user, in the shape of PostHog's /api/personal_api_keys/
// (posthog/api/personal_api_key.py): list (a plain array, newest first), retrieve, and DELETE to
// revoke. Keys are created with `burrow keys create`; the raw key is shown once and never stored,
// so `value` is always null here. `@current` names the key making the request.

const READ = 'personal_api_key:read'
const WRITE = 'personal_api_key:write'
const TAGS = ['personal_api_keys']

const KeyParams = z.object({ id: z.string().min(1).max(64) })

const KeyBody = z.object({
  id: z.string(),
  label: z.string(),
  value: z.null(),
  mask_value: z.string(),
  created_at: z.string(),
  last_used_at: z.null(),
  user_id: z.number().int(),
  scopes: z.array(z.string()),
  scoped_teams: z.array(z.number().int()).nullable(),
  scoped_organizations: z.null(),
  last_rolled_at: z.null(),
})

/** A key document as PostHog's serializer shows it; Burrow does not track use or rolling. */
export function keyBody(k: PersonalKey): z.infer<typeof KeyBody> {
  return {
    id: k.id,
    label: k.label,
    value: null,
    mask_value: k.mask,
    created_at: k.created_at,
    last_used_at: null,
    user_id: k.user_id,
    scopes: k.scopes,
    scoped_teams: k.projects,
    scoped_organizations: null,
    last_rolled_at: null,
  }
}

export function registerKeyRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const store = ctx.rt.accounts

  /** The caller's own key by id (or `@current`); another user's key does not exist for it. */
  async function ownKey(principal: Principal, id: string): Promise<PersonalKey> {
    if (id === '@current') return principal.key
    const key = (await store.listPersonalKeys()).find((k) => k.id === id)
    if (!key || key.user_id !== principal.user.id) throw new NotFound('Personal API key not found.')
    return key
  }

  organizationRoute(app, ctx, {
    method: 'GET',
    path: '/api/personal_api_keys/',
    scope: READ,
    tags: TAGS,
    summary: "The calling user's personal API keys, newest first",
    response: { 200: z.array(KeyBody) },
    handler: async (_req, _reply, { principal }) =>
      (await store.listPersonalKeys())
        .filter((k) => k.user_id === principal.user.id)
        .reverse()
        .map(keyBody),
  })

  organizationRoute(app, ctx, {
    method: 'GET',
    path: '/api/personal_api_keys/:id/',
    scope: READ,
    params: KeyParams,
    tags: TAGS,
    summary: 'Retrieve one of your keys (`@current`: the key of this request)',
    response: { 200: KeyBody },
    handler: async (req, _reply, { principal }) => keyBody(await ownKey(principal, req.params.id)),
  })

  organizationRoute(app, ctx, {
    method: 'DELETE',
    path: '/api/personal_api_keys/:id/',
    scope: WRITE,
    params: KeyParams,
    tags: TAGS,
    summary: 'Revoke one of your keys (204); requests with it are refused from then on',
    handler: async (req, reply, { principal }) => {
      const key = await ownKey(principal, req.params.id)
      if (!(await store.revokePersonalKey(key.id))) throw new NotFound('Personal API key not found.')
      req.log.info({ key_id: key.id }, 'personal API key revoked')
      return reply.code(204).send()
    },
  })
}

import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import { contentSecurityPolicy } from '../console/static.ts'
import { NotFound, PermissionDenied } from '../http/errors.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { dashboardBody, insightBody, tilesByInsight } from './serialize.ts'
import type { DashboardsService } from './service.ts'
import { newAccessToken, type SharedKind, type Sharing } from './store.ts'

// Sharing (posthog/api/sharing.py): `/dashboards/{id}/sharing/` and `/insights/{id}/sharing/` read
// and change a resource's public access token; `/shared/<token>` serves the shared resource
// read-only to anyone with the link, without a key, as PostHog's does (the page, and
// `/shared/<token>.json`, its exported data). Every shared request reads the configuration from the
// bucket, so a token disabled or rotated anywhere opens nothing from the next request on. A token
// opens only its own dashboard (or insight): it is no credential anywhere else, takes no
// parameters (no filters override, no refresh beyond the cache's minute) and shows no user details.

const READ = 'sharing_configuration:read'
const WRITE = 'sharing_configuration:write'
const TAGS = ['sharing']

const Body = z.object({
  enabled: z.boolean().optional(),
  settings: z.record(z.string(), z.unknown()).nullable().optional(),
  password_required: z.boolean().optional(),
})

const IdParams = z.object({ id: z.coerce.number().int() })

/** PostHog's SharingConfigurationSerializer. A resource never shared has an unsaved one. */
const sharingBody = (s: Sharing | undefined) => ({
  created_at: s?.created_at ?? null,
  enabled: s?.enabled ?? false,
  access_token: s?.access_token ?? newAccessToken(),
  settings: s?.settings ?? null,
  password_required: false,
  share_passwords: [],
})

const HTML = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '../console/web/index.html'), 'utf8')
  .replace('/console/app.js', '/console/shared.js')
  .replace('<title>Burrow console</title>', '<title>Shared dashboard · Burrow</title>')
const CSP = contentSecurityPolicy(HTML)

export function registerSharingRoutes(app: FastifyInstance, ctx: ApiContext, svc: DashboardsService): void {
  const exists = async (team: number, kind: SharedKind, id: number) => {
    const doc = kind === 'dashboard' ? await svc.store.dashboard(team, id) : await svc.store.insight(team, id)
    if (!doc || doc.deleted)
      throw new NotFound(`${kind === 'dashboard' ? 'Dashboard' : 'Insight'} not found.`)
  }

  for (const [kind, prefix] of [
    ['dashboard', '/dashboards'],
    ['insight', '/insights'],
  ] as const) {
    projectRoute(app, ctx, {
      method: 'GET',
      path: `${prefix}/:id/sharing/`,
      scope: READ,
      tags: TAGS,
      summary: `The sharing configuration of a ${kind}`,
      params: IdParams,
      handler: async (req, _reply, { project }) => {
        await exists(project.id, kind, req.params.id)
        return sharingBody(await svc.store.sharing(project.id, kind, req.params.id))
      },
    })

    projectRoute(app, ctx, {
      method: 'PATCH',
      path: `${prefix}/:id/sharing/`,
      scope: WRITE,
      tags: TAGS,
      summary: `Turn public sharing of a ${kind} on or off (enabled), or change its settings`,
      params: IdParams,
      body: Body,
      handler: async (req, _reply, { project }) => {
        await exists(project.id, kind, req.params.id)
        if (req.body.password_required) {
          throw new PermissionDenied('Sharing with password requires the Advanced Permissions feature')
        }
        const { enabled, settings } = req.body
        return sharingBody(await svc.store.share(project.id, kind, req.params.id, { enabled, settings }))
      },
    })

    projectRoute(app, ctx, {
      method: 'POST',
      path: `${prefix}/:id/sharing/refresh/`,
      scope: WRITE,
      tags: TAGS,
      summary: `A new access token for the ${kind}; the old link stops working at once`,
      params: IdParams,
      handler: async (req, _reply, { project }) => {
        await exists(project.id, kind, req.params.id)
        return sharingBody(await svc.store.share(project.id, kind, req.params.id, { rotate: true }))
      },
    })
  }

  /** The exported data of a shared resource (PostHog's exported_data), or undefined. */
  async function exported(req: FastifyRequest, token: string) {
    const found = await svc.store.sharedBy(token)
    if (!found) return undefined
    const { target } = found
    const project = await ctx.rt.accounts.getProject(target.team_id)
    if (!project) return undefined
    // anonymous viewers share the token's query slots; results come from the cache when fresh
    const serve = svc.serveContext(req, project, `shared:${token}`, 'blocking', true)
    const { insights, dashboards } = await svc.team(target.team_id)
    const tiles = tilesByInsight(dashboards)
    if (target.kind === 'dashboard') {
      const d = dashboards.find((x) => x.id === target.id)
      if (!d || d.deleted) return undefined
      return {
        type: 'scene',
        accessToken: token,
        dashboard: await dashboardBody(d, insights, tiles, true, serve),
        themes: [],
      }
    }
    const i = insights.get(target.id)
    if (!i || i.deleted) return undefined
    return {
      type: 'scene',
      accessToken: token,
      insight: await insightBody(i, tiles.get(i.id) ?? [], serve),
      themes: [],
    }
  }

  const notShared = (reply: FastifyReply, json: boolean) =>
    json
      ? reply.code(404).send({ type: 'invalid_request', code: 'not_found', detail: 'Not found.', attr: null })
      : reply
          .code(404)
          .type('text/html; charset=utf-8')
          .header('content-security-policy', "default-src 'none'")
          .send('<!doctype html><title>Not found</title><h1>This link is not shared (any more).</h1>')

  for (const base of ['/shared', '/embedded']) {
    app.get(`${base}/:token`, { schema: { hide: true } }, async (req, reply) => {
      const raw = (req.params as { token: string }).token
      const json = raw.endsWith('.json')
      const token = raw.split('.')[0] ?? ''
      // the links are for people, and the data behind them may change any moment: never cached
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
      if (!json) {
        // the page itself is the same for every token: it asks for `<its URL>.json`
        if (!(await svc.store.sharedBy(token))) return notShared(reply, false)
        return reply.type('text/html; charset=utf-8').header('content-security-policy', CSP).send(HTML)
      }
      const data = await exported(req, token)
      if (!data) return notShared(reply, true)
      return data
    })
  }
}

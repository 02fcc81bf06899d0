import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Project } from './documents.ts'
import { canSee } from '../http/auth.ts'
import { type ApiContext, organizationRoute, projectRoute } from '../http/routes.ts'
import { PageQuery, paginate } from '../http/paging.ts'

const CreateProject = z.object({
  name: z.string().trim().min(1).max(200),
  // An unknown zone would only fail later, in every query of the project.
  timezone: z
    .string()
    .min(1)
    .max(64)
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en', { timeZone: tz })
        return true
      } catch {
        return false
      }
    }, 'is not a known time zone')
    .optional(),
})

export function projectBody(p: Project) {
  return {
    id: p.id,
    uuid: p.uuid,
    organization: p.organization_id,
    name: p.name,
    api_token: p.api_token,
    timezone: p.timezone,
    created_at: p.created_at,
    ...p.settings,
  }
}

export function registerProjectRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const store = ctx.rt.accounts
  organizationRoute(app, ctx, {
    method: 'GET',
    path: '/api/projects/',
    scope: 'project:read',
    query: PageQuery,
    summary: "The organization's projects",
    handler: async (req, _reply, { principal }) => {
      const visible = (await store.listProjects()).filter((p) => canSee(principal, p)).map(projectBody)
      return paginate(req, req.query, visible)
    },
  })

  organizationRoute(app, ctx, {
    method: 'POST',
    path: '/api/projects/',
    scope: 'project:write',
    body: CreateProject,
    summary: 'Create a project in the organization',
    handler: async (req, reply, { organizationId }) => {
      const p = await store.createProject({ ...req.body, organization_id: organizationId })
      return reply.code(201).send(projectBody(p))
    },
  })

  // A project-based endpoint: a key limited to this project may read it.
  projectRoute(app, ctx, {
    method: 'GET',
    path: '/',
    scope: 'project:read',
    summary: 'Retrieve a project',
    handler: async (_req, _reply, { project }) => projectBody(project),
  })
}

import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import type { Project } from './documents.ts'
import { authenticate, canSee, projectFor, requireScope } from '../http/auth.ts'
import type { ApiContext } from '../http/routes.ts'
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

const ProjectId = z.object({ project_id: z.string() })

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
  app.get('/api/projects/', { schema: { querystring: PageQuery } }, async (req) => {
    const principal = await authenticate(req, store)
    ctx.limiter.check(principal.key.id)
    requireScope(principal, 'project:read')
    const visible = (await store.listProjects()).filter((p) => canSee(principal, p)).map(projectBody)
    return paginate(req, req.query as z.infer<typeof PageQuery>, visible)
  })

  app.post('/api/projects/', { schema: { body: CreateProject } }, async (req, reply) => {
    const principal = await authenticate(req, store)
    ctx.limiter.check(principal.key.id)
    requireScope(principal, 'project:write')
    const body = req.body as z.infer<typeof CreateProject>
    const p = await store.createProject({ ...body, organization_id: principal.user.organization_id })
    return reply.code(201).send(projectBody(p))
  })

  app.get('/api/projects/:project_id/', { schema: { params: ProjectId } }, async (req) => {
    const principal = await authenticate(req, store)
    ctx.limiter.check(principal.key.id)
    requireScope(principal, 'project:read')
    return projectBody(
      await projectFor(principal, (req.params as z.infer<typeof ProjectId>).project_id, store),
    )
  })
}

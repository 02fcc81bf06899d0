import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { projectBody } from '../accounts/project-routes.ts'
import { NotFound } from '../http/errors.ts'
import { type ApiContext, authorize, projectRoute } from '../http/routes.ts'
import { applySettingsPatch, SettingsPatch } from './settings-body.ts'

// The project's SDK settings (autocapture, session recording, heatmaps, surveys, …) are fields of
// the project resource, as in PostHog:
//   GET   /api/environments/{id}/                        the project (project:read)
//   PATCH /api/projects/{id}/, /api/environments/{id}/   change fields (project:write)
// (GET /api/projects/{id}/ is the accounts module's route and answers the same body.)

const ProjectParams = z.object({ project_id: z.string() })
const TAGS = ['projects']

export function registerSettingsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get(
    '/api/environments/:project_id/',
    { schema: { tags: TAGS, summary: 'Retrieve a project with its settings', params: ProjectParams } },
    async (req) => projectBody((await authorize(ctx, req, 'project:read')).project),
  )

  projectRoute(
    app,
    'patch',
    '/',
    {
      schema: {
        tags: TAGS,
        summary: "Change a project's name or SDK settings; the remote config follows within moments",
        params: ProjectParams,
        body: SettingsPatch,
      },
    },
    async (req) => {
      const { project } = await authorize(ctx, req, 'project:write')
      const patch = req.body as SettingsPatch
      const next = await ctx.rt.accounts.updateProject(project.id, (cur) => ({
        ...cur,
        name: patch.name ?? cur.name,
        settings: applySettingsPatch(cur.settings, patch),
      }))
      if (!next) throw new NotFound('Project not found.')
      return projectBody(next)
    },
  )
}

import type { FastifyInstance } from 'fastify'
import { projectBody } from '../accounts/project-routes.ts'
import { NotFound } from '../http/errors.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { applySettingsPatch, SettingsPatch } from './settings-body.ts'

// The project's SDK settings (autocapture, session recording, heatmaps, surveys, …) are fields of
// the project resource, as in PostHog:
//   PATCH /api/projects/{id}/, /api/environments/{id}/   change fields (project:write)
// (GET of either is the accounts module's route and answers the same body, settings included.)

const TAGS = ['projects']

export function registerSettingsRoutes(app: FastifyInstance, ctx: ApiContext): void {
  projectRoute(app, ctx, {
    method: 'PATCH',
    path: '/',
    scope: 'project:write',
    tags: TAGS,
    summary: "Change a project's name or SDK settings; the remote config follows within moments",
    body: SettingsPatch,
    handler: async (req, _reply, { project }) => {
      const patch = req.body
      const next = await ctx.rt.accounts.updateProject(project.id, (cur) => ({
        ...cur,
        name: patch.name ?? cur.name,
        settings: applySettingsPatch(cur.settings, patch),
      }))
      if (!next) throw new NotFound('Project not found.')
      return projectBody(next)
    },
  })
}

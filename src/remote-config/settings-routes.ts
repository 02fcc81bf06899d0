import type { FastifyInstance } from 'fastify'
import { projectBody } from '../accounts/project-routes.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { checkRegex } from '../patterns/regex.ts'
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
      await checkPathCleaning(patch.path_cleaning_filters, project.id)
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

// A cleaning rule's regex runs in ClickHouse (RE2) over every path item of a query: held to the
// bounds of every pattern a project writes (docs/security.md), and refused by name when RE2 cannot
// compile it, rather than failing each query later.
async function checkPathCleaning(rules: SettingsPatch['path_cleaning_filters'], projectId: number) {
  for (const [i, rule] of (rules ?? []).entries()) {
    if (!rule.regex) continue
    const problem = await checkRegex(rule.regex, projectId)
    if (problem) {
      const attr = `path_cleaning_filters.${i}.regex`
      throw new ValidationError(`${attr}: ${problem}`, attr)
    }
  }
}

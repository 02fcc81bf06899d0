// PathsQuery on POST /query/ (PostHog's PathsQueryRunner): the most travelled edges between the
// steps of persons' paths, as [{source, target, value, average_conversion_time}] (docs/paths.md).
// The actors of an edge or a drop-off go through ActorsQuery (insights/actors/insight-actors.ts).
import { pathCleaningRules } from '../accounts/documents.ts'
import { registerQueryKind } from '../queries/kinds.ts'
import { formatPaths } from './results.ts'
import { PathsQuery, pathsWithTestAccounts } from './schema.ts'
import { edgesSQL, pathsStepsSQL } from './sql.ts'

registerQueryKind('PathsQuery', {
  async compile(raw, project, facts) {
    const q = pathsWithTestAccounts(PathsQuery.parse(raw), project)
    const { plan, sql, hogql } = await pathsStepsSQL(q, {
      teamId: project.id,
      timezone: project.timezone,
      facts,
      cleaning: pathCleaningRules(project.settings),
    })
    return {
      hogql,
      clickhouse: edgesSQL(plan, sql),
      columns: ['source', 'target', 'value', 'average_conversion_time'],
      types: [],
      limit: plan.edgeLimit,
    }
  },
  shape(rows) {
    return formatPaths(rows)
  },
})

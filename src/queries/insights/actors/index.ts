// ActorsQuery over an insight's data point (PostHog's InsightActorsQuery source). Results are rows of
// [person, id, created_at], person in the person endpoints' shape, newest persons first.
import { z } from 'zod'
import { registerQueryKind } from '../../kinds.ts'
import { compile } from './hogql.ts'
import { actorIdsHogQL, InsightActorsQuery } from './insight-actors.ts'
import { personFromRow, personsSelect } from './persons.ts'

export const ActorsQuery = z
  .object({
    kind: z.literal('ActorsQuery'),
    source: InsightActorsQuery,
    limit: z.number().int().min(1).max(10_000).nullable().optional(),
    offset: z.number().int().min(0).nullable().optional(),
  })
  .passthrough()

export const DEFAULT_ACTORS_LIMIT = 100

/** HogQL of the persons behind the point, newest first, one page. */
export function actorsPageHogQL(source: InsightActorsQuery, tz: string, limit: number, offset: number): string {
  return personsSelect(
    `p.id IN (${actorIdsHogQL(source, tz)})`,
    `ORDER BY p.created_at DESC, p.id DESC LIMIT ${limit} OFFSET ${offset}`,
  )
}

registerQueryKind('ActorsQuery', {
  async compile(raw, project) {
    const q = ActorsQuery.parse(raw)
    const limit = q.limit ?? DEFAULT_ACTORS_LIMIT
    // one row more than asked tells hasMore; the shape drops it
    const hogql = actorsPageHogQL(q.source, project.timezone, limit + 1, q.offset ?? 0)
    const compiled = await compile(hogql, { teamId: project.id, timezone: project.timezone, limit: limit + 1 })
    return { ...compiled, columns: ['person', 'id', 'created_at'], types: ['Object', 'UUID', 'DateTime'], limit }
  },
  shape(rows, _c, raw, project) {
    const q = ActorsQuery.parse(raw)
    return rows.slice(0, q.limit ?? DEFAULT_ACTORS_LIMIT).map((r) => {
      const p = personFromRow(r, project.timezone)
      return [p, p.id, p.created_at]
    })
  },
})

// ActorsQuery over an insight's data point (PostHog's InsightActorsQuery source). Results are rows of
// [person, id, created_at], person in the person endpoints' shape, newest persons first.
import { z } from 'zod'
import { registerQueryKind } from '../../kinds.ts'
import { actorIdsSQL, InsightActorsQuery } from './insight-actors.ts'
import { personFromRow, personsOfIdsSQL } from './persons.ts'

export const ActorsQuery = z
  .object({
    kind: z.literal('ActorsQuery'),
    source: InsightActorsQuery,
    limit: z.number().int().min(1).max(10_000).nullable().optional(),
    offset: z.number().int().min(0).nullable().optional(),
  })
  .passthrough()

export const DEFAULT_ACTORS_LIMIT = 100

registerQueryKind('ActorsQuery', {
  async compile(raw, project) {
    const q = ActorsQuery.parse(raw)
    const limit = q.limit ?? DEFAULT_ACTORS_LIMIT
    // one row more than asked tells hasMore; the shape drops it
    const opts = { teamId: project.id, timezone: project.timezone }
    const ids = await actorIdsSQL(q.source, project)
    const tail = `ORDER BY p.created_at DESC, p.id DESC LIMIT ${limit + 1} OFFSET ${q.offset ?? 0}`
    const sql = await personsOfIdsSQL(ids, { ...opts, limit: limit + 1 }, tail)
    const paging = { limit, offset: q.offset ?? 0 }
    return { hogql: '', clickhouse: sql, columns: ['person', 'id', 'created_at'], types: [], paging }
  },
  shape(rows, _c, raw, project) {
    const q = ActorsQuery.parse(raw)
    return rows.slice(0, q.limit ?? DEFAULT_ACTORS_LIMIT).map((r) => {
      const p = personFromRow(r, project.timezone)
      return [p, p.id, p.created_at]
    })
  },
})

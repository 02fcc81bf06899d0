import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { NotFound, ValidationError } from '../http/errors.ts'
import { runHogQL, str } from '../queries/insights/actors/hogql.ts'
import { queryPersons } from '../queries/insights/actors/persons.ts'
import { PropertiesSchema, propertiesCondition } from '../queries/insights/common/index.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { PageQuery, envelope } from '../http/paging.ts'
import { deletePerson, EventDeletes } from './delete.ts'
import { withProjectCatalog } from '../queries/catalog.ts'
import { registerPersonExportRoutes } from './exports.ts'

// Person endpoints (spec "Person analytics"; PostHog's /persons/ list, retrieve, delete, values).
// Persons are created and changed only through capture; these read and delete them.

const READ = 'person:read'
const WRITE = 'person:write'

const PersonParams = z.object({ id: z.string() })

const ListQuery = PageQuery.extend({
  search: z
    .string()
    .optional()
    .describe('substring of a distinct id or of the properties, or the exact uuid'),
  distinct_id: z.string().optional(),
  email: z.string().optional().describe('exact value of the `email` person property'),
  key_identifier: z.string().optional().describe('email or distinct id'),
  uuid: z.string().optional().describe('comma-separated person uuids'),
  properties: z.string().optional().describe('JSON list of person property filters'),
  cohort: z.coerce.number().int().positive().optional().describe('members of this cohort only'),
})
type ListQuery = z.infer<typeof ListQuery>

/** The filters of a person list that other lists take too (search, properties; cohort members use them). */
export type PersonListFilters = Partial<Pick<ListQuery, 'search' | 'properties'>>

const ValuesQuery = z.object({
  key: z.string().min(1),
  value: z.string().optional().describe('case-insensitive substring the values must contain'),
})

const VALUES_LIMIT = 100
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const idsWhere = (cond: string) => `p.id IN (SELECT person_id FROM person_distinct_ids WHERE ${cond})`

/** The HogQL condition on persons (`p`) of a person list's filters; '1' when there are none. */
export function listWhere(q: Partial<ListQuery>): string {
  const parts: string[] = []
  if (q.distinct_id !== undefined) parts.push(idsWhere(`distinct_id = ${str(q.distinct_id)}`))
  if (q.cohort !== undefined) parts.push(`p.id IN COHORT ${q.cohort}`)
  if (q.email !== undefined) parts.push(`p.properties['email'] = ${str(q.email)}`)
  if (q.key_identifier !== undefined) {
    const v = str(q.key_identifier)
    parts.push(`(ifNull(p.properties['email'] = ${v}, 0) OR ${idsWhere(`distinct_id = ${v}`)})`)
  }
  if (q.uuid !== undefined) {
    const ids = q.uuid
      .split(',')
      .map((s) => s.trim())
      .filter((s) => UUID.test(s))
    parts.push(ids.length ? `p.id IN (${ids.map((i) => `toUUID(${str(i)})`).join(', ')})` : '0')
  }
  if (q.search !== undefined && q.search.trim() !== '') {
    const s = q.search.trim()
    const like = str(`%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
    const alternatives = [`p.properties ILIKE ${like}`, idsWhere(`distinct_id ILIKE ${like}`)]
    if (UUID.test(s)) alternatives.push(`p.id = toUUID(${str(s.toLowerCase())})`)
    parts.push(`(${alternatives.join(' OR ')})`)
  }
  if (q.properties !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(q.properties)
    } catch {
      throw new ValidationError('properties must be JSON.', 'properties')
    }
    // a flat list means person properties unless a filter says otherwise
    const list = Array.isArray(parsed) ? parsed.map((f) => ({ type: 'person', ...(f as object) })) : parsed
    const filters = PropertiesSchema.safeParse(list)
    if (!filters.success)
      throw new ValidationError('properties must be a list of property filters.', 'properties')
    parts.push(propertiesCondition(filters.data, { personsAlias: 'p' }) ?? '1')
  }
  return parts.length ? parts.map((x) => `(${x})`).join(' AND ') : '1'
}

/** Stored text back to what PostHog shows: JSON scalars parsed, booleans as 'true'/'false'. */
function valueName(v: string): unknown {
  try {
    const parsed: unknown = JSON.parse(v)
    if (typeof parsed === 'boolean') return parsed ? 'true' : 'false'
    if (typeof parsed === 'number') return parsed
    if (parsed !== null && typeof parsed === 'object') return v
  } catch {}
  return v
}

export function registerPersonRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // events of deleted persons: one mutation per interval for every project (delete.ts)
  const eventDeletes = new EventDeletes(ctx.rt.tables, (err) =>
    ctx.rt.log.warn({ err }, 'deleting the events of deleted persons failed'),
  )
  app.addHook('onClose', () => eventDeletes.stop())
  // user-written filters: the client with the per-query memory and time limits
  const ch = ctx.rt.queryCh

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/persons/',
    scope: READ,
    query: ListQuery,
    handler: async (req, _reply, { project }) =>
      withProjectCatalog(ctx.rt, project.id, async () => {
        const q = req.query
        const where = listWhere(q)
        const [countRows, results] = await Promise.all([
          runHogQL(ch, `SELECT count() FROM persons AS p WHERE ${where}`, {
            teamId: project.id,
            timezone: 'UTC',
          }),
          queryPersons(
            ch,
            project.id,
            where,
            `ORDER BY p.created_at DESC, p.id DESC LIMIT ${q.limit} OFFSET ${q.offset}`,
            q.limit,
          ),
        ])
        return envelope(req, q, Number(countRows[0]?.[0] ?? 0), results)
      }),
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/persons/values/',
    scope: READ,
    query: ValuesQuery,
    handler: async (req, _reply, { project }) => {
      const q = req.query
      const v = `properties[${str(q.key)}]`
      const filter = q.value ? ` AND ${v} ILIKE ${str(`%${q.value}%`)}` : ''
      const rows = await runHogQL(
        ch,
        `SELECT ${v} AS value, count() AS c FROM persons WHERE ${v} IS NOT NULL${filter}
         GROUP BY value ORDER BY c DESC, value LIMIT ${VALUES_LIMIT}`,
        { teamId: project.id, timezone: 'UTC' },
      )
      return rows.map(([value, c]) => ({ name: valueName(String(value)), count: Number(c) }))
    },
  })

  registerPersonExportRoutes(app, ctx)

  projectRoute(app, ctx, {
    method: 'GET',
    path: '/persons/:id/',
    scope: READ,
    params: PersonParams,
    handler: async (req, _reply, { project }) => {
      const { id } = req.params
      if (!UUID.test(id)) throw new NotFound('Person not found.')
      const [person] = await queryPersons(
        ch,
        project.id,
        `p.id = toUUID(${str(id.toLowerCase())})`,
        'LIMIT 1',
      )
      if (!person) throw new NotFound('Person not found.')
      return person
    },
  })

  const DeleteQuery = z.object({
    delete_events: z
      .enum(['true', 'false', '1', '0'])
      .optional()
      .transform((v) => v === 'true' || v === '1'),
  })
  projectRoute(app, ctx, {
    method: 'DELETE',
    path: '/persons/:id/',
    scope: WRITE,
    params: PersonParams,
    query: DeleteQuery,
    handler: async (req, reply, { project }) => {
      const { id } = req.params
      if (!UUID.test(id)) throw new NotFound('Person not found.')
      const { delete_events } = req.query
      const ok = await deletePerson(ch, ctx.rt.tables, project.id, id.toLowerCase(), {
        deleteEvents: delete_events,
        eventDeletes,
      })
      if (!ok) throw new NotFound('Person not found.')
      return reply.code(202).send()
    },
  })
}

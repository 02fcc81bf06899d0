import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { userResolver } from '../accounts/user-body.ts'
import { requireScope } from '../http/auth.ts'
import { NotFound, ValidationError } from '../http/errors.ts'
import { acceptMultipart } from '../http/multipart.ts'
import { PageQuery, paginate } from '../http/paging.ts'
import { type ApiContext, projectRoute } from '../http/routes.ts'
import { csvLine, CSV_COLUMNS, personCsvLine } from '../persons/csv.ts'
import { listWhere } from '../persons/routes.ts'
import { catalogsFor } from '../queries/catalog.ts'
import { withCatalog } from '../queries/compile-cache.ts'
import { queryRunnerOf } from '../queries/index.ts'
import { runHogQL, str } from '../queries/insights/actors/hogql.ts'
import { queryPersons } from '../queries/insights/actors/persons.ts'
import { CohortWrite, cohortBody, personIds } from './body.ts'
import { cohortDocsFor } from './cache.ts'
import { CohortCalculator } from './calculator.ts'
import type { Cohort } from './document.ts'
import { CohortService } from './service.ts'
import { StaticMembers } from './static.ts'
import { CohortStore } from './store.ts'

// Cohorts (PostHog's /api/projects/:id/cohorts/, posthog/api/cohort.py):
//   GET/POST  …/cohorts/                    list (paged, newest first) / create (201; JSON, or a
//                                            multipart form with a `csv` file for a static cohort)
//   GET/PATCH …/cohorts/:id/                retrieve / update (soft delete: PATCH {"deleted": true})
//   DELETE    …/cohorts/:id/                405: cohorts are only soft deleted
//   GET       …/cohorts/:id/persons/        members (paged; ?format=csv for all of them)
//   PATCH     …/cohorts/:id/add_persons_to_static_cohort/, remove_person_from_static_cohort/
//   GET       …/cohorts/:id/duplicate_as_static_cohort/
// Calculations run in the background (calculator.ts); responses show is_calculating, count,
// last_calculation and errors_calculating as they are.

const READ = 'cohort:read'
const WRITE = 'cohort:write'
const TAGS = ['cohorts']
/** The largest CSV upload (PostHog does not say; distinct ids of a million persons fit). */
const MAX_CSV_BYTES = 50 * 1024 * 1024
const CSV_PAGE = 5000
const CSV_LIMIT = 100_000

const Params = z.object({ id: z.string() })
const ListQuery = PageQuery.extend({
  type: z.enum(['static', 'dynamic']).optional(),
  search: z.string().optional(),
  created_by_id: z.coerce.number().int().optional(),
})
const PersonsQuery = PageQuery.extend({
  search: z.string().optional(),
  properties: z.string().optional(),
  format: z.enum(['json', 'csv']).optional(),
})
const AddPersons = z.object({ person_ids: z.array(z.unknown()) })
const RemovePerson = z.object({ person_id: z.unknown() })

function cohortId(raw: string): number {
  if (!/^\d{1,12}$/.test(raw)) throw new NotFound()
  return Number(raw)
}

export async function registerCohortRoutes(app: FastifyInstance, ctx: ApiContext): Promise<void> {
  const rt = ctx.rt
  const runner = queryRunnerOf(rt)
  if (!runner) throw new Error('cohorts need the query runner: register the queries first')
  const [store, docs, catalogs] = await Promise.all([
    CohortStore.open(rt.nc),
    cohortDocsFor(rt.nc, rt.log),
    catalogsFor(rt.nc, rt.log),
  ])
  const log = rt.log.child({ component: 'cohorts' })
  const calculator = new CohortCalculator(rt, store, docs, catalogs, runner, log, {
    recalculateMs: rt.config.COHORT_RECALCULATE_MINUTES * 60_000,
  })
  const statics = new StaticMembers(rt, store, runner, calculator, log)
  const service = new CohortService(rt, store, docs, calculator, statics, catalogs, log)
  calculator.start()
  app.addHook('onClose', () => calculator.stop())

  const users = userResolver(rt.accounts)
  const body = async (c: Cohort) => cohortBody(c, await users(c.created_by))
  const live = async (project: Project, raw: string) => {
    const c = await store.get(project.id, cohortId(raw))
    if (c.deleted) throw new NotFound()
    return c
  }
  const paths = (p: string) => [p, `${p}/`]

  await app.register(async (scope) => {
    acceptMultipart(scope, { maxFileBytes: MAX_CSV_BYTES })

    projectRoute(scope, ctx, {
      method: 'GET',
      path: paths('/cohorts'),
      scope: READ,
      query: ListQuery,
      tags: TAGS,
      handler: async (req, _reply, { project }) => {
        const q = req.query
        const search = q.search?.toLowerCase()
        const all = (await store.list(project.id))
          .filter((c) => !c.deleted)
          .filter((c) => q.type === undefined || c.is_static === (q.type === 'static'))
          .filter((c) => q.created_by_id === undefined || c.created_by === q.created_by_id)
          .filter((c) => !search || (c.name ?? '').toLowerCase().includes(search))
          .reverse()
        const page = paginate(req, q, all)
        return { ...page, results: await Promise.all(page.results.map(body)) }
      },
    })

    projectRoute(scope, ctx, {
      method: 'POST',
      path: paths('/cohorts'),
      scope: WRITE,
      body: CohortWrite,
      bodyLimit: MAX_CSV_BYTES,
      tags: TAGS,
      handler: async (req, reply, { project, principal }) =>
        reply.code(201).send(await body(await service.create(project, req.body, principal.user.id))),
    })

    projectRoute(scope, ctx, {
      method: 'GET',
      path: paths('/cohorts/:id'),
      scope: READ,
      params: Params,
      tags: TAGS,
      handler: async (req, _reply, { project }) => body(await live(project, req.params.id)),
    })

    for (const method of ['PATCH', 'PUT'] as const) {
      projectRoute(scope, ctx, {
        method,
        path: paths('/cohorts/:id'),
        scope: WRITE,
        params: Params,
        body: CohortWrite,
        bodyLimit: MAX_CSV_BYTES,
        tags: TAGS,
        handler: async (req, _reply, { project }) =>
          body(await service.update(project, cohortId(req.params.id), req.body)),
      })
    }

    projectRoute(scope, ctx, {
      method: 'DELETE',
      path: paths('/cohorts/:id'),
      scope: WRITE,
      params: Params,
      tags: TAGS,
      handler: async (_req, reply) => reply.code(405).send(),
    })
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/cohorts/:id/persons'),
    scope: READ,
    params: Params,
    query: PersonsQuery,
    tags: TAGS,
    handler: async (req, reply, { principal, project }) => {
      // PostHog asks for both scopes: the cohort's, and the persons'
      requireScope(principal, 'person:read')
      const c = await live(project, req.params.id)
      const where = `p.id IN COHORT ${c.id} AND (${listWhere({ search: req.query.search, properties: req.query.properties })})`
      return withCatalog(service.catalogWith(project.id, c), () => members(req, reply, project, where))
    },
  })

  const members = async (
    req: FastifyRequest<{ Querystring: z.infer<typeof PersonsQuery> }>,
    reply: FastifyReply,
    project: Project,
    where: string,
  ) => {
    const q = req.query
    const order = 'ORDER BY p.created_at DESC, p.id DESC'
    const wantsCsv = q.format === 'csv' || (req.headers.accept ?? '').includes('text/csv')
    if (!wantsCsv) {
      const rows = await queryPersons(
        rt.queryCh,
        project.id,
        where,
        `${order} LIMIT ${q.limit + 1} OFFSET ${q.offset}`,
      )
      const next = rows.length > q.limit ? pageUrl(req, q.limit, q.offset + q.limit) : null
      const previous = q.offset > 0 ? pageUrl(req, q.limit, Math.max(0, q.offset - q.limit)) : null
      return { results: rows.slice(0, q.limit), next, previous }
    }
    // every member, streamed page by page (up to CSV_LIMIT)
    const first = await queryPersons(rt.queryCh, project.id, where, `${order} LIMIT ${CSV_PAGE} OFFSET 0`)
    reply.hijack()
    const res = reply.raw
    res.writeHead(200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="cohort-${project.id}-members.csv"`,
    })
    res.write(csvLine(CSV_COLUMNS))
    try {
      let page = first
      for (let offset = 0; page.length && offset < CSV_LIMIT; offset += CSV_PAGE) {
        if (!res.write(page.map(personCsvLine).join(''))) await new Promise((r) => res.once('drain', r))
        if (page.length < CSV_PAGE) break
        page = await queryPersons(
          rt.queryCh,
          project.id,
          where,
          `${order} LIMIT ${CSV_PAGE} OFFSET ${offset + CSV_PAGE}`,
        )
      }
    } catch (err) {
      req.log.error({ err }, 'cohort members export failed while streaming')
    } finally {
      res.end()
    }
    return reply
  }

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: paths('/cohorts/:id/add_persons_to_static_cohort'),
    scope: WRITE,
    params: Params,
    body: AddPersons,
    tags: TAGS,
    handler: async (req, _reply, { project }) => {
      const c = await live(project, req.params.id)
      if (!c.is_static) throw new ValidationError('Can only add users to static cohorts')
      const ids = req.body.person_ids
      if (ids.length === 0) throw new ValidationError('person_ids cannot be empty', 'person_ids')
      if (ids.length > 1000) throw new ValidationError('List size exceeds limit', 'person_ids')
      await statics.apply(project, c, 'person_id', personIds(ids, 'person_ids'))
      return { success: true }
    },
  })

  projectRoute(app, ctx, {
    method: 'PATCH',
    path: paths('/cohorts/:id/remove_person_from_static_cohort'),
    scope: WRITE,
    params: Params,
    body: RemovePerson,
    tags: TAGS,
    handler: async (req, _reply, { project }) => {
      const c = await live(project, req.params.id)
      if (!c.is_static) throw new ValidationError('Can only remove users from static cohorts')
      if (!req.body.person_id) throw new ValidationError('person_id is required', 'person_id')
      if (typeof req.body.person_id !== 'string')
        throw new ValidationError('person_id must be a string', 'person_id')
      const [id] = personIds([req.body.person_id], 'person_id')
      const rows = await runHogQL(
        rt.queryCh,
        `SELECT count() FROM static_cohort_people WHERE cohort_id = ${c.id} AND person_id = toUUID(${str(id!)})`,
        { teamId: project.id, timezone: project.timezone },
      )
      if (Number(rows[0]?.[0] ?? 0) === 0) throw new NotFound('Person is not part of the cohort')
      await statics.apply(project, c, 'person_id', [id!], true)
      return { success: true }
    },
  })

  projectRoute(app, ctx, {
    method: 'GET',
    path: paths('/cohorts/:id/duplicate_as_static_cohort'),
    scope: WRITE,
    params: Params,
    tags: TAGS,
    handler: async (req, _reply, { project, principal }) =>
      body(await service.duplicateAsStatic(project, cohortId(req.params.id), principal.user.id)),
  })
}

function pageUrl(req: FastifyRequest, limit: number, offset: number): string {
  const host = req.headers['x-forwarded-host'] ?? req.headers.host ?? 'localhost'
  const url = new URL(req.url, `${req.protocol}://${host}`)
  url.searchParams.set('limit', String(limit))
  url.searchParams.set('offset', String(offset))
  return url.toString()
}

// Person exports of the spec ("Person analytics"): the persons behind one data point of a trends,
// lifecycle or stickiness insight, or behind a funnel correlation, as JSON (PostHog's legacy shape
// {results: [{people, count}], next}) or as streamed CSV. Parameters follow PostHog's legacy ones;
// docs/persons.md lists them.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Project } from '../accounts/documents.ts'
import { ValidationError } from '../http/errors.ts'
import { jsonStream } from '../http/json-stream.ts'
import { requestUrl } from '../http/paging.ts'
import { actorIdsSQL, type InsightActorsQuery } from '../queries/insights/actors/insight-actors.ts'
import {
  loadPersons,
  orderedPersonIds,
  personFromRow,
  personsOfIds,
} from '../queries/insights/actors/persons.ts'
import {
  addIntervals,
  alignToInterval,
  type Interval,
  parseWall,
  PropertiesSchema,
  wallString,
} from '../queries/insights/common/index.ts'
import { correlationActorsSQL } from '../queries/insights/funnels/correlation.ts'
import { FunnelsQuery } from '../queries/insights/funnels/schema.ts'
import { withTestAccounts } from '../queries/test-accounts.ts'
import { type ApiContext, type ProjectAccess, projectRoute } from '../http/routes.ts'
import { personCsvLine, CSV_COLUMNS, csvLine } from './csv.ts'
import { withProjectCatalog } from '../queries/catalog.ts'

// The spec names no scope for these; they reveal persons, so they take the person scope.
const READ = 'person:read'
const DEFAULT_LIMIT = 100
/**
 * Most persons one JSON page holds: a larger `limit` is lowered to it, and `next` pages on from
 * there (issue 40: a page of a million persons was read and serialized at once). PostHog's actor
 * lists bound their pages too.
 */
export const MAX_PAGE = 10_000
/** Upper bound of one CSV export (PostHog caps its CSV exports too). */
export const CSV_EXPORT_LIMIT = 100_000
const CSV_CHUNK = 5000

type Params = Record<string, unknown>

function json<T>(v: unknown, attr: string): T | undefined {
  if (v === undefined || v === null || v === '') return undefined
  if (typeof v !== 'string') return v as T
  try {
    return JSON.parse(v) as T
  } catch {
    throw new ValidationError(`${attr} must be JSON.`, attr)
  }
}

const int = (v: unknown, attr: string, fallback: number): number => {
  if (v === undefined || v === null || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0)
    throw new ValidationError(`${attr} must be a non-negative integer.`, attr)
  return n
}

const text = (v: unknown): string | undefined =>
  v === undefined || v === null || v === '' ? undefined : String(v)

/** PostHog's legacy filter_test_accounts (a query string's 'true', or a JSON body's true). */
const testAccounts = (p: Params): boolean => String(p.filter_test_accounts ?? '').toLowerCase() === 'true'

function need(p: Params, key: string): string {
  const v = text(p[key])
  if (v === undefined) throw new ValidationError(`Missing parameter '${key}'.`, key)
  return v
}

interface LegacyEntity {
  id?: string | number | null
  type?: string
  properties?: unknown
  order?: number
}

/** The series: `entity_id` (+ `entity_type`, `entity_properties`), or the first of `events`. */
function series(p: Params) {
  let entity: LegacyEntity | undefined
  if (p.entity_id !== undefined) {
    entity = {
      id: text(p.entity_id),
      type: text(p.entity_type) ?? 'events',
      properties: json(p.entity_properties, 'entity_properties'),
    }
  } else {
    const events = json<LegacyEntity[]>(p.events, 'events')
    entity = events?.[0]
  }
  if (!entity) throw new ValidationError("Missing parameter 'entity_id'.", 'entity_id')
  if ((entity.type ?? 'events') !== 'events') {
    throw new ValidationError('Only event entities are supported (entity_type=events).', 'entity_type')
  }
  return [
    {
      kind: 'EventsNode',
      event: entity.id === undefined || entity.id === null ? null : String(entity.id),
      properties: entity.properties,
    },
  ]
}

const interval = (p: Params): Interval => {
  const v = text(p.interval) ?? 'day'
  if (!['minute', 'hour', 'day', 'week', 'month'].includes(v))
    throw new ValidationError('Invalid interval.', 'interval')
  return v as Interval
}

/** The wall-clock start of the interval a point parameter names. */
function pointStart(p: Params, key: string, iv: Interval): number {
  try {
    return alignToInterval(parseWall(need(p, key)), iv)
  } catch (err) {
    if (err instanceof ValidationError) throw err
    throw new ValidationError(`Invalid date '${String(p[key])}'.`, key)
  }
}

// The legacy trends point is one interval: the range is exactly that interval, so the trends
// actors read the bucket the chart showed.
function trendsPoint(p: Params): InsightActorsQuery {
  const iv = interval(p)
  const start = pointStart(p, 'date_from', iv)
  const last = addIntervals(start, iv, 1) - 1000
  const source = {
    kind: 'TrendsQuery',
    series: series(p),
    interval: iv,
    dateRange: { date_from: wallString(start), date_to: wallString(last), explicitDate: true },
    properties: json(p.properties, 'properties'),
    filterTestAccounts: testAccounts(p),
    breakdownFilter: p.breakdown
      ? { breakdown: text(p.breakdown), breakdown_type: text(p.breakdown_type) ?? 'event' }
      : null,
  }
  return { source, day: wallString(start), breakdown: p.breakdown_value, series: 0 }
}

// A lifecycle status depends on the range it is read in (the interval before the range's first one
// is read too): with date_from/date_to the chart's range is used, else the target interval alone.
function lifecyclePoint(p: Params): InsightActorsQuery {
  const iv = interval(p)
  const target = wallString(pointStart(p, 'target_date', iv))
  const source = {
    kind: 'LifecycleQuery',
    series: series(p),
    interval: iv,
    dateRange: { date_from: text(p.date_from) ?? target, date_to: text(p.date_to) ?? target },
    properties: json(p.properties, 'properties'),
    filterTestAccounts: testAccounts(p),
  }
  return { source, day: target, status: need(p, 'lifecycle_type'), series: 0 }
}

function stickinessPoint(p: Params): InsightActorsQuery {
  const source = {
    kind: 'StickinessQuery',
    series: series(p),
    interval: interval(p),
    properties: json(p.properties, 'properties'),
    filterTestAccounts: testAccounts(p),
    dateRange: { date_from: text(p.date_from) ?? '-7d', date_to: text(p.date_to) ?? null },
  }
  return { source, day: need(p, 'stickiness_days'), series: 0 }
}

/** A legacy funnel filter (`events`, `funnel_window_*`, `funnel_order_type`, …) as a FunnelsQuery. */
export function legacyFunnel(p: Params): FunnelsQuery {
  const events = json<LegacyEntity[]>(p.events, 'events') ?? []
  const steps = [...events].sort((a, b) => (a.order ?? 0) - (b.order ?? 0))
  const exclusions = json<(LegacyEntity & { funnel_from_step: number; funnel_to_step: number })[]>(
    p.exclusions,
    'exclusions',
  )
  return FunnelsQuery.parse({
    kind: 'FunnelsQuery',
    series: steps.map((s) => ({
      kind: 'EventsNode',
      event: s.id === null || s.id === undefined ? null : String(s.id),
      properties: s.properties,
    })),
    dateRange: { date_from: text(p.date_from) ?? '-7d', date_to: text(p.date_to) ?? null },
    properties: json(p.properties, 'properties'),
    filterTestAccounts: testAccounts(p),
    funnelsFilter: {
      funnelOrderType: text(p.funnel_order_type) ?? 'ordered',
      funnelWindowInterval: p.funnel_window_interval ? Number(p.funnel_window_interval) : undefined,
      funnelWindowIntervalUnit: text(p.funnel_window_interval_unit),
      funnelWindowDays: p.funnel_window_days ? Number(p.funnel_window_days) : undefined,
      exclusions: exclusions?.map((e) => ({
        kind: 'EventsNode',
        event: String(e.id),
        properties: e.properties,
        funnelFromStep: e.funnel_from_step,
        funnelToStep: e.funnel_to_step,
      })),
    },
  })
}

interface Page {
  limit: number
  offset: number
}

type IdsSource = () => Promise<string>

// the project's cohorts and actions for every compile of the export (cohort filters, ActionsNode)
function respond(...args: Parameters<typeof respondIn>) {
  const [ctx, project] = args
  return withProjectCatalog(ctx.rt, project.id, () => respondIn(...args))
}

async function respondIn(
  ctx: ApiContext,
  project: Project,
  req: FastifyRequest,
  reply: FastifyReply,
  p: Params,
  ids: IdsSource,
  page: Page,
  pageKeys: [string, string] = ['limit', 'offset'],
) {
  const format = text(p.format) ?? 'json'
  if (format !== 'json' && format !== 'csv')
    throw new ValidationError('format must be csv or json.', 'format')
  const opts = { teamId: project.id, timezone: project.timezone }
  if (format === 'json') {
    const rows = await personsOfIds(ctx.rt.queryCh, await ids(), opts, page.limit + 1, page.offset)
    const people = rows.slice(0, page.limit).map((r) => personFromRow(r, project.timezone))
    const next = rows.length > page.limit ? nextUrl(req, page, ...pageKeys) : null
    // streamed in slices: a full page of large persons is tens of MB of JSON
    const within = { before: '{"results":[', after: `],"next":${JSON.stringify(next)}}` }
    return reply
      .type('application/json; charset=utf-8')
      .send(jsonStream({ people, count: people.length }, 'people', within))
  }
  const all = await orderedPersonIds(ctx.rt.queryCh, await ids(), opts, CSV_EXPORT_LIMIT)
  reply.hijack()
  const res = reply.raw
  res.writeHead(200, {
    'content-type': 'text/csv; charset=utf-8',
    'content-disposition': 'attachment; filename="persons.csv"',
  })
  res.write(csvLine(CSV_COLUMNS))
  try {
    for (let i = 0; i < all.length; i += CSV_CHUNK) {
      const persons = await loadPersons(ctx.rt.queryCh, project.id, all.slice(i, i + CSV_CHUNK))
      const ok = res.write(persons.map(personCsvLine).join(''))
      if (!ok) await new Promise((r) => res.once('drain', r))
    }
  } catch (err) {
    req.log.error({ err }, 'person export failed while streaming')
  } finally {
    res.end()
  }
  return reply
}

function nextUrl(req: FastifyRequest, page: Page, limitKey = 'limit', offsetKey = 'offset'): string {
  const url = requestUrl(req)
  url.searchParams.set(limitKey, String(page.limit))
  url.searchParams.set(offsetKey, String(page.offset + page.limit))
  return url.toString()
}

// Legacy parameters arrive as query strings (JSON-encoded where structured) and, for the
// correlation POST, in a JSON body; handlers read them by name.
const LegacyQuery = z.record(z.string(), z.unknown())
const LegacyBody = z.preprocess(
  (b) => (b && typeof b === 'object' ? b : {}),
  z.record(z.string(), z.unknown()),
)

export function registerPersonExportRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const point =
    (build: (p: Params) => InsightActorsQuery) =>
    async (req: FastifyRequest<{ Querystring: Params }>, reply: FastifyReply, { project }: ProjectAccess) => {
      const p = { ...req.query }
      const a = build(p)
      const page = {
        limit: Math.min(int(p.limit, 'limit', DEFAULT_LIMIT), MAX_PAGE),
        offset: int(p.offset, 'offset', 0),
      }
      return respond(ctx, project, req, reply, p, () => actorIdsSQL(a, project), page)
    }
  const get = (path: string, handler: ReturnType<typeof point>) =>
    projectRoute(app, ctx, { method: 'GET', path, scope: READ, query: LegacyQuery, handler })
  get('/persons/trends/', point(trendsPoint))
  get('/persons/lifecycle/', point(lifecyclePoint))
  get('/persons/stickiness/', point(stickinessPoint))

  const correlation = async (
    req: FastifyRequest<{ Querystring: Params; Body: Params | undefined }>,
    reply: FastifyReply,
    { project }: ProjectAccess,
  ) => {
    const p: Params = { ...req.query, ...req.body }
    const funnel = withTestAccounts(legacyFunnel(p), project)
    const entity = json<LegacyEntity>(p.funnel_correlation_person_entity, 'funnel_correlation_person_entity')
    if (!entity?.id) {
      throw new ValidationError(
        "Missing parameter 'funnel_correlation_person_entity'.",
        'funnel_correlation_person_entity',
      )
    }
    const converted = String(p.funnel_correlation_person_converted ?? 'true').toLowerCase() === 'true'
    const page = {
      limit: Math.min(
        int(p.funnel_correlation_person_limit ?? p.limit, 'funnel_correlation_person_limit', DEFAULT_LIMIT),
        MAX_PAGE,
      ),
      offset: int(p.funnel_correlation_person_offset ?? p.offset, 'funnel_correlation_person_offset', 0),
    }
    const props = PropertiesSchema.safeParse(entity.properties)
    if (!props.success) {
      throw new ValidationError('Invalid entity properties.', 'funnel_correlation_person_entity')
    }
    const target = { event: String(entity.id), properties: props.data }
    const ids: IdsSource = () =>
      correlationActorsSQL(funnel, { teamId: project.id, timezone: project.timezone }, target, converted)
    const keys: [string, string] = ['funnel_correlation_person_limit', 'funnel_correlation_person_offset']
    return respond(ctx, project, req, reply, p, ids, page, keys)
  }
  const path = '/persons/funnel/correlation/'
  projectRoute(app, ctx, { method: 'GET', path, scope: READ, query: LegacyQuery, handler: correlation })
  projectRoute(app, ctx, {
    method: 'POST',
    path,
    scope: READ,
    query: LegacyQuery,
    body: LegacyBody,
    handler: correlation,
  })
}

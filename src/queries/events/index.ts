// EventsQuery (posthog/hogql_queries/events_query_runner.py): a table of events with a select list
// of HogQL expressions (`*` gives the event as an object), where conditions (aggregates go to
// HAVING), property filters, event name, person, time bounds (default: the last 24 hours, and
// nothing from the future), orderBy and paging. One extra row is read to know whether more exist.
import { z } from 'zod'
import type { Project } from '../../accounts/documents.ts'
import { ValidationError } from '../../http/errors.ts'
import type { Node } from '../../hogql/ast.ts'
import { lookupFunction } from '../../hogql/functions.ts'
import { compileHogQL } from '../../hogql/index.ts'
import { getParser, parseExpr } from '../../hogql/parse.ts'
import type { KindCompiled, QueryKind } from '../kinds.ts'
import {
  bound,
  instantOf,
  parseDate,
  PropertiesSchema,
  propertiesCondition,
  str,
  wallOf,
  parseWall,
} from '../insights/common/index.ts'
import { testAccountsCondition } from '../test-accounts.ts'

export const EventsQuerySchema = z
  .object({
    kind: z.literal('EventsQuery'),
    select: z.array(z.string().min(1)).min(1).max(200),
    where: z.array(z.string().min(1)).nullable().optional(),
    orderBy: z.array(z.string().min(1)).nullable().optional(),
    properties: PropertiesSchema,
    fixedProperties: PropertiesSchema,
    filterTestAccounts: z.boolean().nullable().optional(),
    event: z.string().nullable().optional(),
    personId: z.string().uuid().nullable().optional(),
    after: z.string().nullable().optional(),
    before: z.string().nullable().optional(),
    limit: z.number().int().min(1).max(50_000).nullable().optional(),
    offset: z.number().int().min(0).nullable().optional(),
  })
  .passthrough()
export type EventsQuery = z.infer<typeof EventsQuerySchema>

/** posthog events_query_runner SELECT_STAR_FROM_EVENTS_FIELDS (team_id is added from the project) */
const STAR_FIELDS = [
  'uuid',
  'event',
  'properties',
  'timestamp',
  'distinct_id',
  'elements_chain',
  'created_at',
]
const DEFAULT_LIMIT = 100

interface EventsPlan {
  select: string[]
  starAt: number
  limit: number
  teamId: number
  timezone: string
}

interface EventsCompiled extends KindCompiled {
  events: EventsPlan
}

function hasAggregate(n: unknown): boolean {
  if (!n || typeof n !== 'object') return false
  if (Array.isArray(n)) return n.some(hasAggregate)
  const node = n as Node
  if (node.node === 'Call' && (lookupFunction(String(node.name))?.agg || node.distinct)) return true
  // Subqueries aggregate on their own level.
  if (node.node === 'SelectQuery' || node.node === 'SelectSetQuery') return false
  return Object.values(node).some(hasAggregate)
}

/** Parses one expression, so that a select item cannot change the statement around it. */
async function expression(text: string, field: string): Promise<{ text: string; aggregate: boolean }> {
  const clean = text.split('--')[0]!.trim()
  try {
    const node = parseExpr(await getParser(), clean)
    return { text: clean, aggregate: hasAggregate(node) }
  } catch (err) {
    throw new ValidationError(`${field}: ${(err as Error).message}`, field)
  }
}

export async function compileEvents(
  q: EventsQuery,
  project: Project,
  now = Date.now(),
): Promise<EventsCompiled> {
  const tz = project.timezone
  const raw = q.select.map((s) => s.split('--')[0]!.trim())
  const starAt = raw.indexOf('*')
  const items: string[] = []
  const groupBy: string[] = []
  let aggregating = false
  for (const col of raw) {
    if (col === '*') {
      items.push(...STAR_FIELDS)
      groupBy.push(...STAR_FIELDS)
      continue
    }
    const e = await expression(col, 'select')
    items.push(e.text)
    if (e.aggregate) aggregating = true
    else groupBy.push(e.text)
  }
  const where: string[] = []
  const having: string[] = []
  for (const w of q.where ?? []) {
    const e = await expression(w, 'where')
    ;(e.aggregate ? having : where).push(e.text)
  }
  const props = [
    propertiesCondition(q.properties),
    propertiesCondition(q.fixedProperties),
    testAccountsCondition(q.filterTestAccounts, project),
  ]
  for (const p of props) if (p) where.push(p)
  if (q.event) where.push(`event = ${str(q.event)}`)
  if (q.personId) where.push(`person_id = toUUID(${str(q.personId)})`)
  const nowWall = wallOf(now, tz)
  const before = q.before ? parseDate(q.before, tz, nowWall, false, 'before').wall : wallOf(now + 5000, tz)
  where.push(`timestamp < ${str(bound(before))}`)
  const after = q.after ?? '-24h'
  if (after !== 'all')
    where.push(`timestamp > ${str(bound(parseDate(after, tz, nowWall, false, 'after').wall))}`)

  let order: string[]
  if (q.orderBy) {
    order = []
    for (const o of q.orderBy) {
      const m = /^(.*?)(\s+(ASC|DESC))?$/is.exec(o.trim())!
      const e = await expression(m[1]!, 'orderBy')
      order.push(`${e.text}${m[3] ? ` ${m[3].toUpperCase()}` : ''}`)
    }
  } else if (raw.includes('count()')) order = ['count() DESC']
  else if (aggregating) order = [`${items[raw.findIndex((_, i) => i !== starAt)] ?? '1'} DESC`]
  else if (raw.includes('timestamp') || starAt >= 0) order = ['timestamp DESC']
  else order = [`${items[0]} ASC`]
  if (aggregating && !q.orderBy && !raw.includes('count()')) {
    // PostHog orders by the first aggregate when there is no count().
    for (const col of raw) {
      if (col !== '*' && (await expression(col, 'select')).aggregate) {
        order = [`${col} DESC`]
        break
      }
    }
  }

  const limit = q.limit ?? DEFAULT_LIMIT
  const offset = q.offset ?? 0
  let hogql = `SELECT ${items.join(', ')} FROM events WHERE ${where.map((w) => `(${w})`).join(' AND ')}`
  if (aggregating && groupBy.length) hogql += ` GROUP BY ${groupBy.join(', ')}`
  if (having.length) hogql += ` HAVING ${having.map((h) => `(${h})`).join(' AND ')}`
  hogql += ` ORDER BY ${order.join(', ')} LIMIT ${limit + 1}${offset ? ` OFFSET ${offset}` : ''}`
  const compiled = await compileHogQL(hogql, { teamId: project.id, timezone: tz, maxLimit: 50_001 })
  const types = [...compiled.types]
  if (starAt >= 0) types.splice(starAt, STAR_FIELDS.length, 'Tuple')
  return {
    ...compiled,
    columns: q.select,
    types,
    paging: { limit, offset },
    events: { select: raw, starAt, limit, teamId: project.id, timezone: tz },
  }
}

/** 'YYYY-MM-DD hh:mm:ss.mmm' in the project zone → ISO 8601 with the zone's offset. */
function isoWithOffset(text: string, tz: string): string {
  // (DateTime64(6) text: the milliseconds are the fraction's first three digits)
  const ms = Number(/\.(\d{3})\d*$/.exec(text)?.[1] ?? 0)
  const wall = parseWall(text) + ms
  const offsetMin = Math.round((wall - instantOf(wall, tz)) / 60_000)
  const sign = offsetMin < 0 ? '-' : '+'
  const abs = Math.abs(offsetMin)
  const hh = String(Math.floor(abs / 60)).padStart(2, '0')
  const mm = String(abs % 60).padStart(2, '0')
  return `${new Date(wall).toISOString().slice(0, 23)}${sign}${hh}:${mm}`
}

export function shapeEvents(rows: unknown[][], plan: EventsPlan): unknown[][] {
  return rows.slice(0, plan.limit).map((row) => {
    if (plan.starAt < 0) return row
    const star = row.slice(plan.starAt, plan.starAt + STAR_FIELDS.length)
    const event: Record<string, unknown> = Object.fromEntries(STAR_FIELDS.map((f, i) => [f, star[i]]))
    event.team_id = plan.teamId
    try {
      event.properties = JSON.parse(String(event.properties))
    } catch {
      // kept as text when it is not JSON
    }
    event.timestamp = isoWithOffset(String(event.timestamp), plan.timezone)
    event.created_at = isoWithOffset(String(event.created_at), plan.timezone)
    return [...row.slice(0, plan.starAt), event, ...row.slice(plan.starAt + STAR_FIELDS.length)]
  })
}

export const eventsKind: QueryKind = {
  compile: (raw, project) => compileEvents(EventsQuerySchema.parse(raw), project),
  shape: (rows, compiled) => shapeEvents(rows, (compiled as EventsCompiled).events),
}

// The persons behind one data point of an insight, as ClickHouse SQL of person ids. Each kind
// derives them from the SQL its own query counts, so a point's persons are the ones it counts:
//  * trends: trends/actors.ts (the bucket's events, or the active-user window, cumulative range,
//    breakdown value or "other");
//  * lifecycle: the rows of lifecycleStatuses with that interval and status;
//  * stickiness: the actors of stickinessPerActorHogQL active in exactly `day` intervals (`day` or
//    more when computedAs is cumulative, as PostHog's stickiness actors do);
//  * funnels: reached step `funnelStep` (1-based), or dropped off before step -funnelStep (-2 = did
//    step 1, not step 2), optionally for one breakdown value;
//  * retention: in the cohort of interval `interval` (0-based).
//  * paths: on the edge source.pathsFilter.pathStartKey -> pathEndKey, or dropping off at
//    pathDropoffKey (src/paths/sql.ts).
// Ids without a person row (personless events) are counted by the insights but have no person to
// show, so the person lookups around these ids leave them out, as PostHog's actors do.
import { z } from 'zod'
import { pathCleaningRules, type Project } from '../../../accounts/documents.ts'
import { ValidationError } from '../../../http/errors.ts'
import { PathsQuery, pathsWithTestAccounts } from '../../../paths/schema.ts'
import { pathsActorsSQL } from '../../../paths/sql.ts'
import { alignToInterval, compileInner, parseWall, sqlStr } from '../common/index.ts'
import { FunnelsQuery } from '../funnels/schema.ts'
import { funnelPersonsSQL } from '../funnels/sql.ts'
import { indexOf, LifecycleQuerySchema, lifecycleStatuses, STATUSES, statusCode } from '../lifecycle/index.ts'
import { planRetention, RetentionQuery, retentionPersonsHogQL } from '../retention/index.ts'
import {
  StickinessQuerySchema,
  stickinessActor,
  stickinessPerActorHogQL,
  stickinessRanges,
} from '../stickiness/index.ts'
import { trendsActorsSql } from '../trends/actors.ts'
import { TrendsQuerySchema } from '../trends/schema.ts'
import { withTestAccounts } from '../../test-accounts.ts'

export const InsightActorsQuery = z
  .object({
    kind: z.literal('InsightActorsQuery').optional(),
    source: z.object({ kind: z.string() }).passthrough(),
    day: z.union([z.string(), z.number()]).nullable().optional(),
    status: z.string().nullable().optional(),
    series: z.number().int().min(0).nullable().optional(),
    breakdown: z.unknown().optional(),
    compare: z.enum(['current', 'previous']).nullable().optional(),
    interval: z.number().int().min(0).nullable().optional(),
    funnelStep: z.number().int().nullable().optional(),
    funnelStepBreakdown: z.unknown().optional(),
  })
  .passthrough()
export type InsightActorsQuery = z.infer<typeof InsightActorsQuery>

function wallOfDay(day: string | number | null | undefined): number {
  try {
    return parseWall(String(day ?? ''))
  } catch {
    throw new ValidationError(`Invalid day '${String(day)}'.`, 'day')
  }
}

async function lifecycleActors(a: InsightActorsQuery, project: Project, now: number): Promise<string> {
  const q = LifecycleQuerySchema.parse(a.source)
  const status = a.status ?? ''
  if (!(STATUSES as readonly string[]).includes(status)) {
    throw new ValidationError('status must be new, returning, resurrecting or dormant.', 'status')
  }
  const { sql, interval } = await lifecycleStatuses(q, project, now)
  const period = indexOf(interval, alignToInterval(wallOfDay(a.day), interval))
  return `SELECT insight_actor FROM (${sql}) WHERE period = ${period} AND status = ${statusCode(status as (typeof STATUSES)[number])}`
}

async function stickinessActors(a: InsightActorsQuery, project: Project, now: number): Promise<string> {
  const q = StickinessQuerySchema.parse(a.source)
  const ranges = stickinessRanges(q, project.timezone, now)
  const r = a.compare === 'previous' ? ranges[1] : ranges[0]
  if (!r) throw new ValidationError("compare 'previous' needs compareFilter.compare", 'compare')
  const node = q.series[a.series ?? 0]
  if (!node) throw new ValidationError(`Series ${a.series} does not exist.`, 'series')
  if (stickinessActor(node).condition) {
    throw new ValidationError('Actors of unique_group series are groups, which are not supported.', 'series')
  }
  const days = Number(a.day)
  if (!Number.isInteger(days) || days < 1) {
    throw new ValidationError('day must be a number of intervals.', 'day')
  }
  const op = q.stickinessFilter?.computedAs === 'cumulative' ? '>=' : '='
  const hogql = `SELECT insight_actor FROM (${stickinessPerActorHogQL(q, node, r)}) WHERE insight_intervals ${op} ${days}`
  return (await compileInner(hogql, project.id, project.timezone)).clickhouse
}

async function funnelActors(q: FunnelsQuery, a: InsightActorsQuery, project: Project): Promise<string> {
  const { sql } = await funnelPersonsSQL(q, { teamId: project.id, timezone: project.timezone })
  const step = a.funnelStep ?? 1
  if (step === 0 || step === -1)
    throw new ValidationError('funnelStep is 1-based; drop-offs start at -2.', 'funnelStep')
  const conds = [step > 0 ? `step_reached >= ${step - 1}` : `step_reached = ${-step - 2}`]
  if (a.funnelStepBreakdown !== undefined && a.funnelStepBreakdown !== null) {
    const v = a.funnelStepBreakdown
    conds.push(
      Array.isArray(v)
        ? `breakdown = [${v.map((x) => sqlStr(String(x))).join(', ')}]`
        : `breakdown = ${sqlStr(String(v))}`,
    )
  }
  return `SELECT aggregation_target FROM (${sql}) WHERE ${conds.join(' AND ')}`
}

async function retentionActors(a: InsightActorsQuery, project: Project): Promise<string> {
  const plan = planRetention(RetentionQuery.parse(a.source), project.timezone)
  const hogql = `SELECT person_id FROM (${retentionPersonsHogQL(plan)}) WHERE cohort = ${a.interval ?? 0}`
  return (await compileInner(hogql, project.id, project.timezone)).clickhouse
}

/** ClickHouse SQL returning the person ids behind the data point (one column, maybe repeated). */
export async function actorIdsSQL(
  a: InsightActorsQuery,
  project: Project,
  now = Date.now(),
): Promise<string> {
  // the persons of a point are those its insight counts: with the insight's test-account filters
  a = { ...a, source: withTestAccounts(a.source, project) }
  switch (a.source.kind) {
    case 'TrendsQuery': {
      const q = TrendsQuerySchema.parse(a.source)
      return trendsActorsSql(q, a, project, now)
    }
    case 'LifecycleQuery':
      return lifecycleActors(a, project, now)
    case 'StickinessQuery':
      return stickinessActors(a, project, now)
    case 'FunnelsQuery':
      return funnelActors(FunnelsQuery.parse(a.source), a, project)
    case 'RetentionQuery':
      return retentionActors(a, project)
    case 'PathsQuery':
      return pathsActorsSQL(pathsWithTestAccounts(PathsQuery.parse(a.source), project), {
        teamId: project.id,
        timezone: project.timezone,
        now,
        cleaning: pathCleaningRules(project.settings),
      })
    default:
      throw new ValidationError(`Actors of '${a.source.kind}' are not supported.`, 'source.kind')
  }
}

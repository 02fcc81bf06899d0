// StickinessQuery (posthog/hogql_queries/insights/stickiness_query_runner.py): for each series, how
// many persons (or groups, with math unique_group) were active in exactly 1, 2, ... N intervals of
// the range, N being the number of intervals in the range. computedAs 'cumulative' counts
// "N or more" instead.
import { withTestAccounts } from '../../test-accounts.ts'
import { z } from 'zod'
import type { Project } from '../../../accounts/documents.ts'
import type { CompiledQuery } from '../../../hogql/index.ts'
import type { QueryKind } from '../../kinds.ts'
import type { DataFacts } from '../../person-overrides.ts'
import { ValidationError } from '../../../http/errors.ts'
import {
  and,
  bucketsOf,
  bucketValue,
  CompareFilterSchema,
  compileInner,
  DateRangeSchema,
  type SeriesNode,
  SeriesNodeSchema,
  IntervalSchema,
  PropertiesSchema,
  previousPeriod,
  type ResolvedRange,
  resolveDateRange,
  seriesCondition,
  seriesEntity,
  nameActions,
  rangeCondition,
  seriesLabel,
} from '../common/index.ts'

export const StickinessQuerySchema = z
  .object({
    kind: z.literal('StickinessQuery'),
    series: z.array(SeriesNodeSchema).min(1).max(50),
    interval: IntervalSchema.nullable().optional(),
    dateRange: DateRangeSchema.nullable().optional(),
    properties: PropertiesSchema,
    compareFilter: CompareFilterSchema.nullable().optional(),
    stickinessFilter: z
      .object({ computedAs: z.enum(['non_cumulative', 'cumulative']).nullable().optional() })
      .passthrough()
      .nullable()
      .optional(),
  })
  .passthrough()
export type StickinessQuery = z.infer<typeof StickinessQuerySchema>

interface StickinessPlan {
  query: StickinessQuery
  ranges: ResolvedRange[]
}

interface StickinessCompiled extends CompiledQuery {
  stickiness: StickinessPlan
}

/** The actor a series counts: the person, or the group with math unique_group. */
export function stickinessActor(node: SeriesNode): { actor: string; condition?: string } {
  if (node.math !== 'unique_group') return { actor: 'person_id' }
  const g = node.math_group_type_index
  if (g === null || g === undefined) {
    throw new ValidationError("math 'unique_group' needs math_group_type_index", 'series')
  }
  const actor = `\`$group_${g}\``
  return { actor, condition: `${actor} != ''` }
}

/**
 * HogQL, one row per actor of the series in the range: insight_actor and insight_intervals, the
 * number of intervals it was active in. StickinessQuery counts actors per number; its actors
 * (actors/insight-actors.ts) are the rows with one number.
 */
export function stickinessPerActorHogQL(q: StickinessQuery, node: SeriesNode, r: ResolvedRange): string {
  const { actor, condition } = stickinessActor(node)
  const where = and([rangeCondition(r), seriesCondition(node, q.properties), condition])
  // Only the number of distinct intervals matters: a day is counted by its Date (in the project's zone,
  // as toStartOfDay is), which hashes cheaper than the DateTime of its start.
  const interval = r.interval === 'day' ? 'toDate(timestamp)' : bucketValue(r.interval)
  return (
    `SELECT ${actor} AS insight_actor, count(DISTINCT ${interval}) AS insight_intervals` +
    ` FROM events WHERE ${where} GROUP BY insight_actor`
  )
}

/** The periods of a stickiness query: the range, then the previous one with compare. */
export function stickinessRanges(q: StickinessQuery, tz: string, now: number): ResolvedRange[] {
  const interval = q.interval ?? 'day'
  if (q.dateRange?.date_from === 'all') {
    throw new ValidationError("Stickiness does not support date_from 'all'", 'dateRange.date_from')
  }
  const current = resolveDateRange(q.dateRange, interval, tz, { now })
  return q.compareFilter?.compare ? [current, previousPeriod(current, q.compareFilter.compare_to)] : [current]
}

export async function compileStickiness(
  q: StickinessQuery,
  project: Project,
  now = Date.now(),
  facts?: DataFacts,
) {
  nameActions(q.series)
  const tz = project.timezone
  const ranges = stickinessRanges(q, tz, now)
  const parts: string[] = []
  const hogqls: string[] = []
  for (const [c, r] of ranges.entries()) {
    bucketsOf(r)
    for (const [s, node] of q.series.entries()) {
      const hogql =
        'SELECT insight_intervals, count() AS insight_actors FROM' +
        ` (${stickinessPerActorHogQL(q, node, r)}) GROUP BY insight_intervals`
      hogqls.push(hogql)
      const inner = (await compileInner(hogql, project.id, tz, facts)).clickhouse
      parts.push(
        `SELECT toUInt32(${s}) AS s, toUInt8(${c}) AS c, toUInt64(insight_intervals) AS n,` +
          ` toUInt64(insight_actors) AS actors FROM (${inner})`,
      )
    }
  }
  const compiled: StickinessCompiled = {
    hogql: hogqls.join('\nUNION ALL\n'),
    clickhouse: parts.join(' UNION ALL '),
    columns: ['s', 'c', 'n', 'actors'],
    types: ['UInt32', 'UInt8', 'UInt64', 'UInt64'],
    stickiness: { query: q, ranges },
  }
  return compiled
}

export function shapeStickiness(rows: unknown[][], plan: StickinessPlan) {
  const q = plan.query
  const cumulative = q.stickinessFilter?.computedAs === 'cumulative'
  const out: Record<string, unknown>[] = []
  for (const [c, r] of plan.ranges.entries()) {
    const n = bucketsOf(r).length
    for (const [s, node] of q.series.entries()) {
      let data = new Array<number>(n).fill(0)
      for (const [rs, rc, k, actors] of rows as number[][]) {
        if (Number(rs) === s && Number(rc) === c && k! >= 1 && k! <= n) data[k! - 1] = Number(actors)
      }
      const count = data.reduce((a, b) => a + b, 0)
      if (cumulative) data = data.map((_, i) => data.slice(i).reduce((a, b) => a + b, 0))
      const days = data.map((_, i) => i + 1)
      const unit = r.interval
      const result: Record<string, unknown> = {
        count,
        data,
        days,
        label: seriesLabel(node),
        labels: days.map((d) => `${d} ${unit}${d === 1 ? '' : 's'}${cumulative ? ' or more' : ''}`),
        action: {
          order: s,
          ...seriesEntity(node),
          name: seriesLabel(node),
          custom_name: node.custom_name ?? null,
        },
      }
      if (plan.ranges.length > 1)
        Object.assign(result, { compare: true, compare_label: c ? 'previous' : 'current' })
      out.push(result)
    }
  }
  return out
}

export const stickinessKind: QueryKind = {
  compile: (raw, project, facts) =>
    compileStickiness(withTestAccounts(StickinessQuerySchema.parse(raw), project), project, undefined, facts),
  shape: (rows, compiled) => shapeStickiness(rows, (compiled as StickinessCompiled).stickiness),
}

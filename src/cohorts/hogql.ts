// A cohort's members as one HogQL statement over persons and events: the filter tree becomes a
// boolean condition on each person (AND/OR as written, a negation as NOT), each behavioural filter
// an `IN (…)` of the persons whose events satisfy it. PostHog computes the same sets with set
// operations (posthog/hogql_queries/hogql_cohort_query.py: INTERSECT, UNION, EXCEPT); over all
// persons the two agree wherever PostHog accepts the tree (every negation ANDed with a positive
// filter, validate.ts), and the test cases are PostHog's.
//
// Another cohort in the tree: a static one is its member list; a dynamic one is its own tree,
// inlined (validation keeps out loops), so a calculation never depends on another's being current.
//
// Time windows, as PostHog's insights read `date_from: -30d`: from the start of the day N days
// (weeks, months, years) ago, or of the hour N hours ago, in the project's time zone. Periods of
// "performed regularly" are exact spans counted back from now, as PostHog's cohort query has them.
import { ValidationError } from '../http/errors.ts'
import {
  addIntervals,
  and,
  num,
  operatorCondition,
  or,
  parseDate,
  propertiesCondition,
  propertyField,
  str,
  type Wall,
  wallOf,
  wallString,
} from '../queries/insights/common/index.ts'
import {
  type BehaviouralLeaf,
  type Cohort,
  type Group,
  isGroup,
  type Leaf,
  type PersonLeaf,
  type TimeInterval,
} from './document.ts'

/** Where the statement is built: the project's cohorts, its time zone and the time it runs at. */
export interface MembersContext {
  cohort(id: number): Cohort | undefined
  timezone: string
  now: number
}

const LETTER: Record<TimeInterval, string> = {
  minute: 'M',
  hour: 'h',
  day: 'd',
  week: 'w',
  month: 'm',
  year: 'y',
}
const COUNT_OPS: Record<string, string> = { gte: '>=', lte: '<=', gt: '>', lt: '<', eq: '=', exact: '=' }

const bad = (detail: string): never => {
  throw new ValidationError(detail, 'filters')
}

function int(v: unknown, name: string): number {
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) bad(`${name} must be greater than 0, got ${String(v)}`)
  return n
}

const unit = (v: unknown): TimeInterval =>
  LETTER[v as TimeInterval] ? (v as TimeInterval) : bad(`Invalid interval: ${String(v)}`)

/** `-N<unit>` as PostHog's date ranges read it: the start of that day (or hour), as wall text. */
function since(n: number, u: TimeInterval, ctx: MembersContext): string {
  const now = wallOf(ctx.now, ctx.timezone)
  return wallString(parseDate(`-${n}${LETTER[u]}`, ctx.timezone, now, u !== 'minute', 'filters').wall)
}

/** The wall text of an explicit date (absolute, or relative such as -1w), as PostHog reads it. */
function explicit(text: string, ctx: MembersContext): string {
  return wallString(parseDate(text, ctx.timezone, wallOf(ctx.now, ctx.timezone), true, 'filters').wall)
}

/** Exactly `n` units before now, in wall time (the periods of "performed regularly"). */
function ago(n: number, u: TimeInterval, ctx: MembersContext): Wall {
  const now = wallOf(ctx.now, ctx.timezone)
  if (u === 'year') return addIntervals(now, 'month', -12 * n)
  return addIntervals(now, u, -n)
}

function entity(type: unknown, key: unknown): string {
  if (type === 'actions') return `matchesAction(${num(Number(key))})`
  return `event = ${str(String(key))}`
}

/** The window condition of a behavioural filter: explicit dates, else the last time_value units. */
function windowCondition(l: BehaviouralLeaf, ctx: MembersContext): string {
  if (l.explicit_datetime) {
    return and([
      `timestamp >= ${str(explicit(l.explicit_datetime, ctx))}`,
      l.explicit_datetime_to ? `timestamp <= ${str(explicit(l.explicit_datetime_to, ctx))}` : undefined,
    ])
  }
  return `timestamp >= ${str(since(int(l.time_value, 'time_value'), unit(l.time_interval), ctx))}`
}

/** HogQL of the persons whose events satisfy the behavioural filter. */
function behaviourPersons(l: BehaviouralLeaf, ctx: MembersContext): string {
  const what = and([entity(l.event_type, l.key), propertiesCondition(l.event_filters)])
  const grouped = (where: string, having: string) =>
    `SELECT person_id FROM events WHERE ${where} GROUP BY person_id HAVING ${having}`
  switch (l.value) {
    case 'performed_event':
      return `SELECT person_id FROM events WHERE ${and([what, windowCondition(l, ctx)])}`
    case 'performed_event_first_time':
      // the first time ever falls in the window: every such event is read, not only the window's
      return grouped(
        what,
        `min(timestamp) >= ${str(since(int(l.time_value, 'time_value'), unit(l.time_interval), ctx))}`,
      )
    case 'performed_event_multiple': {
      const op = COUNT_OPS[l.operator ?? 'eq'] ?? bad('count_operator must be gte, lte, eq, or None')
      return grouped(
        and([what, windowCondition(l, ctx)]),
        `count() ${op} ${int(l.operator_value, 'operator_value')}`,
      )
    }
    case 'stopped_performing_event': {
      const recent = str(since(int(l.seq_time_value, 'seq_time_value'), unit(l.seq_time_interval), ctx))
      return grouped(and([what, windowCondition(l, ctx)]), `countIf(timestamp >= ${recent}) = 0`)
    }
    case 'restarted_performing_event': {
      // done before the window, not within it until the recent part, and again in the recent part
      const start = str(since(int(l.time_value, 'time_value'), unit(l.time_interval), ctx))
      const recent = str(since(int(l.seq_time_value, 'seq_time_value'), unit(l.seq_time_interval), ctx))
      return grouped(
        what,
        `countIf(timestamp < ${start}) > 0 AND countIf(timestamp >= ${start} AND timestamp < ${recent}) = 0` +
          ` AND countIf(timestamp >= ${recent}) > 0`,
      )
    }
    case 'performed_event_sequence': {
      // an event of the second kind within seq_time of an earlier one of the first, both in the window
      // (a funnel of two steps, as PostHog computes it; event filters do not apply to its steps)
      const first = entity(l.event_type, l.key)
      const second = entity(l.seq_event_type ?? 'events', l.seq_event)
      const seconds = int(l.seq_time_value, 'seq_time_value') * SECONDS[unit(l.seq_time_interval)]
      const steps =
        `SELECT person_id, timestamp, ${second} AS is_second, max(if(${first}, timestamp, NULL)) OVER` +
        ' (PARTITION BY person_id ORDER BY timestamp ASC, uuid ASC ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)' +
        ` AS first_at FROM events WHERE ${and([or([first, second]), windowCondition(l, ctx)])}`
      return (
        `SELECT person_id FROM (${steps}) WHERE is_second AND first_at IS NOT NULL` +
        ` AND timestamp <= first_at + toIntervalSecond(${num(seconds)})`
      )
    }
    case 'performed_event_regularly': {
      const u = unit(l.time_interval)
      const per = int(l.time_value, 'time_value')
      const total = int(l.total_periods, 'total_periods')
      const min = int(l.min_periods, 'min_periods')
      if (min > total) bad(`min_periods (${min}) cannot be greater than total_periods (${total})`)
      const op = COUNT_OPS[l.operator ?? 'gte'] ?? bad('count_operator must be gte, lte, eq, or None')
      const times = int(l.operator_value, 'operator_value')
      const periods = Array.from({ length: total }, (_, p) => {
        const to = str(wallString(ago(per * p, u, ctx)))
        const from = str(wallString(ago(per * (p + 1), u, ctx)))
        return `if(countIf(timestamp <= ${to} AND timestamp > ${from}) ${op} ${times}, 1, 0)`
      })
      const earliest = str(wallString(ago(per * total, u, ctx)))
      return grouped(and([what, `timestamp > ${earliest}`]), `${periods.join(' + ')} >= ${min}`)
    }
  }
}

const SECONDS: Record<TimeInterval, number> = {
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 604_800,
  month: 2_592_000,
  year: 31_536_000,
}

function personCondition(l: PersonLeaf): string {
  return operatorCondition(propertyField(l.key, 'p.'), { ...l, operator: l.operator ?? 'exact' })
}

function leafCondition(l: Leaf, ctx: MembersContext, path: Set<number>): string {
  let cond: string
  if (l.type === 'person') cond = personCondition(l)
  else if (l.type === 'behavioral') cond = `p.id IN (${behaviourPersons(l, ctx)})`
  else {
    const id = l.value as number
    const c = ctx.cohort(id)
    if (!c || c.deleted) bad('Invalid Cohort ID in filter')
    if (path.has(id)) bad('Cohorts cannot reference other cohorts in a loop.')
    if (c!.is_static)
      cond = `p.id IN (SELECT person_id FROM static_cohort_people WHERE cohort_id = ${num(id)})`
    else cond = treeCondition(c!, ctx, new Set([...path, id]))
  }
  return l.negation ? `NOT (${cond})` : cond
}

function groupCondition(g: Group, ctx: MembersContext, path: Set<number>): string {
  const parts = g.values.map((v) => (isGroup(v) ? groupCondition(v, ctx, path) : leafCondition(v, ctx, path)))
  return g.type === 'AND' ? and(parts) : or(parts)
}

function treeCondition(c: Cohort, ctx: MembersContext, path: Set<number>): string {
  const props = c.filters?.properties
  // PostHog: no person matches a cohort without filters
  if (!props || props.values.length === 0) return '0'
  return groupCondition(props, ctx, path)
}

/** HogQL selecting the `id` of every member of the dynamic cohort `c`. */
export function membersHogQL(c: Cohort, ctx: MembersContext): string {
  if (c.is_static) return `SELECT person_id AS id FROM static_cohort_people WHERE cohort_id = ${num(c.id)}`
  return `SELECT p.id AS id FROM persons AS p WHERE ${treeCondition(c, ctx, new Set([c.id]))}`
}

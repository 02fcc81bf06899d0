import { ValidationError } from '../http/errors.ts'
import { regexProblem } from '../flags/regex.ts'
import { checkFilters } from '../actions/validate.ts'
import { OPERATORS } from '../queries/insights/common/properties.ts'
import {
  type BehaviouralLeaf,
  BehaviouralLeafSchema,
  type Cohort,
  cohortRefs,
  CohortLeafSchema,
  type Filters,
  FiltersSchema,
  type Group,
  INTERVALS,
  isGroup,
  type Leaf,
  PersonLeafSchema,
  type TimeInterval,
} from './document.ts'

// What a cohort may not be saved with, each refusal a 400 naming the field (PostHog's messages
// where PostHog has one, posthog/api/cohort.py): a malformed filter tree, a cohort that contains
// itself (directly or through others), a reference to a cohort that is deleted or not the
// project's, an action that is not the project's, a regex RE2 cannot compile, time windows that
// cannot be read, and negations with nothing positive to subtract them from.

/** What validation may look up: the project's cohorts and actions. */
export interface CohortWorld {
  cohort(id: number): Cohort | undefined
  actionExists(id: number): boolean
}

const ATTR = 'filters'
const fail = (detail: string): never => {
  throw new ValidationError(detail, ATTR)
}

const PERSON_OPERATORS = new Set<string>([...OPERATORS, 'in', 'not_in'])
const VALUELESS = new Set(['is_set', 'is_not_set'])
const REGEX = new Set(['regex', 'not_regex'])
const INTERVAL_SECONDS: Record<TimeInterval, number> = {
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 604_800,
  month: 2_592_000,
  year: 31_536_000,
}

/** A positive whole number (PostHog's parse_and_validate_positive_integer). */
export function positive(v: unknown, name: string): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN
  if (!Number.isInteger(n)) fail(`${name} must be an integer, got ${String(v)}`)
  if (n <= 0) fail(`${name} must be greater than 0, got ${String(v)}`)
  return n
}

function interval(v: unknown, name: string): TimeInterval {
  if (typeof v !== 'string' || !(INTERVALS as readonly string[]).includes(v))
    fail(`Invalid ${name}: ${String(v)}`)
  return v as TimeInterval
}

function checkEntity(key: unknown, type: unknown, world: CohortWorld, what: string): void {
  if (type === 'actions') {
    const id = Number(key)
    if (!Number.isSafeInteger(id) || !world.actionExists(id))
      fail(`Action ${String(key)} in ${what} does not exist in this project.`)
  } else if (typeof key !== 'string' || key === '') fail(`${what} needs an event name`)
}

function checkBehaviour(leaf: BehaviouralLeaf, world: CohortWorld): void {
  checkEntity(leaf.key, leaf.event_type, world, 'a behavioral filter')
  if (leaf.event_filters?.length)
    checkFilters(leaf.event_filters, `${ATTR}.event_filters`, (id) => !!world.cohort(id))
  const window = () => {
    if (leaf.explicit_datetime) return
    positive(leaf.time_value, 'time_value')
    interval(leaf.time_interval, 'time_interval')
  }
  switch (leaf.value) {
    case 'performed_event':
    case 'performed_event_first_time':
      window()
      return
    case 'performed_event_multiple':
      window()
      positive(leaf.operator_value, 'operator_value')
      if (!['gte', 'lte', 'gt', 'lt', 'eq', 'exact', null, undefined].includes(leaf.operator)) {
        fail('count_operator must be gte, lte, eq, or None')
      }
      return
    case 'performed_event_sequence':
      window()
      checkEntity(leaf.seq_event, leaf.seq_event_type ?? 'events', world, 'a sequence')
      positive(leaf.seq_time_value, 'seq_time_value')
      interval(leaf.seq_time_interval, 'seq_time_interval')
      return
    case 'stopped_performing_event':
    case 'restarted_performing_event': {
      const whole =
        positive(leaf.time_value, 'time_value') *
        INTERVAL_SECONDS[interval(leaf.time_interval, 'time_interval')]
      const recent =
        positive(leaf.seq_time_value, 'seq_time_value') *
        INTERVAL_SECONDS[interval(leaf.seq_time_interval, 'seq_time_interval')]
      if (recent >= whole) fail('seq_time_value must be a shorter time than time_value')
      return
    }
    case 'performed_event_regularly': {
      interval(leaf.time_interval, 'time_interval')
      positive(leaf.time_value, 'time_value')
      positive(leaf.operator_value, 'operator_value')
      const min = positive(leaf.min_periods, 'min_periods')
      const total = positive(leaf.total_periods, 'total_periods')
      if (min > total) fail(`min_periods (${min}) cannot be greater than total_periods (${total})`)
    }
  }
}

function parseLeaf(raw: Record<string, unknown>, world: CohortWorld): Leaf {
  switch (raw.type) {
    case 'person': {
      if (raw.value === undefined && !VALUELESS.has(String(raw.operator)))
        fail('Missing required keys for person filter: value')
      const leaf = PersonLeafSchema.safeParse(raw)
      if (!leaf.success) fail('Missing required keys for person filter: key')
      const op = leaf.data!.operator ?? 'exact'
      if (!PERSON_OPERATORS.has(op)) fail(`Unsupported operator '${op}' in a person filter`)
      if (REGEX.has(op)) {
        const problem = regexProblem(String(leaf.data!.value))
        if (problem) fail(problem)
      }
      return leaf.data!
    }
    case 'behavioral': {
      const leaf = BehaviouralLeafSchema.safeParse(raw)
      if (!leaf.success) {
        const missing = leaf.error.issues.find(
          (i) => i.code === 'invalid_type' && raw[String(i.path[0])] === undefined,
        )
        fail(
          missing
            ? `Missing required keys for behavioral filter: ${String(missing.path[0])}`
            : `Invalid behavioral filter: ${leaf.error.issues[0]?.path.join('.')} ${leaf.error.issues[0]?.message}`,
        )
      }
      checkBehaviour(leaf.data!, world)
      return leaf.data!
    }
    case 'cohort':
    case 'static-cohort':
    case 'precalculated-cohort': {
      const leaf = CohortLeafSchema.safeParse(raw)
      if (!leaf.success) fail('Missing required keys for cohort filter: value')
      return leaf.data!
    }
    default:
      return fail(`Unsupported filter type '${String(raw.type)}' in a cohort`)
  }
}

function parseGroup(raw: unknown, world: CohortWorld): Group {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    fail('Each group must have a type (AND or OR) and values')
  const g = raw as Record<string, unknown>
  if ((g.type !== 'AND' && g.type !== 'OR') || !Array.isArray(g.values))
    fail('Each group must have a type (AND or OR) and values')
  return {
    type: g.type as 'AND' | 'OR',
    values: (g.values as unknown[]).map((v) => {
      if (!v || typeof v !== 'object' || Array.isArray(v)) return fail('Each filter must be an object')
      const o = v as Record<string, unknown>
      return o.type === 'AND' || o.type === 'OR' ? parseGroup(o, world) : parseLeaf(o, world)
    }),
  }
}

/**
 * PostHog's check_negation_clause (ee/clickhouse/queries/enterprise_cohort_query.py): whether a
 * negation is left without a positive filter ANDed with it, and whether any positive filter exists.
 */
export function negationClause(g: Group): { pendingNegation: boolean; positive: boolean } {
  let negation = false
  let positive = false
  for (const v of g.values) {
    if (isGroup(v)) {
      const inner = negationClause(v)
      negation ||= inner.pendingNegation
      positive ||= inner.positive
    } else if (v.negation) negation = true
    else positive = true
  }
  if (g.type === 'AND' && negation && positive) return { pendingNegation: false, positive: true }
  return { pendingNegation: negation, positive }
}

/** PostHog's will_create_loops: whether cohort `self` reaches itself through `refs`. */
function loops(self: number | undefined, refs: number[], world: CohortWorld): boolean {
  const onPath = new Set<number>(self === undefined ? [] : [self])
  const seen = new Set<number>()
  const visit = (ids: number[]): boolean => {
    for (const id of ids) {
      if (onPath.has(id)) return true
      if (seen.has(id)) continue
      seen.add(id)
      const c = world.cohort(id)
      if (!c) fail('Invalid Cohort ID in filter')
      onPath.add(id)
      if (c!.filters && visit(cohortRefs(c!.filters.properties))) return true
      onPath.delete(id)
    }
    return false
  }
  return visit(refs)
}

/** The cohort's filters as they will be stored; throws ValidationError (attr `filters`). */
export function validateFilters(raw: unknown, self: number | undefined, world: CohortWorld): Filters {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw) || !('properties' in raw)) {
    fail("Must contain a 'properties' key with type and values")
  }
  const properties = parseGroup((raw as { properties: unknown }).properties, world)
  const refs = cohortRefs(properties)
  for (const id of refs) {
    const c = world.cohort(id)
    if (!c || c.deleted) fail('Invalid Cohort ID in filter')
  }
  if (loops(self, refs, world)) fail('Cohorts cannot reference other cohorts in a loop.')
  const { pendingNegation } = negationClause(properties)
  if (pendingNegation)
    fail('A negated filter needs a positive filter ANDed with it (top level condition cannot be negated).')
  return FiltersSchema.parse({ ...(raw as object), properties })
}

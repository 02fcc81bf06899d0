import { z } from 'zod'
import { ValidationError } from '../http/errors.ts'
import { parseDate } from '../queries/insights/common/date-range.ts'
import { instantOf, wallOf } from '../queries/insights/common/time.ts'

// The recordings list's query parameters, as PostHog reads them (RecordingsQuery): every
// parameter is JSON-decoded when it parses as JSON (`distinct_ids=["a"]`, `having_predicates=[...]`),
// else taken as text. What Burrow supports of it is validated here and turned into a RecordingsFilter.

export const RECORDING_ORDERS = [
  'start_time',
  'duration',
  'recording_duration',
  'active_seconds',
  'inactive_seconds',
  'console_error_count',
  'click_count',
  'keypress_count',
  'mouse_activity_count',
  'activity_score',
] as const

/** Summary fields a `having_predicates` filter may compare (PostHog's `recording` property filters). */
export const RECORDING_PROPERTIES = [
  'duration',
  'active_seconds',
  'inactive_seconds',
  'click_count',
  'keypress_count',
  'mouse_activity_count',
  'console_log_count',
  'console_warn_count',
  'console_error_count',
  'snapshot_source',
  'start_url',
] as const
export type RecordingProperty = (typeof RECORDING_PROPERTIES)[number]

const OPERATORS = ['exact', 'is_not', 'gt', 'gte', 'lt', 'lte'] as const
type Operator = (typeof OPERATORS)[number]

export interface Predicate {
  key: RecordingProperty
  operator: Operator
  values: (string | number)[]
}

export interface RecordingsFilter {
  /** epoch ms bounds on the session's start */
  fromMs: number | null
  toMs: number
  distinctIds: string[] | null
  personUuid: string | null
  sessionIds: string[] | null
  playlist: string | null
  /** event names the session must hold (null name: any event) */
  events: (string | null)[]
  /** console levels of which the session must hold at least one line, per console filter */
  consoleLevels: ('info' | 'warn' | 'error')[][]
  operand: 'AND' | 'OR'
  /** filter_test_accounts: the session's events must pass the project's test-account filters */
  testAccounts: boolean
  predicates: Predicate[]
  order: (typeof RECORDING_ORDERS)[number]
  direction: 'ASC' | 'DESC'
  limit: number
  offset: number
}

const Scalar = z.union([z.string(), z.number()])
const Values = z.union([Scalar, z.array(Scalar)]).transform((v) => (Array.isArray(v) ? v : [v]))

const PredicateInput = z.object({
  key: z.enum(RECORDING_PROPERTIES),
  operator: z.enum(OPERATORS).default('exact'),
  value: Values,
  type: z.string().optional(),
})

const ConsoleFilterInput = z.object({
  key: z.literal('level', { message: 'only console filters on `level` are supported' }),
  operator: z.literal('exact').default('exact'),
  value: Values,
  type: z.string().optional(),
})

const EventInput = z
  .object({
    id: z.string().nullable().optional(),
    name: z.string().nullable().optional(),
    type: z.literal('events').default('events'),
    properties: z
      .array(z.unknown())
      .max(0, 'event property filters are not supported on recordings')
      .optional(),
  })
  .passthrough()

const Input = z
  .object({
    date_from: z.string().nullable().optional(),
    date_to: z.string().nullable().optional(),
    distinct_ids: z.array(z.string()).max(1000).nullable().optional(),
    person_uuid: z.string().uuid().nullable().optional(),
    session_ids: z.array(z.string()).max(1000).nullable().optional(),
    playlist: z
      .string()
      .regex(/^[A-Za-z0-9]{1,32}$/)
      .nullable()
      .optional(),
    events: z.array(EventInput).max(20).nullable().optional(),
    console_log_filters: z.array(ConsoleFilterInput).max(10).nullable().optional(),
    having_predicates: z.array(PredicateInput).max(20).nullable().optional(),
    operand: z.enum(['AND', 'OR']).default('AND'),
    filter_test_accounts: z.boolean().nullable().optional(),
    order: z.enum(RECORDING_ORDERS).default('start_time'),
    order_direction: z.enum(['ASC', 'DESC']).default('DESC'),
    limit: z.coerce.number().int().min(1).max(1000).default(50),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .passthrough()

/** A query string's values, JSON-decoded where they parse (PostHog's query_as_params_to_dict). */
export function decodeParams(query: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(query)) {
    if (typeof v !== 'string') continue
    try {
      out[k] = JSON.parse(v)
    } catch {
      out[k] = v
    }
  }
  // numbers that were sent as text stay usable as text (dates like 2024 or session ids)
  for (const k of ['date_from', 'date_to', 'playlist'])
    if (typeof out[k] === 'number') out[k] = String(out[k])
  return out
}

const LEVEL_NAMES: Record<string, 'info' | 'warn' | 'error'> = {
  info: 'info',
  log: 'info',
  warn: 'warn',
  error: 'error',
}

const DAY_MS = 86_400_000

/** Epoch ms of a PostHog date (`-3d`, `-24h`, `2024-05-01`, ISO) in the project's zone. */
function instant(input: string, tz: string, nowMs: number, field: string, endOfDay: boolean): number {
  const parsed = parseDate(input, tz, wallOf(nowMs, tz), true, field)
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(input.trim())
  return instantOf(parsed.wall + (endOfDay && dateOnly ? DAY_MS - 1 : 0), tz)
}

/** Validates the list's parameters (already JSON-decoded) into a filter; 400 on anything unsupported. */
export function parseRecordingsFilter(
  params: Record<string, unknown>,
  opts: { timezone: string; nowMs: number },
): RecordingsFilter {
  const parsed = Input.safeParse(params)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const attr = issue.path.length ? String(issue.path[0]) : null
    throw new ValidationError(`${issue.path.join('.') || 'query'}: ${issue.message}`, attr)
  }
  const q = parsed.data
  const dateFrom = q.date_from === undefined ? '-3d' : q.date_from
  const fromMs =
    dateFrom === null || dateFrom === 'all'
      ? null
      : instant(dateFrom, opts.timezone, opts.nowMs, 'date_from', false)
  const toMs = q.date_to ? instant(q.date_to, opts.timezone, opts.nowMs, 'date_to', true) : opts.nowMs
  const consoleLevels = (q.console_log_filters ?? []).map((f) =>
    f.value.map((v) => {
      const level = LEVEL_NAMES[String(v)]
      if (!level) throw new ValidationError(`Unknown console level '${v}'.`, 'console_log_filters')
      return level
    }),
  )
  const predicates: Predicate[] = (q.having_predicates ?? []).map((p) => {
    if (p.key !== 'snapshot_source' && p.key !== 'start_url') {
      for (const v of p.value) {
        if (!Number.isFinite(Number(v))) {
          throw new ValidationError(`'${p.key}' compares numbers, not '${v}'.`, 'having_predicates')
        }
      }
      return { key: p.key, operator: p.operator, values: p.value.map(Number) }
    }
    if (!['exact', 'is_not'].includes(p.operator)) {
      throw new ValidationError(`'${p.key}' supports exact and is_not only.`, 'having_predicates')
    }
    return { key: p.key, operator: p.operator, values: p.value.map(String) }
  })
  return {
    fromMs,
    toMs,
    distinctIds: q.distinct_ids ?? null,
    personUuid: q.person_uuid?.toLowerCase() ?? null,
    sessionIds: q.session_ids ?? null,
    playlist: q.playlist ?? null,
    events: (q.events ?? []).map((e) => e.id ?? e.name ?? null),
    consoleLevels,
    operand: q.operand,
    testAccounts: q.filter_test_accounts === true,
    predicates,
    order: q.order,
    direction: q.order_direction,
    limit: q.limit,
    offset: q.offset,
  }
}

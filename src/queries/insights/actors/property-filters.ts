// PostHog property filters ({key, value, operator, type}) as HogQL conditions. Stored property
// values are text (see schema/clickhouse/0001_events.sql), so comparisons are on text except the
// numeric operators, which parse the value.
import { z } from 'zod'
import { ValidationError } from '../../../errors.ts'
import { num, propertyRef, str, valueLiteral } from './hogql.ts'

export const PropertyFilter = z
  .object({
    key: z.string(),
    value: z.unknown().optional(),
    operator: z.string().nullable().optional(),
    type: z.string().optional(),
  })
  .passthrough()
export type PropertyFilter = z.infer<typeof PropertyFilter>

/** A flat list, or PostHog's property group `{type: AND|OR, values: [...]}` (nested). */
export const PropertyFilters = z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())])

/** Where the condition is evaluated: an events row (person via join) or a persons row. */
export type FilterScope = 'events' | 'persons'

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v])

function textOf(v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  return JSON.stringify(v)
}

function ref(f: PropertyFilter, scope: FilterScope, personBase: string): string {
  const type = f.type ?? 'event'
  if (type === 'person')
    return scope === 'events' ? propertyRef(f.key, 'person') : `${personBase}[${str(f.key)}]`
  if (type === 'event') {
    if (scope === 'persons') throw new ValidationError('Event property filters do not apply to persons.')
    return propertyRef(f.key, 'event')
  }
  throw new ValidationError(`Unsupported property filter type '${type}'.`, 'properties')
}

export function propertyFilterToHogQL(raw: unknown, scope: FilterScope, personBase = 'properties'): string {
  const parsed = PropertyFilter.safeParse(raw)
  if (!parsed.success) throw new ValidationError('Invalid property filter.', 'properties')
  const f = parsed.data
  if (f.type === 'hogql') return `(${f.key})`
  const x = ref(f, scope, personBase)
  const op = f.operator ?? 'exact'
  const values = asList(f.value).map(textOf)
  const list = `(${values.map(str).join(', ')})`
  switch (op) {
    case 'exact':
      return values.length === 1 ? `ifNull(${x} = ${str(values[0]!)}, 0)` : `ifNull(${x} IN ${list}, 0)`
    case 'is_not':
      return values.length === 1 ? `ifNull(${x} != ${str(values[0]!)}, 1)` : `ifNull(${x} NOT IN ${list}, 1)`
    case 'icontains':
      return `ifNull(${x} ILIKE ${str(`%${values[0] ?? ''}%`)}, 0)`
    case 'not_icontains':
      return `ifNull(NOT (${x} ILIKE ${str(`%${values[0] ?? ''}%`)}), 1)`
    case 'regex':
      return `ifNull(match(${x}, ${str(values[0] ?? '')}), 0)`
    case 'not_regex':
      return `ifNull(NOT match(${x}, ${str(values[0] ?? '')}), 1)`
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const n = Number(values[0])
      if (!Number.isFinite(n)) throw new ValidationError(`'${op}' needs a number.`, 'properties')
      const sym = { gt: '>', gte: '>=', lt: '<', lte: '<=' }[op]
      return `ifNull(toFloat(${x}) ${sym} ${num(n)}, 0)`
    }
    case 'is_set':
      return `${x} IS NOT NULL`
    case 'is_not_set':
      return `${x} IS NULL`
    case 'is_date_before':
    case 'is_date_after': {
      const sym = op === 'is_date_before' ? '<' : '>'
      return `ifNull(toDateTime(${x}) ${sym} toDateTime(${valueLiteral(values[0] ?? '')}), 0)`
    }
    default:
      throw new ValidationError(`Unsupported property operator '${op}'.`, 'properties')
  }
}

/** AND of a list, or a nested AND/OR group; `1` when there is nothing to filter. */
export function propertiesToHogQL(props: unknown, scope: FilterScope, personBase = 'properties'): string {
  if (props === null || props === undefined) return '1'
  if (Array.isArray(props)) {
    const parts = props.map((p) => groupOrFilter(p, scope, personBase))
    return parts.length ? parts.map((p) => `(${p})`).join(' AND ') : '1'
  }
  return groupOrFilter(props, scope, personBase)
}

function groupOrFilter(p: unknown, scope: FilterScope, personBase: string): string {
  const g = p as { type?: string; values?: unknown[] }
  if (g && (g.type === 'AND' || g.type === 'OR') && Array.isArray(g.values)) {
    const parts = g.values.map((v) => groupOrFilter(v, scope, personBase))
    if (!parts.length) return '1'
    return parts.map((x) => `(${x})`).join(` ${g.type} `)
  }
  return propertyFilterToHogQL(p, scope, personBase)
}

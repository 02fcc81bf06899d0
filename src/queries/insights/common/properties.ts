// Property filters (PostHog's AnyPropertyFilter / PropertyGroupFilter) as HogQL conditions on the
// events table, following posthog/hogql/property.py: missing properties never match a positive
// operator and always match a negative one (is_not, not_icontains, not_regex, is_not_set).
//
// Filter types: event (properties of the event), person (`person.properties`, through merges),
// group (properties of the event's group of `group_type_index`), event_metadata (a column of the
// event: distinct_id, event, timestamp, $session_id, $group_N), hogql (`key` is a HogQL
// condition), cohort (`value` is a cohort id: the event's person is a member; on persons, the
// person), element (autocapture's clicked element: `selector`, `tag_name`, `href`, `text`).
import { InvalidSelector, selectorRegex, tagNameRegex } from '../../../actions/selector.ts'
import { ValidationError } from '../../../http/errors.ts'
import { and, num, or, propertyField, str } from './hogql.ts'
import type { Properties, PropertyFilter, PropertyGroup } from './schema.ts'

export const OPERATORS = [
  'exact',
  'is_not',
  'icontains',
  'not_icontains',
  'regex',
  'not_regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'is_set',
  'is_not_set',
  'is_date_exact',
  'is_date_before',
  'is_date_after',
  'between',
  'not_between',
  'min',
  'max',
] as const

const NEGATIVE = new Set(['is_not', 'not_in', 'not_icontains', 'not_regex', 'is_not_set', 'not_between'])

const METADATA = new Set(['distinct_id', 'event', 'timestamp', '$session_id', 'person_id', 'uuid'])

type Scalar = string | number | boolean | null

/** The stored text of a filter value: strings as they are, booleans and numbers as JSON. */
function text(v: Scalar): string {
  if (v === null) return ''
  return typeof v === 'string' ? v : String(v)
}

function values(f: PropertyFilter): Scalar[] {
  const v = f.value
  if (v === undefined) return []
  return Array.isArray(v) ? v : [v]
}

function number(v: Scalar, f: PropertyFilter): string {
  const n = typeof v === 'number' ? v : Number(v)
  if (v === null || v === '' || !Number.isFinite(n)) {
    throw new ValidationError(`Property filter '${f.key}' needs a number`, 'properties')
  }
  return num(n)
}

/** One operator applied to a HogQL field expression. */
export function operatorCondition(field: string, f: PropertyFilter): string {
  // PostHog's `in` / `not_in` (a list of values) are exact / is_not over that list
  const op = f.operator === 'in' ? 'exact' : f.operator === 'not_in' ? 'is_not' : (f.operator ?? 'exact')
  const vs = values(f)
  const first = vs[0] ?? null
  switch (op) {
    // ifNull: the condition is also used as a value (funnel step flags), where NULL is not false
    case 'exact':
      if (vs.length !== 1) return `ifNull(${field} IN (${vs.map((v) => str(text(v))).join(', ') || "''"}), 0)`
      return `ifNull(${field} = ${str(text(first))}, 0)`
    case 'is_not':
      if (vs.length !== 1)
        return `ifNull(${field} NOT IN (${vs.map((v) => str(text(v))).join(', ') || "''"}), 1)`
      return `ifNull(${field} != ${str(text(first))}, 1)`
    case 'icontains':
      return `ifNull(toString(${field}) ILIKE ${str(`%${text(first)}%`)}, 0)`
    case 'not_icontains':
      return `ifNull(toString(${field}) NOT ILIKE ${str(`%${text(first)}%`)}, 1)`
    case 'regex':
      return `ifNull(match(toString(${field}), ${str(text(first))}), 0)`
    case 'not_regex':
      return `ifNull(not(match(toString(${field}), ${str(text(first))})), 1)`
    case 'gt':
      return `ifNull(toFloat(${field}) > ${number(first, f)}, 0)`
    case 'gte':
    case 'min':
      return `ifNull(toFloat(${field}) >= ${number(first, f)}, 0)`
    case 'lt':
      return `ifNull(toFloat(${field}) < ${number(first, f)}, 0)`
    case 'lte':
    case 'max':
      return `ifNull(toFloat(${field}) <= ${number(first, f)}, 0)`
    case 'between':
      return `ifNull(toFloat(${field}) >= ${number(vs[0] ?? null, f)} AND toFloat(${field}) <= ${number(vs[1] ?? null, f)}, 0)`
    case 'not_between':
      // A missing value is not between the two, so it matches: spelled out, as both comparisons
      // are NULL for it (and NULL OR NULL is NULL).
      return (
        `isNull(toFloat(${field})) OR toFloat(${field}) < ${number(vs[0] ?? null, f)}` +
        ` OR toFloat(${field}) > ${number(vs[1] ?? null, f)}`
      )
    case 'is_set':
      return `isNotNull(${field})`
    case 'is_not_set':
      return `isNull(${field})`
    case 'is_date_exact':
      return `ifNull(toDate(toDateTime(toString(${field}))) = toDate(toDateTime(${str(text(first))})), 0)`
    case 'is_date_before':
      return `ifNull(toDateTime(toString(${field})) < toDateTime(${str(text(first))}), 0)`
    case 'is_date_after':
      return `ifNull(toDateTime(toString(${field})) > toDateTime(${str(text(first))}), 0)`
    default:
      throw new ValidationError(`Unsupported property operator '${op}'`, 'properties')
  }
}

/**
 * Where filters are evaluated: on an events row (default; person filters read the event's merged
 * person), or on a row of the persons table aliased `personsAlias` (e.g. 'p'), where only person
 * filters make sense.
 */
export interface PropertyScope {
  personsAlias?: string
}

const COHORT_TYPES = new Set(['cohort', 'static-cohort', 'precalculated-cohort'])

/** PostHog's cohort filter: {type: 'cohort', key: 'id', value: <id>}, negated by `negation` or 'not_in'. */
function cohortCondition(f: PropertyFilter, personId: string): string {
  const raw = Array.isArray(f.value) ? f.value[0] : f.value
  const id = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN
  if (!Number.isSafeInteger(id))
    throw new ValidationError('A cohort filter needs a cohort id as its value', 'properties')
  const negated = f.negation === true || f.operator === 'not_in'
  return `${personId} ${negated ? 'NOT IN' : 'IN'} COHORT ${id}`
}

/** Each value's condition; a list of values is any of them (all of them for the negative operators). */
function perValue(f: PropertyFilter, one: (v: Scalar) => string): string {
  const vs = values(f)
  if (vs.length <= 1) return one(vs[0] ?? null)
  const parts = vs.map(one)
  return NEGATIVE.has(f.operator ?? 'exact') ? and(parts) : or(parts)
}

function selectorPattern(text: string, key: string): string {
  try {
    return key === 'selector' ? selectorRegex(text) : tagNameRegex(text)
  } catch (err) {
    if (err instanceof InvalidSelector)
      throw new ValidationError(`Invalid selector '${text}': ${err.message}`, 'properties')
    throw err
  }
}

// PostHog's element filters (posthog/hogql/property.py, type 'element')
function elementCondition(f: PropertyFilter): string {
  const op = f.operator ?? 'exact'
  if (f.key === 'selector' || f.key === 'tag_name') {
    if (op !== 'exact' && op !== 'is_not') {
      throw new ValidationError(`Element ${f.key} filters take exact or is_not, not '${op}'`, 'properties')
    }
    return perValue(f, (v) => {
      const cond = `elements_chain =~ ${str(selectorPattern(text(v), f.key))}`
      return op === 'is_not' ? `not(${cond})` : cond
    })
  }
  if (f.key === 'href')
    return perValue(f, (v) => operatorCondition('elements_chain_href', { ...f, value: v }))
  if (f.key === 'text') {
    return perValue(
      f,
      (v) => `arrayExists(x -> ${operatorCondition('x', { ...f, value: v })}, elements_chain_texts)`,
    )
  }
  throw new ValidationError(`Unsupported element filter '${f.key}'`, 'properties')
}

function filterCondition(f: PropertyFilter, scope: PropertyScope): string {
  const type = f.type ?? 'event'
  if (COHORT_TYPES.has(type))
    return cohortCondition(f, scope.personsAlias !== undefined ? `${scope.personsAlias}.id` : 'person_id')
  if (scope.personsAlias !== undefined) {
    if (type !== 'person') {
      throw new ValidationError(`Only person property filters apply to persons, not '${type}'`, 'properties')
    }
    return operatorCondition(propertyField(f.key, `${scope.personsAlias}.`), f)
  }
  switch (type) {
    case 'event':
      return operatorCondition(propertyField(f.key), f)
    case 'person':
      return operatorCondition(propertyField(f.key, 'person.'), f)
    case 'event_metadata': {
      if (!METADATA.has(f.key) && !/^\$group_[0-4]$/.test(f.key)) {
        throw new ValidationError(`Unknown event field '${f.key}'`, 'properties')
      }
      return operatorCondition(f.key.startsWith('$') ? `\`${f.key}\`` : f.key, f)
    }
    case 'group': {
      const index = f.group_type_index
      if (index === null || index === undefined) {
        throw new ValidationError('Group property filters need group_type_index', 'properties')
      }
      // A group with no stored properties reads as all-missing: negative operators match it.
      const cond = operatorCondition(propertyField(f.key), f)
      const groups = (c: string) => `SELECT key FROM groups WHERE index = ${index} AND (${c})`
      const column = `\`$group_${index}\``
      if (NEGATIVE.has(f.operator ?? 'exact')) return `${column} NOT IN (${groups(`not(${cond})`)})`
      return `${column} IN (${groups(cond)})`
    }
    case 'hogql':
      return `(${f.key})`
    case 'element':
      return elementCondition(f)
    default:
      throw new ValidationError(`Unsupported property filter type '${type}'`, 'properties')
  }
}

function isGroup(x: PropertyGroup | PropertyFilter): x is PropertyGroup {
  return (
    Array.isArray((x as PropertyGroup).values) &&
    (x as PropertyGroup).type !== undefined &&
    ((x as PropertyGroup).type === 'AND' || (x as PropertyGroup).type === 'OR') &&
    !(x as PropertyFilter).key
  )
}

function groupCondition(g: PropertyGroup, scope: PropertyScope): string {
  const parts = g.values.map((v) => (isGroup(v) ? groupCondition(v, scope) : filterCondition(v, scope)))
  return g.type === 'OR' ? or(parts) : and(parts)
}

/** HogQL condition for a properties field (list = all must hold); undefined when there is none. */
export function propertiesCondition(props: Properties, scope: PropertyScope = {}): string | undefined {
  if (!props) return undefined
  if (Array.isArray(props)) {
    return props.length ? and(props.map((f) => filterCondition(f, scope))) : undefined
  }
  if (!props.values.length) return undefined
  return groupCondition(props, scope)
}

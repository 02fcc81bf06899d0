import { type Mapped, toImportEvent } from './events.ts'

// PostHog's CSV event export, row by row. The events table exports its `*` column as the event
// tuple (uuid, event, properties, timestamp, team_id, distinct_id, elements_chain, created_at)
// flattened into `*.<field>` columns, nested objects joined with dots (`*.properties.$browser`,
// `*.properties.$set.email`), beside the table's other columns (`event`, `person`, `timestamp`, ...).
// Batch exports write plain columns instead (`uuid`, `event`, `distinct_id`, `properties` as JSON
// text, `set`, `set_once`, `ip`, `elements`, `timestamp`, ...). Both are read here.

/** Where each column's value goes: a field of the record, or a path below `properties`. */
type Target = { field: string } | { property: string[] } | undefined

export interface CsvLayout {
  targets: Target[]
}

const FIELDS = new Set([
  'uuid',
  'event',
  'distinct_id',
  'timestamp',
  'properties',
  'set',
  'set_once',
  '$set',
  '$set_once',
  'ip',
  'elements',
  'elements_chain',
])

/** Reads the header. `*.x` (the full event) wins over a plain `x` column of the same name. */
export function csvLayout(header: string[]): CsvLayout {
  const names = header.map((h) => h.trim())
  const starred = new Set(names.filter((n) => n.startsWith('*.')).map((n) => n.slice(2)))
  const targets = names.map((raw): Target => {
    const isStar = raw.startsWith('*.')
    const name = isStar ? raw.slice(2) : raw
    if (!isStar && starred.has(name)) return undefined
    if (name.startsWith('properties.') && name.length > 'properties.'.length) {
      if (!isStar && [...starred].some((s) => s === 'properties' || s.startsWith('properties.'))) {
        return undefined
      }
      const path = name.slice('properties.'.length).split('.')
      // A column may not reach an object's prototype.
      return path.includes('__proto__') ? undefined : { property: path }
    }
    return FIELDS.has(name) ? { field: name } : undefined
  })
  return { targets }
}

/** True when the header names what an event needs (otherwise this is not an event export). */
export function layoutProblem(layout: CsvLayout): string | undefined {
  const fields = new Set(layout.targets.flatMap((t) => (t && 'field' in t ? [t.field] : [])))
  const missing = ['event', 'distinct_id', 'timestamp'].filter((f) => !fields.has(f))
  const hasIdInProperties = layout.targets.some(
    (t) => t && 'property' in t && t.property.length === 1 && t.property[0] === 'distinct_id',
  )
  const reallyMissing = missing.filter((f) => !(f === 'distinct_id' && hasIdInProperties))
  return reallyMissing.length > 0 ? `the header has no column for ${reallyMissing.join(', ')}` : undefined
}

/**
 * CSV loses the type of a flattened property: `true`/`false` (any case, as Python writes them) become
 * booleans, numbers written the way JSON writes them become numbers, JSON objects and arrays are
 * parsed, anything else stays text. An empty cell is no value.
 */
export function cellValue(s: string): unknown {
  if (s === '') return undefined
  const lower = s.toLowerCase()
  if (lower === 'true') return true
  if (lower === 'false') return false
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(s)) {
    const n = Number(s)
    if (Number.isFinite(n) && (Number.isSafeInteger(n) || !/^-?\d+$/.test(s))) return n
  }
  if ((s.startsWith('{') && s.endsWith('}')) || (s.startsWith('[') && s.endsWith(']'))) {
    try {
      return JSON.parse(s)
    } catch {}
  }
  return s
}

function setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = obj
  for (const key of path.slice(0, -1)) {
    const next = cur[key]
    if (typeof next !== 'object' || next === null || Array.isArray(next)) cur[key] = {}
    cur = cur[key] as Record<string, unknown>
  }
  cur[path[path.length - 1]!] = value
}

// Flattening writes a list as `.0`, `.1`, ...: an object with exactly those keys was a list.
function restoreArrays(v: unknown): unknown {
  if (typeof v !== 'object' || v === null) return v
  if (Array.isArray(v)) return v.map(restoreArrays)
  const o = v as Record<string, unknown>
  const keys = Object.keys(o)
  for (const k of keys) o[k] = restoreArrays(o[k])
  if (keys.length > 0 && keys.every((k, i) => k === String(i))) return keys.map((k) => o[k])
  return o
}

/** One data row to an event; `values` are the cells in header order. */
export function fromCsvRow(layout: CsvLayout, values: string[]): Mapped {
  if (values.length !== layout.targets.length) {
    return { error: `expected ${layout.targets.length} columns, found ${values.length}` }
  }
  const rec: Record<string, unknown> = {}
  const props: Record<string, unknown> = {}
  let flattened = false
  layout.targets.forEach((t, i) => {
    const cell = values[i]!
    if (!t) return
    if ('field' in t) {
      if (cell !== '') rec[t.field] = cell
      return
    }
    const v = cellValue(cell)
    if (v !== undefined) {
      setPath(props, t.property, v)
      flattened = true
    }
  })
  if (flattened) {
    const restored: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(props)) restored[k] = restoreArrays(v)
    if (rec.properties !== undefined) {
      try {
        const whole: unknown = JSON.parse(String(rec.properties))
        if (typeof whole === 'object' && whole !== null) rec.properties = { ...whole, ...restored }
      } catch {
        rec.properties = restored
      }
    } else {
      rec.properties = restored
    }
  }
  return toImportEvent(rec, JSON.stringify(values))
}

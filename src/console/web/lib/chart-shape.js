// Which chart a query result can be drawn as, from its columns, types and values.

const NUMERIC = /^(Nullable\()?(U?Int\d+|Float\d+|Decimal)/
const TEMPORAL = /^(Nullable\()?(Date|DateTime)/
const ISO = /^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/

function typeName(t) {
  if (Array.isArray(t)) return String(t[1] ?? '')
  return String(t ?? '')
}

function columnKind(types, rows, i) {
  const t = typeName(types?.[i])
  if (NUMERIC.test(t)) return 'number'
  if (TEMPORAL.test(t)) return 'time'
  const sample = rows
    .slice(0, 50)
    .map((r) => r[i])
    .filter((v) => v !== null && v !== undefined)
  if (!sample.length) return 'other'
  if (sample.every((v) => typeof v === 'number')) return 'number'
  if (sample.every((v) => typeof v === 'string' && ISO.test(v))) return 'time'
  if (sample.every((v) => typeof v === 'string')) return 'text'
  return 'other'
}

/** Epoch seconds of a date or date-time value (dates without a zone are read as UTC, as ClickHouse prints them). */
export function toEpochSeconds(v) {
  if (typeof v === 'number') return v
  const s = String(v)
  const iso = /^\d{4}-\d{2}-\d{2}$/.test(s)
    ? `${s}T00:00:00Z`
    : /[zZ]|[+-]\d{2}:?\d{2}$/.test(s)
      ? s.replace(' ', 'T')
      : `${s.replace(' ', 'T')}Z`
  return Date.parse(iso) / 1000
}

/**
 * The charts a result supports, best first: 'number' (one row, one numeric value), 'line' (a time
 * column and numeric columns), 'bar' (a text column and numeric columns, at most 200 rows).
 * @returns {{ kinds: string[], x: number|null, y: number[] }}
 */
export function chartShape(columns, types, rows) {
  const kinds = []
  if (!rows.length) return { kinds, x: null, y: [] }
  const k = columns.map((_, i) => columnKind(types, rows, i))
  const y = k.flatMap((kind, i) => (kind === 'number' ? [i] : []))
  if (rows.length === 1 && y.length >= 1 && columns.length <= 2) kinds.push('number')
  const time = k.indexOf('time')
  const text = k.indexOf('text')
  if (time >= 0 && y.length) kinds.push('line')
  if ((text >= 0 || time >= 0) && y.length && rows.length <= 200) kinds.push('bar')
  const x = kinds[0] === 'line' ? time : text >= 0 ? text : time >= 0 ? time : null
  return { kinds, x, y }
}

// Number and time formatting shared by the pages.

const nf = new Intl.NumberFormat('en')

/** 1234567 → "1,234,567"; non-numbers as text. */
export const num = (v) => (typeof v === 'number' && Number.isFinite(v) ? nf.format(v) : String(v ?? ''))

/** A short local date-time for an ISO string or epoch milliseconds. */
export function when(v) {
  if (v === null || v === undefined || v === '') return ''
  const d = new Date(v)
  if (Number.isNaN(d.getTime())) return String(v)
  return d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' })
}

/** Time of day with milliseconds, for the live tail. */
export function clock(v) {
  const d = new Date(v)
  if (Number.isNaN(d.getTime())) return String(v ?? '')
  return `${d.toLocaleTimeString('en-GB')}.${String(d.getMilliseconds()).padStart(3, '0')}`
}

/** A cell value as text: objects as JSON. */
export function cell(v) {
  if (v === null || v === undefined) return ''
  if (typeof v === 'object') return JSON.stringify(v)
  return String(v)
}

/** 0.4567 → "45.7%" */
export const pct = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)}%` : '–')

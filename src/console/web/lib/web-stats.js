// What the web analytics page shows, as plain data (no DOM, so the unit tests read it): the
// overview's figures and the breakdown tables of WebStatsTableQuery, each value beside its change
// from the previous period, coloured by whether the change is good (a lower bounce rate is).
import { num } from './format.js'

/** The overview's figures by key, in PostHog's words. */
const OVERVIEW_LABELS = {
  visitors: 'Visitors',
  views: 'Page views',
  sessions: 'Sessions',
  'session duration': 'Session duration',
  'bounce rate': 'Bounce rate',
}

/** 29 → "29s", 125 → "2m 5s", 3725 → "1h 2m" (PostHog's humanFriendlyDuration, to two units). */
export function duration(seconds) {
  if (!Number.isFinite(seconds)) return '–'
  const s = Math.round(seconds)
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? ` ${s % 60}s` : ''}`
  const m = Math.floor((s % 3600) / 60)
  return `${Math.floor(s / 3600)}h${m ? ` ${m}m` : ''}`
}

/** A percentage that is already times 100: 20 → "20%", 66.666… → "66.7%". */
export const percent = (v) => (Number.isFinite(v) ? `${Math.round(v * 10) / 10}%` : '–')

/** A value of an overview kind as text: unit, duration_s or percentage (already × 100). */
export function formatKind(kind, v) {
  if (v === null || v === undefined) return '–'
  if (kind === 'duration_s') return duration(v)
  if (kind === 'percentage') return percent(v)
  return num(Math.round(v * 100) / 100)
}

/**
 * A change from the previous period, or null when there is none to show (no previous value, or 0).
 * `pct` is whole percent; `good` says whether it is good news (an increase unless `increaseIsBad`),
 * null when nothing changed.
 */
export function change(pct, increaseIsBad = false) {
  if (pct === null || pct === undefined || !Number.isFinite(pct)) return null
  const up = pct > 0
  return {
    pct,
    direction: pct === 0 ? 'flat' : up ? 'up' : 'down',
    good: pct === 0 ? null : up !== !!increaseIsBad,
    text: `${pct > 0 ? '+' : ''}${pct}%`,
  }
}

/** The change of `cur` against `prev` in whole percent, as PostHog computes it (null without prev). */
export function pctChange(cur, prev) {
  if (cur === null || cur === undefined || prev === null || prev === undefined || prev === 0) return null
  return Math.round((100 * (cur - prev)) / prev)
}

/** WebOverviewQuery's items as tiles: label, shown value and change. */
export function overviewTiles(items) {
  return items.map((it) => ({
    key: it.key,
    label: OVERVIEW_LABELS[it.key] ?? it.key,
    value: formatKind(it.kind, it.value),
    previous: it.previous === null || it.previous === undefined ? null : formatKind(it.kind, it.previous),
    change: change(it.changeFromPreviousPct, !!it.isIncreaseBad),
  }))
}

/** How a WebStatsTableQuery column's values are shown: fractions as percentages, lower bounce is better. */
const COLUMN_KINDS = {
  bounce_rate: { kind: 'fraction', increaseIsBad: true },
  average_scroll_percentage: { kind: 'fraction' },
  scroll_gt80_percentage: { kind: 'fraction' },
  conversion_rate: { kind: 'fraction' },
  session_duration: { kind: 'duration_s' },
  avg_time_on_page: { kind: 'duration_s' },
}

// Helper columns of PostHog's tables that are not figures (the UI draws the fill as a bar).
const HIDDEN = new Set(['ui_fill_fraction', 'cross_sell'])

/** `context.columns.bounce_rate` → "Bounce rate"; the breakdown column is named by the breakdown. */
export function columnLabel(column, breakdownLabel = 'Value') {
  const name = String(column).replace(/^context\.columns\./, '')
  if (name === 'breakdown_value') return breakdownLabel
  const words = name.replace(/_/g, ' ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

function metricText(kind, v) {
  if (v === null || v === undefined) return '–'
  if (kind === 'fraction') return percent(Number(v) * 100)
  if (kind === 'duration_s') return duration(Number(v))
  return typeof v === 'number' ? num(Math.round(v * 100) / 100) : String(v)
}

/**
 * A WebStatsTableQuery answer as a table: `columns` name the cells (`context.columns.<name>`),
 * each metric cell is `[current, previous]` (previous null without compare) or a plain value.
 * Returns the headers and, per row, its cells as `{text, change}` (change null when none);
 * `fill` is the row's share of the first metric's largest value (for the bar behind the row).
 */
export function statsTable(columns, results, breakdownLabel) {
  const names = (columns ?? []).map((c) => String(c).replace(/^context\.columns\./, ''))
  const shown = names.flatMap((n, i) => (HIDDEN.has(n) ? [] : [i]))
  const fillAt = names.indexOf('ui_fill_fraction')
  const firstMetric = shown.find((i) => names[i] !== 'breakdown_value')
  const current = (v) => (Array.isArray(v) ? v[0] : v)
  const top = Math.max(0, ...(results ?? []).map((r) => Number(current(r[firstMetric])) || 0))
  return {
    headers: shown.map((i) => columnLabel(columns[i], breakdownLabel)),
    numeric: shown.map((i) => names[i] !== 'breakdown_value'),
    rows: (results ?? []).map((r) => ({
      fill: fillAt >= 0 ? Number(r[fillAt]) || 0 : top ? (Number(current(r[firstMetric])) || 0) / top : 0,
      cells: shown.map((i) => {
        const v = r[i]
        const spec = COLUMN_KINDS[names[i]] ?? { kind: 'number' }
        if (names[i] === 'breakdown_value')
          return { text: v === null || v === undefined || v === '' ? '(none)' : String(v), change: null }
        if (!Array.isArray(v)) return { text: metricText(spec.kind, v), change: null }
        const [cur, prev] = v
        return { text: metricText(spec.kind, cur), change: change(pctChange(cur, prev), spec.increaseIsBad) }
      }),
    })),
  }
}
